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
)

// StartupURL is the URL a Persistent Launch's Chrome opens its start-up tab
// on: a page of its own (a line of text naming browserop), so that the tab
// is told from anybody else's by its URL alone, as long as nobody navigated
// it, even when no launch record lists it (browserop stopped before writing
// one). Chrome takes no about:blank with a fragment from its command line.
const StartupURL = "data:text/plain,browserop"

// LaunchLockFileName is the file in the profile directory that a
// Persistent Launch locks from its last look at the profile until its
// Chrome is recorded, so that no two processes start Chrome on one profile
// at once: a second Chrome hands off to the first and exits, and its start
// removes the first one's DevToolsActivePort. The lock goes with the
// process that holds it, a crash included.
const LaunchLockFileName = "browserop-launch.lock"

// launchLockWait bounds the wait for another process's launch on the same
// profile: its start, connection and record.
const launchLockWait = persistentStartLimit + 10*time.Second

// launchPersistent starts Chrome on profile detached from this process, so
// that it outlives it (a crash included), connects to it, and records it
// (LaunchRecordFileName). It starts the process itself rather than through
// chromedp, which kills a Chrome whose start fails or is cancelled: by then
// another process may use that Chrome (it holds the profile and carries
// launchTag), and this one may only have been frozen. So the start runs to
// its end on its own bound, whatever ctx does, and a failed start kills only
// a Chrome that never came up.
func launchPersistent(ctx context.Context, cfg Config, execPath, profile string, flags []flag) (*Browser, error) {
	lock, err := lockLaunch(ctx, profile)
	if err != nil {
		return nil, err
	}
	defer lock.unlock()
	// Looked at again under the lock: another process may have started
	// Chrome on the profile since (this one may have been frozen).
	if b, held, err := takeHeldProfile(ctx, cfg, profile); held {
		return b, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err // nothing started yet
	}
	// A file from an earlier version's Chrome names a port that no
	// longer answers.
	portFile := filepath.Join(profile, ActivePortFileName)
	if err := os.Remove(portFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: remove the old %s: %v", ErrConfig, ActivePortFileName, err)
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("%w: find this program to start the DevTools relay: %v", ErrNoBrowser, err)
	}
	// Chrome gets no port: the relay (this program again) starts it on
	// its DevTools pipe and takes clients on a socket only this uid can
	// reach (relay.go).
	args := append(append([]string{execPath}, persistentArgs(flags)...), StartupURL)
	cmd := exec.Command(self, args...)
	cmd.Env = append(os.Environ(), relayEnv+"="+profile)
	said, tell, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("%w: start: %v", ErrNoBrowser, err)
	}
	cmd.Stdout = tell
	detach(cmd)
	err = cmd.Start()
	_ = tell.Close()
	if err != nil {
		_ = said.Close()
		return nil, fmt.Errorf("%w: start: %v", ErrNoBrowser, err)
	}
	start := watchRelay(said)
	// Reaped when it exits, whenever that is, so that it never stays a
	// zombie of this process.
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	// A bound of its own, not the caller's.
	deadline := time.Now().Add(persistentStartLimit)
	pid := 0
	var recordErr error
	err = start.wait(deadline, func(p int) {
		pid = p
		// The pid at once: a later launch recognizes this Chrome by it
		// (the launch tag says the same, but only where a command line
		// can be read).
		recordErr = writeLaunchRecord(profile, launchRecord{PID: pid, StartupURL: StartupURL, LaunchedAt: time.Now().UTC()})
	})
	if err == nil && recordErr != nil {
		err = fmt.Errorf("%w: write %s: %v", ErrConfig, LaunchRecordFileName, recordErr)
		killStarted(cmd.Process)
	}
	if err == nil {
		// A Chrome that found the profile held hands off and exits, and
		// its relay with it; one that answers and holds it is this one.
		if holder, held := profileInUse(profile); held && holder != pid {
			err = fmt.Errorf("%w: another Chrome (pid %d) holds the profile", ErrNoBrowser, holder)
		}
	}
	if err != nil {
		abandonStart(cmd, pid, profile, exited)
		return nil, err
	}
	b := &Browser{cfg: cfg, launched: true, dedicated: true, profile: profile, pid: pid, relay: true}
	b.allocCtx, b.allocCancel = NewRelayAllocator(context.Background(), profile)
	lctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
	defer cancel()
	if err := b.connect(lctx); err != nil {
		abandonStart(cmd, pid, profile, exited)
		return nil, fmt.Errorf("%w: %w", ErrNoBrowser, err)
	}
	err = b.recordLaunch(lctx)
	if err == nil && ctx.Err() != nil {
		err = ctx.Err() // the caller gave up meanwhile
	}
	if err != nil {
		// The Chrome is up and answers: leave it running, as a crash here
		// would. Another process may already use it, and the next launch
		// attaches to it.
		_ = b.Disconnect()
		return nil, err
	}
	return b, nil
}

// persistentArgs is Chrome's command line under the relay, but for the
// executable and the start-up URL: the flags, the DevTools pipe, and the
// launch tag last.
func persistentArgs(flags []flag) []string {
	return commandLine(append(flags, flag{"remote-debugging-pipe", true}, flag{launchTag, true}))
}

// lockLaunch takes the profile's launch lock, waiting while another
// process launches Chrome on it.
func lockLaunch(ctx context.Context, profile string) (*launchLock, error) {
	path := filepath.Join(profile, LaunchLockFileName)
	deadline := time.Now().Add(launchLockWait)
	for {
		l, ok, err := tryLock(path)
		if err != nil {
			return nil, fmt.Errorf("%w: lock %s: %v", ErrConfig, LaunchLockFileName, err)
		}
		if ok {
			return l, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%w: another process has been launching Chrome on %s for over %v", ErrTimeout, profile, launchLockWait)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// commandLine turns flags into arguments, as chromedp does: a flag named
// again keeps its first place and takes the last value (an extra flag
// overrides a default); a false bool is left out.
func commandLine(flags []flag) []string {
	var order []string
	value := map[string]flag{}
	for _, f := range flags {
		if _, ok := value[f.name]; !ok {
			order = append(order, f.name)
		}
		value[f.name] = f
	}
	var args []string
	for _, name := range order {
		if a := value[name].arg(); a != "" {
			args = append(args, a)
		}
	}
	return args
}

// abandonStart ends a persistent start that failed. The relay it started
// and its Chrome (pid, 0 when the relay never named it) are killed, with
// Chrome's helpers, only when it never came up: one that holds the
// profile and takes clients on its relay socket may already be in use by
// another process, and runs on; the next launch attaches to it.
func abandonStart(cmd *exec.Cmd, pid int, profile string, exited <-chan struct{}) {
	select {
	case <-exited:
	default:
		if cameUp(profile, pid) {
			return
		}
		killStarted(cmd.Process)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
		}
	}
	if pid > 0 {
		_ = removeLaunchRecord(profile, pid)
	}
}

// cameUp reports whether the Chrome with pid holds profile and its relay
// takes clients there: all that another process needs to attach to it.
// It does not ask that Chrome anything, so a wait that outlived its bound
// (this process frozen meanwhile) cannot make it say no.
func cameUp(profile string, pid int) bool {
	if pid <= 0 {
		return false
	}
	if holder, held := profileInUse(profile); !held || holder != pid {
		return false
	}
	return relaySocketThere(profile)
}
