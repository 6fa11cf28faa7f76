package torture

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// Load is the busy machine a torture run can add beside its operators:
// users run browserop on laptops that are doing other work, and some bugs
// (seed 7056's late click) need a starved renderer or a slow process to
// show. The hogs are separate processes, so the kernel shares the cores
// between them and the operators, the browsers and the harness as it would
// on a busy laptop.
type Load struct {
	// CPU is how many processes spin on a core each.
	CPU int `json:"cpu"`
	// IO, when true, adds one process that writes and fsyncs 8 MiB files
	// in a loop (the ledger's fsyncs then wait behind it).
	IO bool `json:"io"`
}

// String is the load as the summary line gives it: "none" or e.g. "cpu4+io".
func (l Load) String() string {
	switch {
	case l.CPU == 0 && !l.IO:
		return "none"
	case !l.IO:
		return fmt.Sprintf("cpu%d", l.CPU)
	case l.CPU == 0:
		return "io"
	}
	return fmt.Sprintf("cpu%d+io", l.CPU)
}

// startLoad starts the hogs of l under dir and returns their pids and a
// function that stops them (every one, with its process group) and waits
// for them; calling it again does nothing.
func startLoad(ctx context.Context, l Load, dir string) ([]int, func(), error) {
	var cmds []*exec.Cmd
	stop := func() {
		for _, c := range cmds {
			syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
		}
		for _, c := range cmds {
			c.Wait()
		}
	}
	start := func(script string) error {
		c := exec.CommandContext(ctx, "/bin/sh", "-c", script)
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := c.Start(); err != nil {
			return fmt.Errorf("start a load process: %w", err)
		}
		cmds = append(cmds, c)
		return nil
	}
	// Each hog also ends by itself once this process is gone (killed
	// before it could stop them): it spins on "is my parent alive".
	parent := os.Getpid()
	for range l.CPU {
		if err := start(fmt.Sprintf("while kill -0 %d 2>/dev/null; do :; done", parent)); err != nil {
			stop()
			return nil, nil, err
		}
	}
	if l.IO {
		d, err := os.MkdirTemp(dir, "torture-io-load-")
		if err != nil {
			stop()
			return nil, nil, fmt.Errorf("io load: %w", err)
		}
		f := filepath.Join(d, "fill")
		if err := start(fmt.Sprintf("while kill -0 %d 2>/dev/null; do dd if=/dev/zero of=%q bs=1M count=8 conv=fsync 2>/dev/null; rm -f %q; done", parent, f, f)); err != nil {
			stop()
			os.RemoveAll(d)
			return nil, nil, err
		}
		prev := stop
		stop = func() { prev(); os.RemoveAll(d) }
	}
	var pids []int
	for _, c := range cmds {
		pids = append(pids, c.Process.Pid)
	}
	var once sync.Once
	return pids, func() { once.Do(stop) }, nil
}

// loadSettleTime lets the hogs get going before the first seed starts.
const loadSettleTime = 200 * time.Millisecond
