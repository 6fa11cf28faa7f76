//go:build !unix

package operator

import "os/exec"

// killGroupOnCancel leaves cmd's cancellation as it is here: there are no
// process groups to kill, so a timeout kills the planner process only.
func killGroupOnCancel(*exec.Cmd) {}
