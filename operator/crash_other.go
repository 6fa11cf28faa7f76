//go:build !unix

package operator

import "os"

// killSelf ends the process at once, without deferred calls or cleanup.
func killSelf() {
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		_ = p.Kill()
	}
	os.Exit(137)
}

// stopSelf cannot stop the process here (there is no SIGSTOP): it says so
// and goes on from the pause point name at once.
func stopSelf(name string) {
	os.Stderr.WriteString("browserop: pause point " + name + " ignored: pausing needs SIGSTOP (Unix)\n")
}
