package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/browserop/browserop/internal/atomicfile"
)

// StartupURL is the URL a Persistent Launch's Chrome opens its start-up tab
// on: a page of its own (a line of text naming browserop), so that the tab
// is told from anybody else's by its URL alone, as long as nobody navigated
// it, even when no launch record lists it (browserop stopped before writing
// one). Chrome takes no about:blank with a fragment from its command line.
const StartupURL = "data:text/plain,browserop"

// persistentStartLimit bounds a persistent launch's start (the relay and
// Chrome, the socket, the first connection, the launch record), which runs
// to its end even when the caller gives up. It is measured on this
// process's clock: a process frozen past it finds it over when it wakes.
const persistentStartLimit = 60 * time.Second

// startupWait bounds the wait for the tab that Chrome opens at startup to
// show in the inventory.
const startupWait = 5 * time.Second

// launchTag is a switch on the command line of a Chrome that a Persistent
// Launch starts (Chrome ignores switches it does not know). It tells that
// Chrome from any other on the profile when a crash left no launch record.
const launchTag = "browserop-persistent"

// taggedLaunch reports whether pid's command line carries launchTag
// (Linux; elsewhere it cannot tell and says no).
func taggedLaunch(pid int) bool {
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	for _, arg := range strings.Split(string(cmdline), "\x00") {
		if arg == "--"+launchTag {
			return true
		}
	}
	return false
}

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
	// What the relay writes to stderr (a Go panic above all) goes to a log
	// in the profile: a relay that died takes Chrome with it, and that
	// must be explainable.
	if logf, lerr := openRelayLog(profile); lerr == nil {
		cmd.Stderr = logf
		defer logf.Close()
	}
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

// LaunchRecordFileName is the file in the profile directory where a
// Persistent Launch records the Chrome it started: its process id (written
// as soon as the process starts) and its start-up tab. A later Launch with
// Persistent reattaches to that Chrome only while the record names the
// process that holds the profile.
const LaunchRecordFileName = "browserop-launch.json"

// launchRecord is the content of LaunchRecordFileName. The target ids are
// raw: the file stays in the 0700 profile directory, like Chrome's own
// state, and is never logged.
type launchRecord struct {
	PID            int      `json:"pid"`
	StartupTargets []string `json:"startup_targets"`
	// StartupURL is the URL the start-up tab opened on (StartupURL); a tab
	// still there is browserop's, whatever its id. Empty in the record of
	// a Chrome an earlier version launched on about:blank: there, the
	// recorded ids say which about:blank tab is the start-up tab.
	StartupURL string    `json:"startup_url,omitempty"`
	LaunchedAt time.Time `json:"launched_at"`
}

// readLaunchRecord reads the launch record of the profile dir.
func readLaunchRecord(dir string) (launchRecord, error) {
	var rec launchRecord
	data, err := os.ReadFile(filepath.Join(dir, LaunchRecordFileName))
	if err != nil {
		return rec, err
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		return rec, fmt.Errorf("%s: %w", LaunchRecordFileName, err)
	}
	return rec, nil
}

// writeLaunchRecord replaces the launch record of the profile dir
// atomically, with mode 0600.
func writeLaunchRecord(dir string, rec launchRecord) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, LaunchRecordFileName), data, 0o600)
}

// removeLaunchRecord removes the launch record of the profile dir when it
// still names pid: a record that a later launch wrote is not this one's.
func removeLaunchRecord(dir string, pid int) error {
	rec, err := readLaunchRecord(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err == nil && rec.PID != pid {
		return nil
	}
	if err := os.Remove(filepath.Join(dir, LaunchRecordFileName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// recordLaunch runs right after a Persistent launch connects: it takes a
// complete inventory and writes the launch record again (launchPersistent
// wrote it with the pid alone), with the ids of the tabs on StartupURL, for
// the record. Whether a tab is the start-up tab is told by its URL (ours),
// not by these ids: the person may navigate it, and a navigated tab that
// came back to a blank page is still theirs.
func (b *Browser) recordLaunch(ctx context.Context) error {
	if b.pid <= 0 {
		return errors.New("record launch: no browser process")
	}
	// Chrome opens its start-up tab around the time it first answers on
	// its pipe, so it may not be listed yet.
	var startup []Target
	deadline := time.Now().Add(startupWait)
	for {
		inv, err := b.Targets(ctx)
		if err != nil {
			return fmt.Errorf("record launch: %w", err)
		}
		if !inv.Complete {
			return errors.New("record launch: inventory is not complete")
		}
		startup = startup[:0]
		for _, t := range inv.Targets {
			if t.URL == StartupURL {
				startup = append(startup, t)
			}
		}
		if len(startup) > 0 || time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("record launch: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	rec := launchRecord{PID: b.pid, StartupURL: StartupURL, LaunchedAt: time.Now().UTC()}
	for _, t := range startup {
		rec.StartupTargets = append(rec.StartupTargets, t.ID.Raw())
	}
	if err := writeLaunchRecord(b.profile, rec); err != nil {
		return fmt.Errorf("%w: write %s: %v", ErrConfig, LaunchRecordFileName, err)
	}
	return nil
}
