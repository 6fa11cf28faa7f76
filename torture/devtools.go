package torture

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/browserop/browserop/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/storage"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
)

// person is a DevTools client of the harness on the same Chrome as
// browserop, attached through the profile's relay socket or DevToolsActivePort file: the
// person at the keyboard. It opens and types into its own tabs, closes
// browserop's, and watches its own tabs for anything done to them.
type person struct {
	allocCancel context.CancelFunc
	ctx         context.Context
	cancel      context.CancelFunc

	mu      sync.Mutex
	watched map[target.ID]*userTab
	lostAt  time.Time // when the connection ended
	killing time.Time // when the harness started killing this Chrome
}

// userTab is a tab of the person's, and what happened to it.
type userTab struct {
	id    target.ID
	url   string // the URL it must keep
	draft string // what the person typed into it
	// navigated lists URLs it was moved to; destroyed is when it went away.
	navigated []string
	destroyed time.Time
}

// dialPerson connects to the Chrome running on profile, waiting (up to d)
// for a way in made after notBefore that answers: the relay socket of a
// Chrome browserop launched, or the DevToolsActivePort file of the
// person's own Chrome (attach mode).
func dialPerson(profile string, notBefore time.Time, d time.Duration) (*person, error) {
	sock := filepath.Join(profile, browser.SocketFileName)
	path := filepath.Join(profile, browser.ActivePortFileName)
	fresh := func(p string) bool {
		fi, err := os.Stat(p)
		return err == nil && !fi.ModTime().Before(notBefore.Add(-time.Second))
	}
	deadline := time.Now().Add(d)
	var last error
	for time.Now().Before(deadline) {
		var opens []func() (context.Context, context.CancelFunc)
		if fresh(sock) {
			opens = append(opens, func() (context.Context, context.CancelFunc) {
				return browser.NewRelayAllocator(context.Background(), profile)
			})
		}
		if fresh(path) {
			if ws, err := browser.ReadActivePort(path); err == nil {
				opens = append(opens, func() (context.Context, context.CancelFunc) {
					return remote.NewAllocator(context.Background(), ws, remote.WithDialTimeout(3*time.Second))
				})
			} else {
				last = err
			}
		}
		if len(opens) == 0 && last == nil {
			last = fmt.Errorf("no fresh %s or %s", browser.SocketFileName, browser.ActivePortFileName)
		}
		for _, open := range opens {
			p, err := connectPerson(open)
			if err == nil {
				return p, nil
			}
			last = err
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil, fmt.Errorf("person: connect to the browser on the profile: %v", last)
}

func connectPerson(open func() (context.Context, context.CancelFunc)) (*person, error) {
	p := &person{watched: map[target.ID]*userTab{}}
	var actx context.Context
	actx, p.allocCancel = open()
	p.ctx, p.cancel = chromedp.NewContext(actx,
		chromedp.WithBrowserOption(chromedp.WithBrowserLogf(func(string, ...any) {}), chromedp.WithBrowserErrorf(func(string, ...any) {})))
	done := make(chan error, 1)
	go func() { done <- chromedp.ListenBrowser(p.ctx, p.onEvent) }()
	select {
	case err := <-done:
		if err != nil {
			p.close()
			return nil, err
		}
	case <-time.After(5 * time.Second):
		p.close()
		<-done
		return nil, errors.New("person: the browser did not answer")
	}
	go func() {
		<-p.ctx.Done()
		p.mu.Lock()
		p.lostAt = time.Now()
		p.mu.Unlock()
	}()
	if _, err := call(p, target.SetDiscoverTargets, target.SetDiscoverTargetsParams{Discover: true}); err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}

func (p *person) onEvent(ev any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch ev := ev.(type) {
	case *target.EventTargetInfoChanged:
		if ev.TargetInfo == nil {
			return
		}
		if t := p.watched[ev.TargetInfo.TargetID]; t != nil && ev.TargetInfo.URL != t.url {
			t.navigated = append(t.navigated, ev.TargetInfo.URL)
		}
	case *target.EventTargetDestroyed:
		if t := p.watched[ev.TargetID]; t != nil && t.destroyed.IsZero() {
			t.destroyed = time.Now()
		}
	}
}

// call runs one browser-level command with a deadline.
func call[P, R any](p *person, cmd cdp.Command[P, R], params P) (R, error) {
	ctx, cancel := context.WithTimeout(p.ctx, 5*time.Second)
	defer cancel()
	return chromedp.CallBrowser(ctx, cmd, params)
}

func (p *person) close() {
	p.cancel()
	p.allocCancel()
}

// alive reports whether the connection is up.
func (p *person) alive() bool { return p.ctx.Err() == nil }

// urlOf returns the URL of the page target id, and whether it exists.
func (p *person) urlOf(id target.ID) (string, bool) {
	pages, err := p.pages()
	if err != nil {
		return "", false
	}
	for _, info := range pages {
		if info.TargetID == id {
			return info.URL, true
		}
	}
	return "", false
}

// pages lists the page targets.
func (p *person) pages() ([]*target.Info, error) {
	res, err := call(p, target.GetTargets, target.GetTargetsParams{})
	if err != nil {
		return nil, err
	}
	var out []*target.Info
	for _, info := range res.TargetInfos {
		if info != nil && info.Type == "page" {
			out = append(out, info)
		}
	}
	return out, nil
}

// openUserTab opens a tab of the person's on url, types draft into its
// reply box (when the page shows one: a blocker screen does not), and
// watches it from then on. created, when set, learns the tab's id as soon
// as it exists, under the world's personMu, so that the harness never
// takes the tab for browserop's.
func (p *person) openUserTab(url, draft string, w *world, created func(target.ID)) (*userTab, error) {
	w.personMu.Lock()
	// Created blank and navigated once attached: attaching to a page that
	// is loading races in chromedp (its first DOM read writes the node map
	// that the DOM events of the load read unlocked).
	res, err := call(p, target.CreateTarget, target.CreateTargetParams{URL: "about:blank", NewWindow: new(true), Focus: new(false)})
	if err == nil && created != nil {
		created(res.TargetID)
	}
	w.personMu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("person: open a tab: %w", err)
	}
	id := res.TargetID
	t := &userTab{id: id, url: url}
	// One attachment: the navigation, then the reply box when the page
	// shows one (a blocker screen does not), within its own bound.
	loaded := false
	typed, err := inTab(p, id, 25*time.Second, func(ctx context.Context, tt *chromedp.Target) (bool, error) {
		if _, err := chromedp.Navigate(url)(ctx, tt); err != nil {
			return false, err
		}
		loaded = true
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if _, err := chromedp.WaitVisible(chromedp.CSS("textarea#reply-text"))(wctx, tt); err != nil {
			return false, err
		}
		_, err := chromedp.SetValue(chromedp.CSS("textarea#reply-text"), draft)(wctx, tt)
		return err == nil, err
	})
	if !loaded {
		// The page did not load in time: a later commit of its navigation
		// would read as browserop navigating the tab, so the person gives
		// up on it.
		if at, ok := p.urlOf(id); !ok || at != url {
			_, _ = call(p, target.CloseTarget, target.CloseTargetParams{TargetID: id})
			return nil, fmt.Errorf("person: the tab did not load %s (on %q): %v", url, at, err)
		}
	}
	if typed && err == nil {
		t.draft = draft
	}
	if !p.alive() {
		return nil, errors.New("person: the browser went away")
	}
	p.mu.Lock()
	p.watched[id] = t
	p.mu.Unlock()
	return t, nil
}

// inTab runs an action in a tab through a session that detaches
// afterwards and never closes the tab.
func inTab[T any](p *person, id target.ID, bound time.Duration, a chromedp.Action[T]) (T, error) {
	tctx, cancel := chromedp.NewContext(p.ctx, chromedp.WithTargetID(id), chromedp.WithDetachOnCancel())
	defer cancel()
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := chromedp.Run(tctx, a)
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-time.After(bound):
		cancel()
		<-done
		var zero T
		return zero, errors.New("person: the tab did not answer")
	}
}

