package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/chromedp/cdproto"
	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
)

// DefaultStopGrace is how long Close waits for a Dedicated Chrome to exit
// after asking it to close, before it kills the process.
const DefaultStopGrace = 10 * time.Second

// Headless reports whether the browser runs without a window: from the
// Config of a browser this Browser launched, from the Chrome's command
// line for a reattached one (Linux), and otherwise (an attached Chrome, a
// reattached one elsewhere) from the product its user agent names
// (Browser.getVersion: "HeadlessChrome/"); one that does not answer is
// taken to have a window.
func (b *Browser) Headless() bool {
	if b.launched {
		return b.cfg.Headless
	}
	if b.pid <= 0 {
		return b.uaHeadless()
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", b.pid))
	if err != nil {
		return b.uaHeadless()
	}
	for _, arg := range strings.Split(string(cmdline), "\x00") {
		if arg == "--headless" || strings.HasPrefix(arg, "--headless=") {
			return true
		}
	}
	return false
}

// reattach connects to the Chrome that an earlier Persistent Launch started
// on profile and that still runs, through its relay socket (or, for a
// Chrome an earlier version started on a DevTools port, its
// DevToolsActivePort: that one is stopped as usual once nothing of the
// person's is open, and the next launch starts one on a relay). It does
// not touch the profile: Chrome owns its files while it runs.
func reattach(ctx context.Context, cfg Config, profile string, rec launchRecord) (*Browser, error) {
	b := &Browser{cfg: cfg, dedicated: true, profile: profile, pid: rec.PID}
	if relaySocketThere(profile) {
		b.relay = true
		b.allocCtx, b.allocCancel = NewRelayAllocator(context.Background(), profile)
	} else {
		wsURL, err := ReadActivePort(filepath.Join(profile, ActivePortFileName))
		if err != nil {
			return nil, fmt.Errorf("reattach to Chrome (pid %d): no %s in the profile, and %w", rec.PID, SocketFileName, err)
		}
		b.wsURL = wsURL
		b.allocCtx, b.allocCancel = remote.NewAllocator(context.Background(), wsURL, remote.WithDialTimeout(10*time.Second))
	}
	b.startup = map[target.ID]bool{}
	if rec.StartupURL == "" {
		// Launched on about:blank by an earlier version: its recorded
		// start-up tab, while still on about:blank, is browserop's.
		for _, id := range rec.StartupTargets {
			b.startup[target.ID(id)] = true
		}
	}
	if err := b.connect(ctx); err != nil {
		return nil, fmt.Errorf("reattach to Chrome (pid %d): %w: %w", rec.PID, ErrNoBrowser, err)
	}
	return b, nil
}

// ProfileRunning reports whether a Chrome that a Persistent Launch started
// still runs on the profile dir (its launch record names it, or its command
// line carries the launch tag): a Launch
// with Persistent would reattach to it rather than start one. It is false for
// a Chrome that browserop did not launch there (Launch refuses that profile)
// and for an empty dir. It never creates or changes anything.
func ProfileRunning(dir string) bool {
	if dir == "" {
		return false
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	pid, ok := profileInUse(abs)
	if !ok {
		return false
	}
	rec, err := readLaunchRecord(abs)
	return err == nil && rec.PID == pid || taggedLaunch(pid)
}

// Dedicated reports whether this Browser is connected to a Chrome on
// browserop's dedicated profile that browserop launched with
// Config.Persistent, in this process or an earlier one. Close stops such a
// browser; Disconnect leaves it running.
func (b *Browser) Dedicated() bool { return b.dedicated }

// Others lists the tabs that are not browserop's: the page targets of a
// complete inventory that are neither owned by this Browser nor the tab
// Chrome opened at launch, still on its start-up page (StartupURL). A
// start-up tab the person navigated elsewhere, and a tab handed over with
// Disown, are listed.
// Before it stops a Dedicated browser, the caller checks that this list is
// empty; when it is not, it calls Disconnect instead of Close. The error
// wraps ErrBrowserGone or ErrTimeout where that applies; without a complete
// inventory there is no list.
func (b *Browser) Others(ctx context.Context) ([]Target, error) {
	inv, err := b.Targets(ctx)
	if err != nil {
		return nil, fmt.Errorf("others: %w", err)
	}
	if !inv.Complete {
		return nil, errors.New("others: inventory is not complete")
	}
	var others []Target
	for _, t := range inv.Targets {
		if !b.ours(target.ID(t.ID), t.URL) {
			others = append(others, t)
		}
	}
	return others, nil
}

// ours reports whether a page target is browserop's: owned by this
// Browser, or the tab a Persistent Launch's Chrome opened at start, still
// untouched: on StartupURL, or, for a Chrome an earlier version launched
// on plain about:blank, recorded as such and still there.
func (b *Browser) ours(id target.ID, url string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.owned[id] || b.dedicated && url == StartupURL || b.startup[id] && url == "about:blank"
}

// others lists the page targets of infos that are not browserop's.
func (b *Browser) others(infos []*target.Info) []*target.Info {
	var out []*target.Info
	for _, info := range infos {
		if info != nil && info.Type == "page" && !b.ours(info.TargetID, info.URL) {
			out = append(out, info)
		}
	}
	return out
}

// StopIfAlone ends the connection and stops a Dedicated Chrome only when,
// at the last moment, it holds nothing but this Browser's owned tabs and
// its untouched start-up tab: the listing and the Browser.close command go
// over one connection, one right after the other, so a tab the person
// opened before the listing keeps Chrome running. It reports whether it
// stopped Chrome; when it did not, Chrome runs on, disconnected from. For a
// browser that is not Dedicated it is Disconnect.
func (b *Browser) StopIfAlone() (stopped bool, err error) {
	if !b.dedicated {
		return false, b.Disconnect()
	}
	b.endAs(func() error { return b.stopDedicated(&stopped) })
	return stopped, b.closeErr
}

// Disown removes id from the owned set, when the operator hands the tab to
// the person: from then on it is theirs, Others lists it, and AttachOwned
// and CloseTab refuse it with ErrNotOwned. A live Tab for it is released
// (detached, never closed), so that nothing of browserop stays in the tab.
func (b *Browser) Disown(id TargetID) {
	tid := target.ID(id)
	b.mu.Lock()
	delete(b.owned, tid)
	t := b.tabs[tid]
	b.mu.Unlock()
	if t != nil {
		t.Release()
	}
}

// Disconnect ends the connection and leaves the browser and every tab
// running: pending tab actions fail with ErrBrowserGone, and a Chrome
// launched with Config.Persistent keeps running after this process exits,
// so that a later Launch with Persistent reattaches to it. A browser
// launched without Persistent cannot outlive its connection: Disconnect
// stops it as Close does. Disconnect and Close share one end: whichever
// comes first decides, and later calls of either return its result.
func (b *Browser) Disconnect() error { return b.end(false) }

// stopDedicated disconnects and then stops the Dedicated Chrome: a
// Browser.close command, a wait for the process to exit, and SIGKILL when it
// does not exit within the grace period. The launch record goes once the
// process is gone.
func (b *Browser) stopDedicated(alone *bool) error {
	disconnectErr := b.shutdown()
	pid := b.pid
	if pid <= 0 {
		return disconnectErr
	}
	grace := b.stopGrace
	if grace <= 0 {
		grace = DefaultStopGrace
	}
	deadline := time.Now().Add(grace)
	// Sent even when the pid looks gone (the check cannot tell on every
	// system); a browser that is not there refuses the connection at once.
	// A failed request is no reason to stop: the kill below follows.
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	var keep func([]*target.Info) bool
	if alone != nil {
		keep = func(infos []*target.Info) bool { return len(b.others(infos)) > 0 }
	}
	kept, err := sendBrowserClose(ctx, b.dialOwn, keep)
	cancel()
	if alone != nil {
		if kept || err != nil {
			// Somebody's tab appeared at the last moment, or nothing
			// could be checked: Chrome stays.
			*alone = false
			return disconnectErr
		}
		*alone = true
	}
	waitChromeExit(pid, b.profile, deadline)
	if chromeAlive(pid, b.profile) {
		if p, err := os.FindProcess(pid); err == nil {
			_ = p.Kill()
		}
		// The main process is gone or going: its helpers on the
		// profile are leftovers.
		killLeftovers(b.profile)
		if !waitChromeExit(pid, b.profile, time.Now().Add(5*time.Second)) {
			return fmt.Errorf("close: Chrome (pid %d) did not exit after SIGKILL", pid)
		}
	}
	if err := removeLaunchRecord(b.profile, pid); err != nil {
		return fmt.Errorf("close: remove %s: %w", LaunchRecordFileName, err)
	}
	return disconnectErr
}

// dialOwn opens a connection of its own to a Dedicated browser.
func (b *Browser) dialOwn(ctx context.Context) (chromedp.Transport, error) {
	if b.relay {
		return relayTransport(ctx, b.profile)
	}
	if b.wsURL == "" {
		return nil, errors.New("no DevTools address")
	}
	return remote.DialContext(ctx, b.wsURL)
}

// sendBrowserClose asks the browser to close, over a connection of its own
// (dial): the Browser's connection is already gone by then. With
// keep set, it first lists the page targets over that connection and, when
// keep says so, sends nothing and reports kept. It returns when the browser
// answers or drops the connection, or ctx ends.
func sendBrowserClose(ctx context.Context, dial func(context.Context) (chromedp.Transport, error), keep func([]*target.Info) bool) (kept bool, err error) {
	conn, err := dial(ctx)
	if err != nil {
		return false, scrub(err)
	}
	// Read does not take ctx: closing the connection unblocks it.
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer func() {
		stop()
		_ = conn.Close()
	}()
	call := func(id int64, method string, params any) (*cdproto.Message, error) {
		msg := &cdproto.Message{ID: id, Method: cdproto.MethodType(method)}
		if params != nil {
			raw, err := json.Marshal(params)
			if err != nil {
				return nil, err
			}
			msg.Params = raw
		}
		if err := conn.Write(ctx, msg); err != nil {
			return nil, scrub(err)
		}
		for {
			var res cdproto.Message
			if err := conn.Read(ctx, &res); err != nil {
				return nil, err
			}
			if res.ID == id {
				if res.Error != nil {
					return nil, scrub(res.Error)
				}
				return &res, nil
			}
		}
	}
	if keep != nil {
		res, err := call(1, target.CommandGetTargets, target.GetTargetsParams{})
		if err != nil {
			return false, fmt.Errorf("list targets: %w", err)
		}
		var got target.GetTargetsResult
		if err := json.Unmarshal(res.Result, &got); err != nil {
			return false, fmt.Errorf("list targets: %w", err)
		}
		if keep(got.TargetInfos) {
			return true, nil
		}
	}
	if _, err := call(2, cdpbrowser.CommandClose, nil); err != nil && !isConnClosed(err) {
		return false, err
	}
	// A closing browser drops the connection: that is the goal.
	return false, nil
}

// isConnClosed reports whether err is the connection ending (what a
// browser that closes does), rather than an answer.
func isConnClosed(err error) bool {
	var ce *cdproto.Error
	return !errors.As(err, &ce)
}

// uaHeadless reports whether the browser's user agent names headless
// Chrome.
func (b *Browser) uaHeadless() bool {
	if b.goneErr() != nil {
		return false
	}
	ctx, cancel := b.callCtx(context.Background())
	defer cancel()
	v, err := chromedp.CallBrowser(ctx, cdpbrowser.GetVersion, cdp.Empty{})
	return err == nil && strings.Contains(v.UserAgent, "HeadlessChrome/")
}
