package torture

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/browserop/browserop/browser"
)

// Build compiles browserop (./cmd/browserop of this module, without the
// race detector) into dir and returns the binary's path. The module is
// found from the go tool's view of the working directory.
func Build(ctx context.Context, dir string) (string, error) {
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goTool); err != nil {
		if goTool, err = exec.LookPath("go"); err != nil {
			return "", fmt.Errorf("torture: no go tool: %w", err)
		}
	}
	out := filepath.Join(dir, "browserop")
	cmd := exec.CommandContext(ctx, goTool, "build", "-o", out, "github.com/browserop/browserop/cmd/browserop")
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("torture: go build: %v\n%s", err, b.String())
	}
	return out, nil
}

// lockedBuffer collects a process's output while it runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// proc is one browserop process.
type proc struct {
	name           string
	cmd            *exec.Cmd
	stdout, stderr *lockedBuffer
	done           chan struct{}
	state          *os.ProcessState
	started        time.Time
	ended          time.Time
}

func startProc(bin, dir string, env []string, name string, args ...string) (*proc, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Dir = dir
	p := &proc{name: name, cmd: cmd, stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.stdout, p.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p.started = time.Now()
	go func() {
		cmd.Wait()
		p.state = cmd.ProcessState
		p.ended = time.Now()
		close(p.done)
	}()
	return p, nil
}

func (p *proc) alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// wait waits at most d; false when the process is still running.
func (p *proc) wait(d time.Duration) bool {
	select {
	case <-p.done:
		return true
	case <-time.After(d):
		return false
	}
}

// kill ends the process (it may be stopped) and waits for it.
func (p *proc) kill() {
	if p.alive() {
		p.cmd.Process.Signal(syscall.SIGCONT)
		p.cmd.Process.Kill()
		<-p.done
	}
}

// exit is the exit code, or -1 and the signal that ended the process.
func (p *proc) exit() (int, syscall.Signal) {
	ws := p.state.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		return -1, ws.Signal()
	}
	return ws.ExitStatus(), 0
}

var crashLine = regexp.MustCompile(`browserop: crash point ([a-z-]+)`)

// crashHit is the crash point the process killed itself at, or "".
func (p *proc) crashHit() string {
	if _, sig := p.exit(); sig != syscall.SIGKILL {
		return ""
	}
	if m := crashLine.FindStringSubmatch(p.stderr.String()); m != nil {
		return m[1]
	}
	return ""
}

// passSummary is the part of `run --json` the harness reads.
type passSummary struct {
	Outcome     string         `json:"outcome"`
	HardStop    string         `json:"hard_stop"`
	Generation  int64          `json:"generation"`
	Counts      map[string]int `json:"counts"`
	NeedsPerson []string       `json:"needs_person"`
}

func (p *proc) summary() (passSummary, bool) {
	var s passSummary
	out := strings.TrimSpace(p.stdout.String())
	if out == "" || json.Unmarshal([]byte(out), &s) != nil {
		return s, false
	}
	return s, true
}

// describe is one line about how the process ended.
func (p *proc) describe() string {
	if p.alive() {
		return p.name + ": running"
	}
	code, sig := p.exit()
	s := fmt.Sprintf("%s: ", p.name)
	if sig != 0 {
		s += "died: " + sig.String()
		if c := p.crashHit(); c != "" {
			s += " at crash point " + c
		}
	} else {
		s += fmt.Sprintf("exit %d", code)
	}
	if sum, ok := p.summary(); ok {
		s += " outcome " + sum.Outcome
		if sum.HardStop != "" {
			s += " (" + sum.HardStop + ")"
		}
		if sum.Generation > 0 {
			s += fmt.Sprintf(" gen %d", sum.Generation)
		}
		if len(sum.Counts) > 0 {
			s += fmt.Sprintf(" %v", sum.Counts)
		}
	}
	s += fmt.Sprintf(" in %s", p.ended.Sub(p.started).Round(10*time.Millisecond))
	return s
}

// browsersOn returns the pids of the processes on the profile: a Chrome
// with all its helpers.
func browsersOn(dir string) []int { return browser.ProcessesOn(dir) }

// killBrowsersOn SIGKILLs every process on the profile and returns how
// many it killed.
func killBrowsersOn(dir string) int { return browser.KillProcessesOn(dir) }

// childEnv is the harness's environment without HOME, XDG and BROWSEROP_*
// variables, plus set.
func childEnv(set map[string]string) []string {
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
