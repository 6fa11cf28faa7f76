package browser_test

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/browser/browsertest"
)

// findTarget returns the inventory entry for id.
func findTarget(inv browser.Inventory, id browser.TargetID) (browser.Target, bool) {
	for _, t := range inv.Targets {
		if t.ID == id {
			return t, true
		}
	}
	return browser.Target{}, false
}

// TestUserTabUntouched: a tab the person opened has no Tab value: it cannot
// be attached, navigated, typed into or closed, and everything browserop
// does in its own tabs leaves it as it was.
func TestUserTabUntouched(t *testing.T) {
	s := newSite(t)
	b := shared.Browser(t)
	ctx := ctxT(t)
	userURL := s.URL + "/page?mine"
	userID, err := browser.RawCreate(b, userURL)
	require.NoError(t, err)
	t.Cleanup(func() { _ = browser.RawCloseTarget(b, userID) })

	inv, err := b.Targets(ctx)
	require.NoError(t, err)
	require.True(t, inv.Complete)
	ut, ok := findTarget(inv, userID)
	require.True(t, ok)
	require.False(t, ut.Owned)

	_, err = b.AttachOwned(ctx, userID)
	require.ErrorIs(t, err, browser.ErrNotOwned)

	tab, err := b.NewTab(ctx, s.URL+"/page")
	require.NoError(t, err)
	_, err = tab.Fill(ctx, "#t", "typed in my own tab")
	require.NoError(t, err)
	_, err = tab.ClickOnceAndWait(ctx, "#go")
	require.NoError(t, err)

	rcpt, err := b.CloseTab(ctx, tab)
	require.NoError(t, err)
	require.Equal(t, browser.CloseReceipt{Sent: true, Confirmed: true}, rcpt)
	_, err = tab.URL(ctx)
	require.ErrorIs(t, err, browser.ErrTabGone)

	inv, err = b.Targets(ctx)
	require.NoError(t, err)
	require.True(t, inv.Complete)
	require.False(t, inv.Has(tab.ID()), "the closed owned tab is absent from a complete inventory")
	ut, ok = findTarget(inv, userID)
	require.True(t, ok, "the person's tab is still there")
	require.Equal(t, userURL, ut.URL, "and was never navigated")
	require.False(t, ut.Owned)

	// Closing twice does not touch anything else.
	_, err = b.CloseTab(ctx, tab)
	require.ErrorIs(t, err, browser.ErrNotOwned)
}

// TestTabGoneMidAction: a tab closed behind browserop's back, or one that
// crashes, ends a pending wait with ErrTabGone instead of a hang.
func TestTabGoneMidAction(t *testing.T) {
	s := newSite(t)
	b := shared.Browser(t)
	ctx := ctxT(t)

	t.Run("ClosedByPerson", func(t *testing.T) {
		tab, err := b.NewTab(ctx, s.URL+"/page")
		require.NoError(t, err)
		errc := make(chan error, 1)
		start := time.Now()
		go func() { errc <- tab.WaitVisible(ctx, "#never", 30*time.Second) }()
		time.Sleep(300 * time.Millisecond)
		require.NoError(t, browser.RawCloseTarget(b, tab.ID()))
		select {
		case err := <-errc:
			require.ErrorIs(t, err, browser.ErrTabGone)
			require.Less(t, time.Since(start), 10*time.Second)
		case <-time.After(15 * time.Second):
			t.Fatal("wait did not end when the tab closed")
		}
		_, err = tab.Navigate(ctx, s.URL+"/page")
		require.ErrorIs(t, err, browser.ErrTabGone)
		rcpt, err := b.CloseTab(ctx, tab)
		require.ErrorIs(t, err, browser.ErrTabGone)
		require.False(t, rcpt.Sent)
	})
	t.Run("Crashed", func(t *testing.T) {
		tab, err := b.NewTab(ctx, s.URL+"/page")
		require.NoError(t, err)
		t.Cleanup(func() { _, _ = b.CloseTab(context.Background(), tab) })
		errc := make(chan error, 1)
		go func() { errc <- tab.WaitVisible(ctx, "#never", 30*time.Second) }()
		time.Sleep(300 * time.Millisecond)
		browser.CrashTab(tab)
		select {
		case err := <-errc:
			require.ErrorIs(t, err, browser.ErrTabGone)
		case <-time.After(15 * time.Second):
			t.Fatal("wait did not end when the tab crashed")
		}
	})
	t.Run("Released", func(t *testing.T) {
		tab, err := b.NewTab(ctx, s.URL+"/page")
		require.NoError(t, err)
		tab.Release()
		_, err = tab.URL(ctx)
		require.ErrorIs(t, err, browser.ErrTabGone)
		inv, err := b.Targets(ctx)
		require.NoError(t, err)
		require.True(t, inv.Has(tab.ID()), "releasing never closes the tab")
		again, err := b.AttachOwned(ctx, tab.ID())
		require.NoError(t, err)
		u, err := again.URL(ctx)
		require.NoError(t, err)
		require.Equal(t, s.URL+"/page", u)
		_, err = b.CloseTab(ctx, again)
		require.NoError(t, err)
	})
}