// checkUserTab returns what was done to a watched tab: nothing when it is
// still there, on its URL, with the person's draft, and was never
// navigated. Destruction in the last moments of the connection (the
// browser going down) is no violation; withBrowser reports it when the
// harness did not kill that browser.
func (p *person) checkUserTab(t *userTab, final bool) (out []string, withBrowser bool) {
	p.mu.Lock()
	navigated := append([]string(nil), t.navigated...)
	destroyed, lostAt, killing := t.destroyed, p.lostAt, p.killing
	p.mu.Unlock()
	if len(navigated) > 0 {
		out = append(out, fmt.Sprintf("the person's tab %s was navigated to %s", t.url, strings.Join(navigated, ", ")))
	}
	if !destroyed.IsZero() {
		browserWentDown := !lostAt.IsZero() && lostAt.Sub(destroyed) < 2*time.Second ||
			!killing.IsZero() && destroyed.After(killing.Add(-500*time.Millisecond))
		if !browserWentDown && (!lostAt.IsZero() || time.Since(destroyed) > 2*time.Second) {
			out = append(out, fmt.Sprintf("the person's tab %s was closed while its browser stayed up", t.url))
		}
		withBrowser = browserWentDown && killing.IsZero()
	}
	if final && destroyed.IsZero() && p.alive() {
		pages, err := p.pages()
		if err != nil {
			return out, withBrowser
		}
		found := false
		for _, info := range pages {
			if info.TargetID == t.id {
				found = true
				if info.URL != t.url {
					out = append(out, fmt.Sprintf("the person's tab is on %s, not %s", info.URL, t.url))
				}
			}
		}
		if !found {
			out = append(out, fmt.Sprintf("the person's tab %s is gone", t.url))
			return out, withBrowser
		}
		if t.draft == "" {
			return out, withBrowser
		}
		if v, err := inTab(p, t.id, 5*time.Second, chromedp.Value(chromedp.CSS("textarea#reply-text"))); err == nil && v != t.draft {
			out = append(out, fmt.Sprintf("the person's draft in %s was changed to %q", t.url, v))
		}
	}
	return out, withBrowser
}

