package browser_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/browser/browsertest"
)

// persistentChildEnv makes the test binary a child that launches a
// Persistent Chrome on the profile it names and exits without closing it.
const persistentChildEnv = "BROWSEROP_TEST_PERSISTENT_CHILD"

// launchRecord mirrors the JSON of browser.LaunchRecordFileName.
type launchRecord struct {
	PID            int      `json:"pid"`
	StartupTargets []string `json:"startup_targets"`
}

// persistentProfile returns a fresh profile directory. Its cleanup kills
// every process still running on it (a Persistent Chrome outlives its
// Browser by design, and a failed test must not leak one), then removes it.
func persistentProfile(t *testing.T) string {
	t.Helper()
	browsertest.Executable(t) // skip early when there is no browser
	dir, err := os.MkdirTemp("", "browserop-test-persistent-")
	require.NoError(t, err)
	t.Cleanup(func() {
		browser.KillChromeOn(dir)
		if err := browsertest.RemoveAll(dir); err != nil {
			t.Errorf("%v", err)
		}
	})
	return dir
}

func persistentConfig(t *testing.T, dir string) browser.Config {
	t.Helper()
	cfg := browsertest.Config(dir)
	cfg.ExecPath = browsertest.Executable(t)
	cfg.Persistent = true
	return cfg
}

