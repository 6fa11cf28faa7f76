// Package rig holds what the test rigs (wpsite, mwsite) share: their
// servers as child processes in a group of their own, and one site per
// test binary, started on first use.
package rig

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Server is a long-running child process (mariadbd, php -S) with its output
// in a log file under the site's directory.
type Server struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error // how it ended, once done is closed
}

// StartServer starts cmd as a server whose standard output and error go to
// the file logPath, in a process group of its own that dies with the test
// binary (on Linux).
func StartServer(name string, cmd *exec.Cmd, logPath string) (*Server, error) {
	f, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	defer f.Close()
	cmd.Stdout, cmd.Stderr = f, f
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	s := &Server{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		s.err = cmd.Wait()
		close(s.done)
	}()
	return s, nil
}

// Exited returns an error saying the server ended, with the tail of its
// log, or nil while it runs.
func (s *Server) Exited() error {
	select {
	case <-s.done:
		return fmt.Errorf("%s exited (%v): %s", s.name, s.err, Tail(s.log, 1500))
	default:
		return nil
	}
}

// Stop ends the server and every process of its group (PHP's workers):
// SIGTERM to the whole group while its leader still runs, then SIGKILL after
// grace. The site's data is throwaway, so nothing waits for a
// clean shutdown longer than that.
func (s *Server) Stop(grace time.Duration) {
	select {
	case <-s.done:
		return
	default:
	}
	signalGroup(s.cmd, syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(grace):
		signalGroup(s.cmd, syscall.SIGKILL)
		<-s.done
	}
}

// Tail returns the last n bytes of the file at path, for error messages.
func Tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(bytes.TrimSpace(b))
}
