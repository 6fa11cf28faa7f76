package browser

import (
	"context"
	"os"
	"path/filepath"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// These hooks let the external tests play the person and the machine: open
// and close tabs behind browserop's back, crash a page, kill the process.

func ProcessOf(b *Browser) *os.Process {
	if b.pid > 0 {
		p, _ := os.FindProcess(b.pid)
		return p
	}
	return b.cdp.Process()
}

// RawCreate opens a tab outside the owned set, as the person would.
func RawCreate(b *Browser, url string) (TargetID, error) {
	ctx, cancel := b.callCtx(context.Background())
	defer cancel()
	res, err := chromedp.CallBrowser(ctx, target.CreateTarget, target.CreateTargetParams{URL: url})
	return TargetID(res.TargetID), err
}

// RawCloseTarget closes any tab, as the person would.
func RawCloseTarget(b *Browser, id TargetID) error {
	ctx, cancel := b.callCtx(context.Background())
	defer cancel()
	_, err := chromedp.CallBrowser(ctx, target.CloseTarget, target.CloseTargetParams{TargetID: target.ID(id)})
	return err
}

// CrashTab makes the tab's renderer crash.
func CrashTab(t *Tab) {
	ctx, cancel := context.WithTimeout(t.ctx, 2e9)
	defer cancel()
	_, _ = chromedp.Call(ctx, page.Crash, cdp.Empty{})
}

// KillChromeOn kills every process that runs on the profile dir, so that a
// test leaks no Chrome, whatever it did.
func KillChromeOn(dir string) { killLeftovers(dir) }

// ChromeAlive reports whether pid is a live Chrome on the profile dir.
func ChromeAlive(pid int, dir string) bool { return chromeAlive(pid, dir) }

// SetStopGrace shortens the wait of Close for a Dedicated Chrome to exit.
func SetStopGrace(b *Browser, d time.Duration) { b.stopGrace = d }

// PIDOf is the Chrome pid that a Dedicated Browser stops on Close.
func PIDOf(b *Browser) int { return b.pid }

// TaggedLaunch is taggedLaunch.
var TaggedLaunch = taggedLaunch

// HoldLaunchLock takes the profile's launch lock, as another process's
// launch would, until release.
func HoldLaunchLock(dir string) (release func(), ok bool, err error) {
	l, ok, err := tryLock(filepath.Join(dir, LaunchLockFileName))
	if !ok || err != nil {
		return nil, ok, err
	}
	return l.unlock, true, nil
}

// PersistentCommandLine is the command line a Persistent Launch passes to
// Chrome for cfg, but for the executable and the start-up URL.
func PersistentCommandLine(cfg Config, profile string) ([]string, error) {
	flags, err := launchFlags(cfg, profile)
	if err != nil {
		return nil, err
	}
	return persistentArgs(flags), nil
}

// BringToFrontWindowed is BringToFront as on a browser with windows: a
// headless one still keeps window states and visibility (Chrome's new
// headless mode), which lets the proof itself be tested.
func BringToFrontWindowed(ctx context.Context, b *Browser, t *Tab) Visibility {
	return b.bringToFront(ctx, t)
}

// RawMinimize minimizes the window holding id, as the person would.
func RawMinimize(b *Browser, id TargetID) error {
	w, err := b.windowFor(context.Background(), id)
	if err != nil {
		return err
	}
	ctx, cancel := b.callCtx(context.Background())
	defer cancel()
	_, err = chromedp.CallBrowser(ctx, cdpbrowser.SetWindowBounds, cdpbrowser.SetWindowBoundsParams{
		WindowID: w.WindowID, Bounds: &cdpbrowser.Bounds{WindowState: cdpbrowser.WindowStateMinimized}})
	return err
}

// VisibilityState reads document.visibilityState in t.
func VisibilityState(ctx context.Context, t *Tab) (string, error) {
	var s string
	err := t.run(ctx, "read visibility", 0, func(actx context.Context) error {
		return t.eval(actx, `function(){return document.visibilityState}`, &s)
	})
	return s, err
}