// TestBrowserKilledMidAction: Chrome dying under a pending action ends it
// with ErrBrowserGone, and every later call fails fast the same way.
func TestBrowserKilledMidAction(t *testing.T) {
	s := newSite(t)
	b := browsertest.Launch(t)
	ctx := ctxT(t)
	tab, err := b.NewTab(ctx, s.URL+"/page")
	require.NoError(t, err)

	errc := make(chan error, 1)
	go func() { errc <- tab.WaitVisible(ctx, "#never", 30*time.Second) }()
	time.Sleep(300 * time.Millisecond)
	require.NoError(t, browser.ProcessOf(b).Kill())
	select {
	case err := <-errc:
		require.ErrorIs(t, err, browser.ErrBrowserGone)
	case <-time.After(15 * time.Second):
		t.Fatal("wait did not end when the browser died")
	}
	select {
	case <-b.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done did not close")
	}
	_, err = b.NewTab(ctx, s.URL)
	require.ErrorIs(t, err, browser.ErrBrowserGone)
	_, err = b.Targets(ctx)
	require.ErrorIs(t, err, browser.ErrBrowserGone)
	_, err = tab.Count(ctx, "p")
	require.ErrorIs(t, err, browser.ErrBrowserGone)
	require.NoError(t, b.Close())
	require.NoError(t, b.Close(), "Close is idempotent")

	// Relaunch on the same profile after the crash: the stale lock of the
	// dead process does not block it, and the new browser works.
	cfg := browsertest.Config(b.ProfileDir())
	cfg.ExecPath = browsertest.Executable(t)
	again, err := browser.Launch(ctx, cfg)
	require.NoError(t, err)
	defer again.Close()
	inv, err := again.Targets(ctx)
	require.NoError(t, err)
	require.False(t, inv.Has(tab.ID()), "a restarted browser has none of the old tabs")
	tab2, err := again.NewTab(ctx, s.URL+"/page")
	require.NoError(t, err)
	n, err := tab2.Count(ctx, "p.p")
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.NoError(t, again.Close())
}

