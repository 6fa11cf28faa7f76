//go:build unix

package operator

import (
	"os"
	"os/signal"
	"syscall"
)

// killSelf kills the process at once (SIGKILL): no deferred call, no
// cleanup, like a power cut.
func killSelf() {
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
}

// stopSelf stops the process (SIGSTOP) at the pause point name and returns
// once it is sent SIGCONT.
func stopSelf(name string) {
	cont := make(chan os.Signal, 1)
	signal.Notify(cont, syscall.SIGCONT)
	defer signal.Stop(cont)
	os.Stderr.WriteString("browserop: pause point " + name + "\n")
	syscall.Kill(os.Getpid(), syscall.SIGSTOP)
	<-cont
}
