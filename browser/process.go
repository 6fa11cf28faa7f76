package browser

import (
	"bytes"
	"errors"
	"os"
	"runtime"
	"strconv"
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

// killLeftovers kills every process whose command line has
// --user-data-dir=dir, looking again until a few passes in a row find none:
// Chrome's helpers (zygote, network service) can outlive a killed main
// process and fork just as it dies. Only Linux is supported (it reads
// /proc); elsewhere it does nothing. Callers must own the profile: it kills
// whatever Chrome runs on it.
func killLeftovers(dir string) {
	if runtime.GOOS != "linux" || dir == "" {
		return
	}
	const (
		quietPasses = 3
		pause       = 10 * time.Millisecond
		limit       = 2 * time.Second
	)
	deadline := time.Now().Add(limit)
	for quiet := 0; quiet < quietPasses && time.Now().Before(deadline); time.Sleep(pause) {
		if killProcessesUsing(dir) == 0 {
			quiet++
		} else {
			quiet = 0
		}
	}
}

// killProcessesUsing sends SIGKILL to the processes whose command line has
// --user-data-dir=dir and returns how many it found.
func killProcessesUsing(dir string) int {
	want := []byte("--user-data-dir=" + dir)
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	self := os.Getpid()
	n := 0
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		for arg := range bytes.SplitSeq(cmdline, []byte{0}) {
			if bytes.Equal(arg, want) {
				if p, err := os.FindProcess(pid); err == nil {
					_ = p.Kill()
				}
				n++
				break
			}
		}
	}
	return n
}
