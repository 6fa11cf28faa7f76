package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/errcode"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/operator"
	"github.com/browserop/browserop/sites"
)

// cmdLogin opens a visible browser on the dedicated profile at a site, so
// the person signs in once; browserop then uses that session. It returns
// when someone is signed in, the browser is closed, or the timeout passes.
func cmdLogin(ctx context.Context, e *env, args []string) error {
	fs := e.flags("login")
	siteName := fs.String("site", "", "the site to sign in to (default: the only or first configured site)")
	timeout := fs.Duration("timeout", 15*time.Minute, "how long to wait for the sign-in")
	headless := fs.Bool("headless", false, "no visible window: sign in over the DevTools port login prints (the default where there is no display)")
	if _, err := parseChecked(fs, args, noArgs(fs)); err != nil {
		return err
	}
	cfg, db, err := e.open(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	site, err := configuredSite(cfg, *siteName, "--site")
	if err != nil {
		return err
	}
	bc, err := cfg.ForBrowser(e.environ)
	if err != nil {
		return err
	}
	if bc.DevToolsURL != "" || bc.DevToolsActivePortFile != "" {
		return fmt.Errorf("%w: login launches the dedicated profile; sign in directly in the browser you attach to", errcode.ErrUsage)
	}
	if err := preflight(bc); err != nil {
		return err
	}
	noDisplay := !*headless && lacksDisplay(e.goos, e.environ)
	bc.Headless = *headless || noDisplay
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	b, err := loginBrowser(ctx, bc)
	if err != nil {
		return connectError(bc, err)
	}
	// Login's tabs are recorded in the tab ledger (operator.Probe): the
	// sign-in tab, shown to the person in a window, is theirs and never
	// closed by browserop (recorded kept); the tab that asks the site who signed in
	// is a probe tab, closed with proof or kept as the cleanup preference
	// says. A Chrome started for login alone stops with it, and every tab
	// in it.
	probe := operator.NewProbe(db, b, ledger.PurposeLogin, profileKey(bc), nil)
	defer func() {
		if left := operator.LeftOpen(probe.Finish(ctx)); left != "" {
			fmt.Fprintln(e.stdout, clean(left))
		}
		if !b.Dedicated() {
			b.Close()
			return
		}
		// The Chrome `run` or `serve` left running stays, with the
		// person's tabs. A headless one login started itself stops once
		// nothing of the person's is open.
		if b.Launched() {
			b.StopIfAlone()
			return
		}
		b.Disconnect()
	}()
	shown, err := probe.Open(ctx, site.Name(), site.Origins()[0])
	if err != nil {
		return err
	}
	if !b.Headless() {
		// In a window, the person's to close. A headless Chrome's tab is
		// seen only through DevTools while the sign-in lasts: it is a
		// probe tab, under the cleanup preference like the others.
		if err := probe.Shown(ctx, shown); err != nil {
			return err
		}
	}
	open := site.OpenHome
	if lp, ok := site.(interface {
		OpenLogin(context.Context, *browser.Tab) (int, error)
	}); ok {
		open = lp.OpenLogin
	}
	if _, err := open(ctx, shown); err != nil {
		return err
	}
	if b.Headless() {
		if noDisplay {
			fmt.Fprintln(e.stdout, "There is no display here (DISPLAY and WAYLAND_DISPLAY are unset), so Chrome runs without a window.")
		}
		printDevToolsHelp(e, bc.ProfileDir, site)
	} else {
		fmt.Fprintf(e.stdout, "Sign in to %s in the browser window (profile %s).\n", site.Name(), bc.ProfileDir)
	}
	fmt.Fprintln(e.stdout, `If the site offers "Remember me" or "Keep me signed in", tick it: browserop starts its browser again for each run, and a session that lasts only as long as the browser is lost then.`)
	fmt.Fprintf(e.stdout, "browserop waits until you are signed in (at most %s; Ctrl-C to stop).\n", *timeout)
	who, err := waitSignedIn(ctx, b, shown, site, func(ctx context.Context) (*browser.Tab, error) {
		return probe.Open(ctx, site.Name(), site.Origins()[0])
	}, 2*time.Second)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("%w: nobody signed in to %s within %s", errcode.ErrUsage, site.Name(), *timeout)
		}
		return err
	}
	fmt.Fprintf(e.stdout, "signed in to %s as @%s; browserop will act as this account\n", site.Name(), clean(who))
	return nil
}

// probeQuiet is how long the tab the person signs in with must have been
// quiet (no page loading or submitted) before a second tab asks the site
// who is signed in.
const probeQuiet = 5 * time.Second