// launchPersistent launches a Persistent Chrome on dir, closed (stopped)
// when the test ends unless the test ended it first.
func launchPersistent(t *testing.T, dir string) *browser.Browser {
	t.Helper()
	b, err := browser.Launch(ctxT(t), persistentConfig(t, dir))
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// attachPerson is the person's own DevTools connection to the Chrome on
// dir, used to open, navigate and close tabs as the person would.
func attachPerson(t *testing.T, dir string) *browser.Browser {
	t.Helper()
	p, err := browser.Attach(ctxT(t), browser.Config{ProfileDir: dir, ActionTimeout: 10 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func readRecord(t *testing.T, dir string) launchRecord {
	t.Helper()
	path := filepath.Join(dir, browser.LaunchRecordFileName)
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var rec launchRecord
	require.NoError(t, json.Unmarshal(data, &rec))
	return rec
}

func ids(ts []browser.Target) []browser.TargetID {
	out := []browser.TargetID{}
	for _, t := range ts {
		out = append(out, t.ID)
	}
	return out
}

func requireNoRecord(t *testing.T, dir string) {
	t.Helper()
	_, err := os.Stat(filepath.Join(dir, browser.LaunchRecordFileName))
	require.ErrorIs(t, err, fs.ErrNotExist, "the launch record is removed with the browser")
}

// TestPersistentLeavesPersonsTab is seed 70 at its root: the person opens a
// tab in the Chrome that browserop launched; Others lists it (and nothing of
// browserop's), Disconnect leaves Chrome and the tab running, a new Launch
// reattaches to that Chrome, and Close stops it once the person's tab is gone.
func TestPersistentLeavesPersonsTab(t *testing.T) {
	s := newSite(t)
	ctx := ctxT(t)
	dir := persistentProfile(t)
	cfg := persistentConfig(t, dir)

	b := launchPersistent(t, dir)
	require.True(t, b.Launched())
	require.True(t, b.Dedicated())
	pid := browser.ProcessOf(b).Pid
	require.Equal(t, pid, browser.PIDOf(b))

	rec := readRecord(t, dir)
	require.Equal(t, pid, rec.PID)
	require.Len(t, rec.StartupTargets, 1, "Chrome starts with one tab, on StartupURL")
	startup := browser.TargetID(rec.StartupTargets[0])
	inv, err := b.Targets(ctx)
	require.NoError(t, err)
	st, ok := findTarget(inv, startup)
	require.True(t, ok)
	require.Equal(t, browser.StartupURL, st.URL)

	own, err := b.NewTab(ctx, s.URL+"/page")
	require.NoError(t, err)
	blank, err := b.NewTab(ctx, "")
	require.NoError(t, err)
	others, err := b.Others(ctx)
	require.NoError(t, err)
	require.Empty(t, others, "browserop's tabs and the startup tab are not the person's")

	person := attachPerson(t, dir)
	userURL := s.URL + "/page?person"
	userID, err := browser.RawCreate(person, userURL)
	require.NoError(t, err)
	others, err = b.Others(ctx)
	require.NoError(t, err)
	require.Equal(t, []browser.TargetID{userID}, ids(others))
	require.Equal(t, userURL, others[0].URL)

	require.NoError(t, b.Disconnect())
	require.NoError(t, b.Disconnect(), "Disconnect is idempotent")
	require.NoError(t, b.Close(), "Close after Disconnect does nothing")
	_, err = b.Targets(ctx)
	require.ErrorIs(t, err, browser.ErrBrowserGone)
	_, err = own.URL(ctx)
	require.ErrorIs(t, err, browser.ErrBrowserGone)

	require.True(t, browser.ChromeAlive(pid, dir), "Chrome keeps running after Disconnect")
	require.True(t, browser.ProfileRunning(dir))
	inv, err = person.Targets(ctx)
	require.NoError(t, err)
	ut, ok := findTarget(inv, userID)
	require.True(t, ok, "the person's tab survives Disconnect")
	require.Equal(t, userURL, ut.URL)
	require.True(t, inv.Has(own.ID()), "Disconnect closes no tab")
	require.Equal(t, pid, readRecord(t, dir).PID, "the record stays for the next run")

	// The next run reattaches to the same Chrome.
	again, err := browser.Launch(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = again.Close() })
	require.False(t, again.Launched())
	require.True(t, again.Dedicated())
	require.Equal(t, pid, browser.PIDOf(again))
	// A new connection owns nothing until the ledger proves it: the
	// operator adopts its tabs, and only the person's is left.
	require.NoError(t, again.Adopt(ctx, own.ID()))
	require.NoError(t, again.Adopt(ctx, blank.ID()))
	others, err = again.Others(ctx)
	require.NoError(t, err)
	require.Equal(t, []browser.TargetID{userID}, ids(others))

	// The person closes their tab: nothing of theirs is left.
	require.NoError(t, browser.RawCloseTarget(person, userID))
	require.Eventually(t, func() bool {
		others, err := again.Others(ctx)
		return err == nil && len(others) == 0
	}, 10*time.Second, 50*time.Millisecond)
	require.NoError(t, again.Close())
	require.False(t, browser.ChromeAlive(pid, dir), "Close stops the reattached Chrome")
	require.False(t, browser.ProfileRunning(dir))
	requireNoRecord(t, dir)
	require.NoError(t, again.Close(), "Close is idempotent")
	require.NoError(t, again.Disconnect(), "Disconnect after Close does nothing")
}

// TestPersistentOnlyOwnTabs: with only browserop's tabs, Others is empty
// and Close stops the Chrome it launched.
func TestPersistentOnlyOwnTabs(t *testing.T) {
	s := newSite(t)
	ctx := ctxT(t)
	dir := persistentProfile(t)
	b := launchPersistent(t, dir)
	pid := browser.PIDOf(b)

	for range 2 {
		_, err := b.NewTab(ctx, s.URL+"/page")
		require.NoError(t, err)
	}
	others, err := b.Others(ctx)
	require.NoError(t, err)
	require.Empty(t, others)

	require.NoError(t, b.Close())
	require.False(t, browser.ChromeAlive(pid, dir), "Close stops the launched Chrome")
	requireNoRecord(t, dir)
	require.NoError(t, b.Disconnect(), "Disconnect after Close does nothing")
	_, err = b.Others(ctx)
	require.ErrorIs(t, err, browser.ErrBrowserGone)
}

// TestPersistentDisown: a tab browserop hands to the person is theirs:
// Others lists it, and browserop can no longer act in or close it.
func TestPersistentDisown(t *testing.T) {
	s := newSite(t)
	ctx := ctxT(t)
	dir := persistentProfile(t)
	b := launchPersistent(t, dir)

	tab, err := b.NewTab(ctx, s.URL+"/page")
	require.NoError(t, err)
	kept, err := b.NewTab(ctx, s.URL+"/page")
	require.NoError(t, err)
	b.Disown(tab.ID())
	require.False(t, b.Owns(tab.ID()))
	require.True(t, b.Owns(kept.ID()))
	_, err = tab.URL(ctx)
	require.ErrorIs(t, err, browser.ErrTabGone, "the handed-over Tab is released")
	_, err = b.AttachOwned(ctx, tab.ID())
	require.ErrorIs(t, err, browser.ErrNotOwned)
	_, err = b.CloseTab(ctx, tab)
	require.ErrorIs(t, err, browser.ErrNotOwned)

	others, err := b.Others(ctx)
	require.NoError(t, err)
	require.Equal(t, []browser.TargetID{tab.ID()}, ids(others))
	require.Equal(t, s.URL+"/page", others[0].URL, "disowning neither closes nor navigates the tab")

	// Release keeps the id owned.
	kept.Release()
	others, err = b.Others(ctx)
	require.NoError(t, err)
	require.Equal(t, []browser.TargetID{tab.ID()}, ids(others))
}

// TestPersistentStartupTabNavigated: the about:blank tab Chrome opens at
// launch is not the person's until they navigate it somewhere.
func TestPersistentStartupTabNavigated(t *testing.T) {
	s := newSite(t)
	ctx := ctxT(t)
	dir := persistentProfile(t)
	b := launchPersistent(t, dir)
	startup := browser.TargetID(readRecord(t, dir).StartupTargets[0])

	others, err := b.Others(ctx)
	require.NoError(t, err)
	require.Empty(t, others)

	// The person types a URL into the startup tab. Their own connection
	// adopts it only to drive it the way a person would.
	person := attachPerson(t, dir)
	require.NoError(t, person.Adopt(ctx, startup))
	pt, err := person.AttachOwned(ctx, startup)
	require.NoError(t, err)
	_, err = pt.Navigate(ctx, s.URL+"/page?typed")
	require.NoError(t, err)

	others, err = b.Others(ctx)
	require.NoError(t, err)
	require.Equal(t, []browser.TargetID{startup}, ids(others))
}

// TestPersistentRefusesForeignChrome: a profile that a Chrome browserop did
// not launch holds is refused, with no launch record or with one that names
// another process; PrepareProfile does not run under that Chrome.
func TestPersistentRefusesForeignChrome(t *testing.T) {
	dir := persistentProfile(t)
	chrome := startChrome(t, dir)
	cfg := persistentConfig(t, dir)
	prefs := filepath.Join(dir, "Default", "Preferences")
	before, _ := os.ReadFile(prefs)

	t.Run("NoRecord", func(t *testing.T) {
		_, err := browser.Launch(ctxT(t), cfg)
		require.ErrorIs(t, err, browser.ErrConfig)
		require.ErrorContains(t, err, "in use")
	})
	t.Run("RecordOfAnotherPID", func(t *testing.T) {
		data, err := json.Marshal(launchRecord{PID: chrome.Process.Pid + 100000, StartupTargets: []string{}})
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, browser.LaunchRecordFileName), data, 0o600))
		_, err = browser.Launch(ctxT(t), cfg)
		require.ErrorIs(t, err, browser.ErrConfig)
		require.ErrorContains(t, err, "in use")
	})
	t.Run("BadRecord", func(t *testing.T) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, browser.LaunchRecordFileName), []byte("{"), 0o600))
		_, err := browser.Launch(ctxT(t), cfg)
		require.ErrorIs(t, err, browser.ErrConfig)
		require.ErrorContains(t, err, "in use")
	})
	require.False(t, browser.ProfileRunning(dir), "a Chrome browserop did not launch is not reattached to")
	after, _ := os.ReadFile(prefs)
	require.Equal(t, string(before), string(after), "the profile of a running Chrome is left alone")
	require.True(t, browser.ChromeAlive(chrome.Process.Pid, dir), "the foreign Chrome still runs")
}

