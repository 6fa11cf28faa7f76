package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/browserop/browserop/browser"
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
	headless := fs.Bool("headless", false, "no visible window (for scripted setups that sign in over DevTools)")
	if _, err := parseChecked(fs, args, noArgs(fs)); err != nil {
		return err
	}
	cfg, err := e.config()
	if err != nil {
		return err
	}
	adapters, err := loadSites(cfg)
	if err != nil {
		return err
	}
	var site sites.Adapter
	var names []string
	for _, a := range adapters {
		names = append(names, a.Name())
		if a.Name() == *siteName || *siteName == "" && site == nil {
			site = a
		}
	}
	if site == nil {
		return usageError("--site %q is not configured (sites: %s)", *siteName, strings.Join(names, ", "))
	}
	bc, err := browserConfig(cfg, e.environ)
	if err != nil {
		return err
	}
	if bc.DevToolsURL != "" || bc.DevToolsActivePortFile != "" {
		return fmt.Errorf("%w: login launches the dedicated profile; sign in directly in the browser you attach to", operator.ErrUsage)
	}
	if err := preflight(bc); err != nil {
		return err
	}
	bc.Headless = *headless
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	b, err := loginBrowser(ctx, bc)
	if err != nil {
		return connectError(bc, err)
	}
	var own []*browser.Tab
	defer func() {
		if !b.Dedicated() {
			b.Close()
			return
		}
		// The Chrome `run` or `serve` left running stays, with the
		// person's tabs; only login's own tabs go.
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for _, t := range own {
			b.CloseTab(cctx, t)
		}
		b.Disconnect()
	}()
	shown, err := b.NewTab(ctx, "about:blank")
	if err != nil {
		return err
	}
	own = append(own, shown)
	if _, err := site.OpenHome(ctx, shown); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "Sign in to %s in the browser window (profile %s).\nbrowserop waits until you are signed in (at most %s; Ctrl-C to stop).\n",
		site.Name(), bc.ProfileDir, *timeout)
	// A second, background tab checks who is signed in, so the person's
	// typing in the shown tab is never disturbed.
	probe, err := b.NewTab(ctx, "about:blank")
	if err != nil {
		return err
	}
	own = append(own, probe)
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("%w: nobody signed in to %s within %s", operator.ErrUsage, site.Name(), *timeout)
			}
			return ctx.Err()
		case <-b.Done():
			return fmt.Errorf("%w: the browser was closed before anyone signed in to %s", operator.ErrUsage, site.Name())
		case <-tick.C:
		}
		if _, err := site.OpenHome(ctx, probe); err != nil {
			continue
		}
		who, err := site.Identity(ctx, probe)
		if err != nil || who == "" {
			continue
		}
		fmt.Fprintf(e.stdout, "signed in to %s as @%s; browserop will act as this account\n", site.Name(), clean(who))
		return nil
	}
}

// loginBrowser launches Chrome on the dedicated profile for login. When a
// Chrome that `run` or `serve` launched still runs there (it holds the
// person's tabs, or its run died), login uses it: its window is where the
// person signs in. Only a headless one, when login should show a window,
// is stopped for a visible one, and only when it holds nothing but
// browserop's tabs; otherwise login says what to do.
func loginBrowser(ctx context.Context, bc browser.Config) (*browser.Browser, error) {
	if !browser.ProfileRunning(bc.ProfileDir) {
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
			operator.ErrUsage, bc.ProfileDir, len(others))
	}
	if err := b.Close(); err != nil {
		return nil, err
	}
	return browser.Launch(ctx, bc)
}