// startChrome runs a Chrome that browserop did not launch, as a person's
// would be, with a DevTools port on loopback, on about:blank or on the URL
// given as the last of extra, and returns its command.
func startChrome(t *testing.T, dir string, extra ...string) *exec.Cmd {
	t.Helper()
	exe := browsertest.Executable(t)
	url := "about:blank"
	if n := len(extra); n > 0 && !strings.HasPrefix(extra[n-1], "--") {
		url, extra = extra[n-1], extra[:n-1]
	}
	args := append([]string{
		"--headless", "--remote-debugging-port=0", "--user-data-dir=" + dir,
		"--no-first-run", "--no-default-browser-check", "--disable-gpu",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
	}, extra...)
	if os.Geteuid() == 0 {
		args = append(args, "--no-sandbox")
	}
	cmd := exec.Command(exe, append(args, url)...)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	_ = os.Remove(filepath.Join(dir, browser.ActivePortFileName))
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { stopChrome(t, cmd) })
	// Chrome prints the address when the port is open.
	sc := bufio.NewScanner(stderr)
	deadline := time.After(30 * time.Second)
	found := make(chan struct{})
	go func() {
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "DevTools listening on") {
				close(found)
				break
			}
		}
		for sc.Scan() {
		}
	}()
	select {
	case <-found:
	case <-deadline:
		t.Fatal("chrome did not open its DevTools port")
	}
	for {
		// Whole, not just there: Chrome writes the file in two lines.
		if _, err := browser.ReadActivePort(filepath.Join(dir, browser.ActivePortFileName)); err == nil {
			return cmd
		}
		select {
		case <-deadline:
			t.Fatal("chrome did not write DevToolsActivePort")
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// stopChrome kills the Chrome startChrome started and every helper on its
// profile: a killed browser's helpers otherwise go on writing to it.
func stopChrome(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if cmd.ProcessState == nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	for _, a := range cmd.Args {
		if dir, ok := strings.CutPrefix(a, "--user-data-dir="); ok {
			browser.KillChromeOn(dir)
		}
	}
}

// TestAttach: attaching by DevToolsActivePort file and by URL, Close of an
// attached Browser closes no tab (checked from a second connection), and a
// browser restarted on the same profile can be attached again.
func TestAttach(t *testing.T) {
	s := newSite(t)
	dir := persistentProfile(t) // its cleanup stops Chrome's helpers before removing it
	ctx := ctxT(t)
	chrome := startChrome(t, dir)

	cfg := browsertest.Config(dir)
	a, err := browser.Attach(ctx, cfg)
	require.NoError(t, err)
	require.False(t, a.Launched())

	port, err := browser.ReadActivePort(filepath.Join(dir, browser.ActivePortFileName))
	require.NoError(t, err)
	u := strings.Replace(port, "ws://", "http://", 1)
	u = u[:strings.Index(u, "/devtools")]
	byURL, err := browser.Attach(ctx, browser.Config{DevToolsURL: u, ActionTimeout: 10 * time.Second})
	require.NoError(t, err)
	defer byURL.Close()

	// The person's tab, opened over a third connection.
	userURL := s.URL + "/page?person"
	userID, err := browser.RawCreate(byURL, userURL)
	require.NoError(t, err)

	tab, err := a.NewTab(ctx, s.URL+"/page")
	require.NoError(t, err)
	_, err = tab.Fill(ctx, "#t", "attached")
	require.NoError(t, err)
	owned := tab.ID()

	inv, err := byURL.Targets(ctx)
	require.NoError(t, err)
	require.True(t, inv.Has(owned))
	ot, _ := findTarget(inv, owned)
	require.False(t, ot.Owned, "ownership is per Browser")

	require.NoError(t, a.Close())
	require.NoError(t, a.Close())
	_, err = tab.URL(ctx)
	require.ErrorIs(t, err, browser.ErrBrowserGone)

	inv, err = byURL.Targets(ctx)
	require.NoError(t, err)
	require.True(t, inv.Complete)
	ut, ok := findTarget(inv, userID)
	require.True(t, ok, "detaching closed the person's tab")
	require.Equal(t, userURL, ut.URL)
	require.True(t, inv.Has(owned), "detaching closes no tab, not even an owned one")

	// A new connection owns nothing until the ledger says so.
	again, err := browser.Attach(ctx, cfg)
	require.NoError(t, err)
	_, err = again.AttachOwned(ctx, owned)
	require.ErrorIs(t, err, browser.ErrNotOwned)
	require.NoError(t, again.Adopt(ctx, owned))
	tab2, err := again.AttachOwned(ctx, owned)
	require.NoError(t, err)
	v, err := tab2.Value(ctx, "#t")
	require.NoError(t, err)
	require.Equal(t, "attached", v, "re-attached to the same live tab")
	require.NoError(t, again.Close())
	require.NoError(t, byURL.Close())

	// Restart the browser on the same profile: the old tabs are gone, and
	// attaching works again through the new DevToolsActivePort.
	stopChrome(t, chrome)
	_, err = browser.Attach(ctx, cfg)
	require.ErrorIs(t, err, browser.ErrNoBrowser, "a stale DevToolsActivePort does not attach")
	startChrome(t, dir)
	re, err := browser.Attach(ctx, cfg)
	require.NoError(t, err)
	defer re.Close()
	inv, err = re.Targets(ctx)
	require.NoError(t, err)
	require.True(t, inv.Complete)
	require.False(t, inv.Has(owned))
	require.ErrorIs(t, re.Adopt(ctx, owned), browser.ErrTabGone)
	tab3, err := re.NewTab(ctx, s.URL+"/page")
	require.NoError(t, err)
	_, err = re.CloseTab(ctx, tab3)
	require.NoError(t, err)
}

// TestLaunchCommandLine checks the real command line of a launched Chrome:
// the dedicated profile, the DevTools pipe and no port (any local user
// could reach one), and none of the flags that would re-submit forms or
// log the profile out.
func TestLaunchCommandLine(t *testing.T) {
	cfg := browsertest.Config(t.TempDir())
	cfg.ExecPath = browsertest.Executable(t)
	cfg.DevToolsPort = false
	b, err := browser.Launch(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", browser.ProcessOf(b).Pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	args := strings.Split(string(raw), "\x00")
	has := func(prefix string) bool {
		for _, a := range args {
			if strings.HasPrefix(a, prefix) {
				return true
			}
		}
		return false
	}
	for _, want := range []string{"--user-data-dir=" + b.ProfileDir(), "--remote-debugging-pipe",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"} {
		require.True(t, has(want), "missing %s in %q", want, args)
	}
	for _, bad := range []string{"--disable-prompt-on-repost", "--password-store", "--use-mock-keychain", "--remote-debugging-port", "--enable-automation"} {
		require.False(t, has(bad), "forbidden %s in %q", bad, args)
	}
	st, err := os.Stat(b.ProfileDir())
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), st.Mode().Perm())
	_, err = os.Stat(filepath.Join(b.ProfileDir(), browser.ActivePortFileName))
	require.ErrorIs(t, err, fs.ErrNotExist, "no DevTools port")
}

func TestLaunchRefusesForbiddenFlags(t *testing.T) {
	for _, f := range []string{"--disable-prompt-on-repost", "--password-store=basic", "--use-mock-keychain", "--user-data-dir=/tmp/x", "--remote-debugging-address=0.0.0.0", "bare"} {
		cfg := browsertest.Config(t.TempDir())
		cfg.ExtraFlags = []string{f}
		_, err := browser.Launch(context.Background(), cfg)
		require.ErrorIs(t, err, browser.ErrConfig, f)
	}
}

func TestLaunchRefusesProfileInUse(t *testing.T) {
	b := shared.Browser(t)
	for _, persistent := range []bool{false, true} {
		// The shared browser has no launch record: a Persistent launch
		// does not take it over either.
		cfg := browsertest.Config(b.ProfileDir())
		cfg.Persistent = persistent
		_, err := browser.Launch(context.Background(), cfg)
		require.ErrorIs(t, err, browser.ErrConfig)
		require.ErrorContains(t, err, "in use")
	}
}