// TestPersistentTaggedWithoutRecord: a Chrome that a Persistent Launch
// started, where browserop died before writing the launch record, carries
// the launch tag on its command line: the next Launch attaches to it and
// records it. Its start-up tab is unknown, so it counts as the person's
// and the Chrome is only disconnected from, never stopped unasked.
func TestPersistentTaggedWithoutRecord(t *testing.T) {
	dir := persistentProfile(t)
	chrome := startChrome(t, dir, "--browserop-persistent")
	ctx := ctxT(t)
	require.True(t, browser.ProfileRunning(dir))
	b, err := browser.Launch(ctx, persistentConfig(t, dir))
	require.NoError(t, err)
	require.True(t, b.Dedicated())
	require.False(t, b.Launched())
	require.Equal(t, chrome.Process.Pid, readRecord(t, dir).PID, "the Chrome is recorded now")
	require.True(t, b.Headless(), "read from its command line")
	others, err := b.Others(ctx)
	require.NoError(t, err)
	require.Len(t, others, 1, "the unknown start-up tab counts as the person's")
	require.NoError(t, b.Disconnect())
	require.True(t, browser.ChromeAlive(chrome.Process.Pid, dir))
}

// TestPersistentFailedConnectLeavesChrome (torture seed 242): a persistent
// launch whose Chrome came up and answered, but whose first command then
// failed (here: an action deadline no command can meet; in the torture run,
// an operator frozen in that command past its deadline), leaves that Chrome
// running. It carries the launch tag, so another process may already use
// it; the next launch attaches to it.
func TestPersistentFailedConnectLeavesChrome(t *testing.T) {
	ctx := ctxT(t)
	dir := persistentProfile(t)
	cfg := persistentConfig(t, dir)
	cfg.ActionTimeout = time.Nanosecond
	_, err := browser.Launch(ctx, cfg)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.True(t, browser.ProfileRunning(dir), "the Chrome that came up runs on")
	pid := readRecord(t, dir).PID
	require.True(t, browser.ChromeAlive(pid, dir), "its pid was recorded when it started")

	b, err := browser.Launch(ctx, persistentConfig(t, dir))
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	require.True(t, b.Dedicated())
	require.False(t, b.Launched(), "attached to the Chrome the failed launch left")
	require.Equal(t, pid, browser.PIDOf(b))
}

