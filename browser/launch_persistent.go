package browser

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/chromedp/chromedp/remote"
)

// StartupURL is the URL a Persistent Launch's Chrome opens its start-up tab
// on: a page of its own (a line of text naming browserop), so that the tab
// is told from anybody else's by its URL alone, as long as nobody navigated
// it, even when no launch record lists it (browserop stopped before writing
// one). Chrome takes no about:blank with a fragment from its command line.
const StartupURL = "data:text/plain,browserop"

// launchPersistent starts Chrome on profile detached from this process, so
// that it outlives it (a crash included), connects to it, and records it
// (LaunchRecordFileName). It starts the process itself rather than through
// chromedp, which kills a Chrome whose start fails or is cancelled: by then
// another process may use that Chrome (it holds the profile and carries
// launchTag), and this one may only have been frozen. So the start runs to
// its end on its own bound, whatever ctx does, and a failed start kills only
// a Chrome that never came up.
func launchPersistent(ctx context.Context, cfg Config, execPath, profile string, flags []flag) (*Browser, error) {
	// Looked at again right before the start: another process may have
	// started Chrome on the profile since (this one may have been
	// frozen), and a second Chrome would hand off to it, its port file
	// removed.
	if b, held, err := takeHeldProfile(ctx, cfg, profile); held {
		return b, err
	}
	// A file from an earlier Chrome names a port that no longer answers.
	portFile := filepath.Join(profile, ActivePortFileName)
	if err := os.Remove(portFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: remove the old %s: %v", ErrConfig, ActivePortFileName, err)
	}
	args := append(commandLine(append(flags, flag{launchTag, true})), StartupURL)
	cmd := exec.Command(execPath, args...)
	detach(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	// Reaped when it exits, whenever that is, so that it never stays a
	// zombie of this process.
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	// A wall-clock bound: a process frozen past it finds it over when it
	// wakes.
	deadline := time.Now().Add(persistentStartLimit)
	wsURL, err := waitActivePort(portFile, exited, deadline)
	if err != nil {
		abandonStart(cmd, profile, exited)
		return nil, err
	}
	b := &Browser{cfg: cfg, launched: true, dedicated: true, profile: profile, pid: cmd.Process.Pid, wsURL: wsURL}
	b.allocCtx, b.allocCancel = remote.NewAllocator(context.Background(), wsURL, remote.WithDialTimeout(10*time.Second))
	lctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
	defer cancel()
	if err := b.connect(lctx); err != nil {
		abandonStart(cmd, profile, exited)
		return nil, err
	}
	err = b.recordLaunch(lctx)
	if err == nil && ctx.Err() != nil {
		err = ctx.Err() // the caller gave up meanwhile
	}
	if err != nil {
		// The Chrome is up and answers: leave it running, as a crash here
		// would. Another process may already use it (it carries the
		// launch tag, and its pid is recorded as soon as known), and the
		// next launch attaches to it.
		_ = b.Disconnect()
		return nil, err
	}
	return b, nil
}

// commandLine turns flags into arguments. A later flag of the same name
// replaces an earlier one (an extra flag overrides a default); a false
// bool is left out.
func commandLine(flags []flag) []string {
	last := map[string]int{}
	for i, f := range flags {
		last[f.name] = i
	}
	var args []string
	for i, f := range flags {
		if last[f.name] != i {
			continue
		}
		if a := f.arg(); a != "" {
			args = append(args, a)
		}
	}
	return args
}

// waitActivePort waits until the Chrome just started writes its DevTools
// address to file, and returns it, or fails when the process exits or the
// deadline passes.
func waitActivePort(file string, exited <-chan struct{}, deadline time.Time) (string, error) {
	for {
		// Whole, not just there: Chrome writes the file in two lines.
		if wsURL, err := ReadActivePort(file); err == nil {
			return wsURL, nil
		}
		select {
		case <-exited:
			return "", fmt.Errorf("%w: Chrome exited before it wrote %s", ErrNoBrowser, ActivePortFileName)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("%w: Chrome wrote no %s within %v", ErrTimeout, ActivePortFileName, persistentStartLimit)
		}
	}
}

// abandonStart ends a persistent start that failed. The Chrome it started
// is killed only when it never came up: one that holds the profile and
// answers on its DevTools port may already be in use by another process,
// and runs on; the next launch attaches to it.
func abandonStart(cmd *exec.Cmd, profile string, exited <-chan struct{}) {
	select {
	case <-exited:
		return
	default:
	}
	if cameUp(profile, cmd.Process.Pid) {
		return
	}
	_ = cmd.Process.Kill()
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
	}
}

// cameUp reports whether the Chrome with pid holds profile and answers on
// the DevTools port it published there.
func cameUp(profile string, pid int) bool {
	if held, ok := profileInUse(profile); !ok || held != pid {
		return false
	}
	wsURL, err := ReadActivePort(filepath.Join(profile, ActivePortFileName))
	if err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	conn, err := remote.DialContext(ctx, wsURL)
	if err != nil {
		return false
	}
	_ = conn.Close()
	return true
}
