// Package child runs browserop as a child process, for the process-level
// end-to-end tests (cmd/browserop) and the torture harness: it builds the
// binary, gives it a clean environment, and keeps each process's output and
// how it ended.
package child

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Package is the import path of the browserop command.
const Package = "github.com/browserop/browserop/cmd/browserop"

// Build compiles browserop (Package, without the race detector) to the file
// out. The module is found from the go tool's view of the working
// directory. A missing go tool or a failed build is an error with the
// compiler's output. The go tool is the first on PATH: under `go test`,
// the test's own toolchain, which go test puts first.
func Build(ctx context.Context, out string) error {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("no go tool: %w", err)
	}
	cmd := exec.CommandContext(ctx, goTool, "build", "-o", out, Package)
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build: %v\n%s", err, b.String())
	}
	return nil
}

// Env is this process's environment without the variables set names and
// without any XDG_* or BROWSEROP_* variable, plus set: a child sees only
// the installation it is given (set names HOME to give it its own).
func Env(set map[string]string) []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := set[k]; ok || strings.HasPrefix(k, "XDG_") || strings.HasPrefix(k, "BROWSEROP_") {
			continue
		}
		out = append(out, kv)
	}
	for k, v := range set {
		out = append(out, k+"="+v)
	}
	return out
}

// Buffer is a bytes.Buffer safe for a process's writer goroutine and the
// reader watching it.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p; it never fails.
func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String is everything written so far.
func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Proc is one child process and its output so far.
type Proc struct {
	Name           string
	Cmd            *exec.Cmd
	Stdout, Stderr *Buffer
	Started        time.Time
	// Ended and State are set once Done is closed.
	Ended time.Time
	State *os.ProcessState

	done chan struct{}
}

// Start starts cmd as the process called name, collecting its standard
// output and error, and waits for it in the background. An error is one
// from exec.Cmd.Start.
func Start(cmd *exec.Cmd, name string) (*Proc, error) {
	p := &Proc{Name: name, Cmd: cmd, Stdout: &Buffer{}, Stderr: &Buffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.Stdout, p.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p.Started = time.Now()
	go func() {
		cmd.Wait()
		p.State = cmd.ProcessState
		p.Ended = time.Now()
		close(p.done)
	}()
	return p, nil
}

// Done is closed when the process has ended.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Alive reports whether the process still runs.
func (p *Proc) Alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Wait waits at most d; false when the process is still running.
func (p *Proc) Wait(d time.Duration) bool {
	select {
	case <-p.done:
		return true
	case <-time.After(d):
		return false
	}
}

// Exit is the exit code of an ended process, or -1 and the signal that
// ended it.
func (p *Proc) Exit() (code int, sig syscall.Signal) {
	ws := p.State.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		return -1, ws.Signal()
	}
	return ws.ExitStatus(), 0
}