// TestPersistentConcurrentLaunches: processes that launch on one profile at
// once start one Chrome: the launch lock holds the others until it is
// recorded, and they attach to it. Without the lock a second Chrome would
// hand off to the first and its start remove the first one's
// DevToolsActivePort.
func TestPersistentConcurrentLaunches(t *testing.T) {
	ctx := ctxT(t)
	dir := persistentProfile(t)
	const n = 3
	bs := make([]*browser.Browser, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { bs[i], errs[i] = browser.Launch(ctx, persistentConfig(t, dir)) })
	}
	wg.Wait()
	launched := 0
	for i := range n {
		require.NoError(t, errs[i])
		t.Cleanup(func() { _ = bs[i].Disconnect() })
		if bs[i].Launched() {
			launched++
		}
		require.Equal(t, browser.PIDOf(bs[0]), browser.PIDOf(bs[i]), "one Chrome")
	}
	require.Equal(t, 1, launched)
	_, err := os.Stat(filepath.Join(dir, browser.ActivePortFileName))
	require.ErrorIs(t, err, fs.ErrNotExist, "no DevTools port")
	fi, err := os.Stat(filepath.Join(dir, browser.SocketFileName))
	require.NoError(t, err, "the relay socket is the running Chrome's")
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	for _, b := range bs {
		tab, err := b.NewTab(ctx, "")
		require.NoError(t, err, "every connection works")
		_, err = b.CloseTab(ctx, tab)
		require.NoError(t, err)
	}
}

// TestPersistentLaunchWaitsForLock: while another process holds the
// profile's launch lock, a launch starts nothing; it waits, and gives up
// with its caller. Once the lock is free it launches.
func TestPersistentLaunchWaitsForLock(t *testing.T) {
	dir := persistentProfile(t)
	release, ok, err := browser.HoldLaunchLock(dir)
	require.NoError(t, err)
	require.True(t, ok)
	short, cancel := context.WithTimeout(ctxT(t), 500*time.Millisecond)
	defer cancel()
	_, err = browser.Launch(short, persistentConfig(t, dir))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Empty(t, browser.ProcessesOn(dir), "nothing started while another launch holds the lock")

	release()
	b := launchPersistent(t, dir)
	require.True(t, b.Launched())
}

