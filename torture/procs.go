package torture

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/internal/child"
)

// Build compiles browserop (./cmd/browserop of this module, without the
// race detector) into dir and returns the binary's path. The module is
// found from the go tool's view of the working directory.
func Build(ctx context.Context, dir string) (string, error) {
	out := filepath.Join(dir, "browserop")
	if err := child.Build(ctx, out); err != nil {
		return "", fmt.Errorf("torture: %w", err)
	}
	return out, nil
}

// proc is one browserop process of a seed.
type proc struct{ *child.Proc }

func startProc(bin, dir string, env []string, name string, args ...string) (*proc, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Dir = dir
	p, err := child.Start(cmd, name)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	return &proc{p}, nil
}

// kill ends the process (it may be stopped) and waits for it.
func (p *proc) kill() {
	if p.Alive() {
		p.Cmd.Process.Signal(syscall.SIGCONT)
		p.Cmd.Process.Kill()
		<-p.Done()
	}
}

var crashLine = regexp.MustCompile(`browserop: crash point ([a-z-]+)`)

// crashHit is the crash point the process killed itself at, or "".
func (p *proc) crashHit() string {
	if _, sig := p.Exit(); sig != syscall.SIGKILL {
		return ""
	}
	if m := crashLine.FindStringSubmatch(p.Stderr.String()); m != nil {
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
	out := strings.TrimSpace(p.Stdout.String())
	if out == "" || json.Unmarshal([]byte(out), &s) != nil {
		return s, false
	}
	return s, true
}

// describe is one line about how the process ended.
func (p *proc) describe() string {
	if p.Alive() {
		return p.Name + ": running"
	}
	code, sig := p.Exit()
	s := fmt.Sprintf("%s: ", p.Name)
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
	s += fmt.Sprintf(" in %s", p.Ended.Sub(p.Started).Round(10*time.Millisecond))
	return s
}

// browsersOn returns the pids of the processes on the profile: a Chrome
// with all its helpers.
func browsersOn(dir string) []int { return browser.ProcessesOn(dir) }

// killBrowsersOn SIGKILLs every process on the profile and returns how
// many it killed.
func killBrowsersOn(dir string) int { return browser.KillProcessesOn(dir) }