// waitSignedIn waits, checking every tick, until someone is signed in to
// site and returns who. It never disturbs the sign-in: an adapter whose
// identity is a plain read of the page is read in the person's tab
// itself, sending nothing to the site; a second tab (opened with newTab) opens
// the identity page only while the person's tab has been quiet for
// probeQuiet, because a request of browserop's that carries the session
// cookie of before the sign-in, answered while the sign-in's own POST is
// in flight, can make the site start a new anonymous session over the one
// just signed in (MediaWiki does).
func waitSignedIn(ctx context.Context, b *browser.Browser, shown *browser.Tab, site sites.Adapter, newTab func(context.Context) (*browser.Tab, error), every time.Duration) (string, error) {
	inPlace := site.ReadsIdentityInPlace()
	tick := time.NewTicker(every)
	defer tick.Stop()
	var probe *browser.Tab
	for {
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-b.Done():
			return "", fmt.Errorf("%w: the browser was closed before anyone signed in to %s", errcode.ErrUsage, site.Name())
		case <-shown.Done():
			return "", fmt.Errorf("%w: the sign-in window was closed before anyone signed in to %s; run browserop login again", errcode.ErrUsage, site.Name())
		case <-tick.C:
		}
		quiet := shown.Quiet(probeQuiet)
		if inPlace && shown.Quiet(0) {
			if o, err := shown.Origin(ctx); err == nil && slices.Contains(site.Origins(), o) {
				if who, err := readIdentityNow(ctx, site, shown); err == nil && who != "" {
					return who, nil
				}
			}
		}
		if !quiet {
			continue
		}
		if probe == nil || probe.Err() != nil {
			// The first check, or the person closed the checking tab.
			p, err := newTab(ctx)
			if err != nil {
				continue
			}
			probe = p
		}
		if _, err := site.OpenHome(ctx, probe); err != nil {
			continue
		}
		if who, err := site.Identity(ctx, probe); err == nil && who != "" {
			return who, nil
		}
	}
}

// readIdentityNow reads who is signed in on tab's page with a short
// deadline: the person's page is read as it is, never waited on.
func readIdentityNow(ctx context.Context, site sites.Adapter, tab *browser.Tab) (string, error) {
	rctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	return site.Identity(rctx, tab)
}

// lacksDisplay reports whether a visible window cannot open: on Linux and
// the BSDs, neither DISPLAY nor WAYLAND_DISPLAY is set (an SSH session, a
// server). macOS and Windows always have a display.
func lacksDisplay(goos string, environ []string) bool {
	if goos == "darwin" || goos == "windows" {
		return false
	}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if (k == "DISPLAY" || k == "WAYLAND_DISPLAY") && v != "" {
			return false
		}
	}
	return true
}

// printDevToolsHelp says how to reach a windowless Chrome to sign in: its
// relay socket, which only this uid can open, forwarded over SSH, and
// Chrome's remote inspector.
func printDevToolsHelp(e *env, profile string, site sites.Adapter) {
	sock := filepath.Join(profile, browser.SocketFileName)
	host, _ := os.Hostname()
	if host == "" {
		host = "this-machine"
	}
	user := "you"
	for _, kv := range e.environ {
		if v, ok := strings.CutPrefix(kv, "USER="); ok && v != "" {
			user = v
		}
	}
	fmt.Fprintf(e.stdout, `Chrome (profile %s) takes DevTools only on the socket %s,
which only your user (%s) can open: it has no network port.
To sign in to %s from a computer with a screen:
  1. forward the socket: ssh -N -L 9229:%s %s@%s
  2. in Chrome there, open chrome://inspect/#devices, "Configure...", add localhost:9229
  3. under "Remote Target", click "inspect" on the %s page: the window shows the page; sign in there.
Port 9229 is then open on that computer's loopback while ssh runs: stop ssh (Ctrl-C) once you are signed in.
`, profile, sock, user, site.Name(), sock, user, host, site.Origins()[0])
}

// loginBrowser launches Chrome on the dedicated profile for login. When a
// Chrome that `run` or `serve` launched still runs there (it holds the
// person's tabs, or its run died), login uses it: its window is where the
// person signs in. Only a headless one, when login should show a window,
// is stopped for a visible one, and only when it holds nothing but
// browserop's tabs; otherwise login says what to do.
func loginBrowser(ctx context.Context, bc browser.Config) (*browser.Browser, error) {
	if !browser.ProfileRunning(bc.ProfileDir) {
		if bc.Headless {
			// Reached only through its relay socket, which the person
			// forwards to sign in (printDevToolsHelp).
			bc.Persistent = true
		}
		return browser.Launch(ctx, bc)
	}
	pc := bc
	pc.Persistent = true
	b, err := browser.Launch(ctx, pc)
	if err != nil {
		return nil, err
	}
	if bc.Headless || !b.Headless() {
		return b, nil
	}
	others, err := b.Others(ctx)
	if err != nil || len(others) > 0 {
		b.Disconnect()
		return nil, fmt.Errorf("%w: a headless Chrome browserop launched runs on profile %s with tabs that are not browserop's (%d): quit it, or let the next run stop it, then run login again",
			errcode.ErrUsage, bc.ProfileDir, len(others))
	}
	if err := b.Close(); err != nil {
		return nil, err
	}
	return browser.Launch(ctx, bc)
}