// TestPersistentLegacyRecord: a Chrome an earlier version launched on
// about:blank, recorded with its start-up tab's id and no start-up URL:
// that tab, still on about:blank, is browserop's.
func TestPersistentLegacyRecord(t *testing.T) {
	ctx := ctxT(t)
	dir := persistentProfile(t)
	chrome := startChrome(t, dir, "--browserop-persistent")
	p := attachPerson(t, dir)
	var inv browser.Inventory
	require.Eventually(t, func() bool {
		var err error
		inv, err = p.Targets(ctx)
		return err == nil && len(inv.Targets) == 1
	}, 10*time.Second, 50*time.Millisecond)
	rec := fmt.Sprintf(`{"pid":%d,"startup_targets":[%q],"launched_at":"2026-11-29T10:00:00Z"}`, chrome.Process.Pid, inv.Targets[0].ID.Raw())
	require.NoError(t, os.WriteFile(filepath.Join(dir, browser.LaunchRecordFileName), []byte(rec), 0o600))
	require.NoError(t, p.Close())

	b, err := browser.Launch(ctx, persistentConfig(t, dir))
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Disconnect() })
	others, err := b.Others(ctx)
	require.NoError(t, err)
	require.Empty(t, others, "the recorded about:blank start-up tab is browserop's")
}

// TestPersistentTaggedStartupTab: a tagged Chrome without a launch record
// (browserop stopped before writing one) whose tab is still on StartupURL:
// that tab is the start-up tab, browserop's, by its URL alone, and a
// Chrome with nothing else in it is stopped. The person's blank tab is
// theirs. (TestPersistentStartupTabNavigated: a start-up tab the person
// navigated is theirs.)
func TestPersistentTaggedStartupTab(t *testing.T) {
	ctx := ctxT(t)
	dir := persistentProfile(t)
	chrome := startChrome(t, dir, "--browserop-persistent", browser.StartupURL)
	b, err := browser.Launch(ctx, persistentConfig(t, dir))
	require.NoError(t, err)
	require.False(t, b.Launched())
	require.Eventually(t, func() bool {
		others, err := b.Others(ctx)
		return err == nil && len(others) == 0
	}, 10*time.Second, 50*time.Millisecond, "the tab on StartupURL is the start-up tab")

	p := attachPerson(t, dir)
	blank, err := browser.RawCreate(p, "about:blank")
	require.NoError(t, err)
	others, err := b.Others(ctx)
	require.NoError(t, err)
	require.Equal(t, []browser.TargetID{blank}, ids(others), "the person's blank tab is theirs")
	require.NoError(t, browser.RawCloseTarget(p, blank))
	require.NoError(t, p.Close())
	require.Eventually(t, func() bool {
		others, err := b.Others(ctx)
		return err == nil && len(others) == 0
	}, 10*time.Second, 50*time.Millisecond, "the person closed their tab")

	stopped, err := b.StopIfAlone()
	require.NoError(t, err)
	require.True(t, stopped, "nothing but the start-up tab")
	require.Eventually(t, func() bool { return !browser.ChromeAlive(chrome.Process.Pid, dir) }, 10*time.Second, 50*time.Millisecond)
}

// TestPersistentOutlivesProcess: a Persistent Chrome survives the exit of
// the process that launched it (no parent-death signal, own session), and
// the next process reattaches to it and can stop it.
func TestPersistentOutlivesProcess(t *testing.T) {
	ctx := ctxT(t)
	dir := persistentProfile(t)

	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), persistentChildEnv+"="+dir)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "child: %s", out)

	rec := readRecord(t, dir)
	require.True(t, browser.ChromeAlive(rec.PID, dir), "Chrome outlives the process that launched it")
	require.True(t, browser.TaggedLaunch(rec.PID), "its command line carries the launch tag")
	require.True(t, browser.ProfileRunning(dir))

	b, err := browser.Launch(ctx, persistentConfig(t, dir))
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	require.False(t, b.Launched())
	require.True(t, b.Dedicated())
	require.Equal(t, rec.PID, browser.PIDOf(b))
	others, err := b.Others(ctx)
	require.NoError(t, err)
	require.Empty(t, others, "the startup tab is browserop's")

	require.NoError(t, b.Close())
	require.False(t, browser.ChromeAlive(rec.PID, dir))
	requireNoRecord(t, dir)
}