// closeBrowseropTab closes one page that is neither the person's nor in
// keep, preferring one on origin. It returns false when there was none.
func (p *person) closeBrowseropTab(origin string, keep map[target.ID]bool) (bool, error) {
	pages, err := p.pages()
	if err != nil {
		return false, err
	}
	p.mu.Lock()
	var pick, blank *target.Info
	for _, info := range pages {
		if p.watched[info.TargetID] != nil || keep[info.TargetID] {
			continue
		}
		if strings.HasPrefix(info.URL, origin) && pick == nil {
			pick = info
		} else if blank == nil {
			blank = info
		}
	}
	p.mu.Unlock()
	if pick == nil {
		pick = blank
	}
	if pick == nil {
		return false, nil
	}
	_, err = call(p, target.CloseTarget, target.CloseTargetParams{TargetID: pick.TargetID})
	return err == nil, err
}

// setSessionCookie stores the demosite session cookie for the site at base
// with an expiry a day away, so that it survives Chrome's restart (demosite
// sets a session cookie, which Chrome drops when it starts again), as a
// "remember me" site would.
func (p *person) setSessionCookie(base, name, value string) error {
	_, err := call(p, storage.SetCookies, storage.SetCookiesParams{Cookies: []*network.CookieParam{{
		Name: name, Value: value, URL: base, Path: "/", HTTPOnly: true, SameSite: network.CookieSameSiteLax,
		Expires: cdp.TimeSinceEpoch(float64(time.Now().Add(24 * time.Hour).Unix())),
	}}})
	return err
}
