package browser

import (
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// chromeAlive reports whether pid is a running process and, on Linux, a
// Chrome (not a zombie) whose command line uses the profile dir: a pid that
// a crashed Chrome left as a zombie, or that another program reused, is not
// that Chrome.
func chromeAlive(pid int, dir string) bool {
	if pid <= 0 {
		return false
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	if err := p.Signal(syscall.Signal(0)); err != nil && !errors.Is(err, os.ErrPermission) {
		return false
	}
	if runtime.GOOS == "linux" && !liveChromeOn(pid, dir) {
		return false
	}
	return true
}

// waitChromeExit polls until the Chrome pid on dir is gone or the deadline
// passes, and reports whether it is gone.
func waitChromeExit(pid int, dir string, deadline time.Time) bool {
	for {
		if !chromeAlive(pid, dir) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// killLeftovers kills every process on the profile dir (KillProcessesOn).
func killLeftovers(dir string) { KillProcessesOn(dir) }

// ProcessesOn returns the pids of the processes whose command line has
// --user-data-dir=dir: a Chrome on the profile with all its helpers (which
// may have rewritten their argv into one space-separated string). Only
// Linux is supported (it reads /proc); elsewhere it returns nil.
func ProcessesOn(dir string) []int {
	if runtime.GOOS != "linux" || dir == "" {
		return nil
	}
	want := "--user-data-dir=" + dir
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		// Arguments are NUL-separated, or space-separated in one string;
		// the dir may itself hold spaces.
		joined := " " + strings.ReplaceAll(string(cmdline), "\x00", " ") + " "
		if strings.Contains(joined, " "+want+" ") {
			out = append(out, pid)
		}
	}
	return out
}

// KillProcessesOn sends SIGKILL to every process on the profile dir
// (ProcessesOn), looking again until a few looks in a row find none or two
// seconds pass: Chrome's helpers (zygote, network service) can outlive a
// killed main process and fork just as it dies. It returns how many
// processes it killed. The caller must own the profile: it kills whatever
// Chrome runs on it.
func KillProcessesOn(dir string) int {
	const (
		quietLooks = 3
		pause      = 10 * time.Millisecond
		limit      = 2 * time.Second
	)
	n := 0
	deadline := time.Now().Add(limit)
	for quiet := 0; quiet < quietLooks && time.Now().Before(deadline); time.Sleep(pause) {
		pids := ProcessesOn(dir)
		if len(pids) == 0 {
			quiet++
			continue
		}
		quiet = 0
		for _, pid := range pids {
			if p, err := os.FindProcess(pid); err == nil && p.Kill() == nil {
				n++
			}
		}
	}
	return n
}