// persistentChild launches a Persistent Chrome on dir and exits without
// closing or disconnecting it, as a crashing browserop would.
func persistentChild(dir string) int {
	exe, err := browser.FindExecutable(os.Getenv("BROWSEROP_TEST_CHROME"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cfg := browsertest.Config(dir)
	cfg.ExecPath = exe
	cfg.Persistent = true
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := browser.Launch(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// TestPersistentStopIfAlone: StopIfAlone lists the tabs again on the
// connection that would send Browser.close, right before sending it: a
// person's tab opened after the caller's own check keeps Chrome running;
// with nothing but browserop's tabs Chrome stops.
func TestPersistentStopIfAlone(t *testing.T) {
	s := newSite(t)
	ctx := ctxT(t)

	t.Run("a person's tab keeps it", func(t *testing.T) {
		dir := persistentProfile(t)
		b := launchPersistent(t, dir)
		pid := browser.PIDOf(b)
		_, err := b.NewTab(ctx, s.URL+"/page")
		require.NoError(t, err)
		others, err := b.Others(ctx)
		require.NoError(t, err)
		require.Empty(t, others, "the caller's check finds nothing of the person's")
		person := attachPerson(t, dir)
		userID, err := browser.RawCreate(person, s.URL+"/page?late")
		require.NoError(t, err)
		stopped, err := b.StopIfAlone()
		require.NoError(t, err)
		require.False(t, stopped)
		require.True(t, browser.ChromeAlive(pid, dir), "Chrome runs on")
		inv, err := person.Targets(ctx)
		require.NoError(t, err)
		require.True(t, inv.Has(userID), "the person's tab is intact")
		_, err = b.Others(ctx)
		require.ErrorIs(t, err, browser.ErrBrowserGone, "browserop is disconnected")
	})
	t.Run("nothing but browserop's", func(t *testing.T) {
		dir := persistentProfile(t)
		b := launchPersistent(t, dir)
		pid := browser.PIDOf(b)
		_, err := b.NewTab(ctx, s.URL+"/page")
		require.NoError(t, err)
		stopped, err := b.StopIfAlone()
		require.NoError(t, err)
		require.True(t, stopped)
		require.False(t, browser.ChromeAlive(pid, dir))
		requireNoRecord(t, dir)
		// The relay's log says when Chrome started and how it ended: a
		// Chrome that went away is explained there.
		logFile := filepath.Join(dir, browser.RelayLogFileName)
		require.Eventually(t, func() bool {
			raw, _ := os.ReadFile(logFile)
			return strings.Contains(string(raw), fmt.Sprintf("Chrome (pid %d) ended", pid))
		}, 15*time.Second, 50*time.Millisecond, "the relay logs how Chrome ended")
		raw, err := os.ReadFile(logFile)
		require.NoError(t, err)
		require.Contains(t, string(raw), fmt.Sprintf("relay: started Chrome (pid %d)", pid))
		fi, err := os.Stat(logFile)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	})
}

// TestPersistentRelayLogNeverBlocks: a FIFO or a link where the relay's
// log should be is passed over: the launch goes on, without a log.
func TestPersistentRelayLogNeverBlocks(t *testing.T) {
	for name, plant := range map[string]func(path string) error{
		"a FIFO": func(path string) error { return syscall.Mkfifo(path, 0o600) },
		"a link": func(path string) error { return os.Symlink("/dev/null", path) },
	} {
		t.Run(name, func(t *testing.T) {
			dir := persistentProfile(t)
			require.NoError(t, os.Chmod(dir, 0o700))
			require.NoError(t, plant(filepath.Join(dir, browser.RelayLogFileName)))
			done := make(chan struct{})
			go func() {
				defer close(done)
				b := launchPersistent(t, dir)
				_, err := b.StopIfAlone()
				require.NoError(t, err)
			}()
			select {
			case <-done:
			case <-time.After(60 * time.Second):
				t.Fatal("the launch hung on the relay's log")
			}
			fi, err := os.Lstat(filepath.Join(dir, browser.RelayLogFileName))
			require.NoError(t, err)
			require.False(t, fi.Mode().IsRegular(), "what was planted is left as it was")
		})
	}
}
