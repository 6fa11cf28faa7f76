package torture

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/browserop/browserop/browser"
	"github.com/chromedp/cdproto/target"
)

// launchChrome starts Chrome on the profile as the person would, headless,
// with a DevTools port: the person's own Chrome in attach mode has one, and
// the harness attaches to it through DevToolsActivePort as the person.
func (w *world) launchChrome() (*browser.Browser, error) {
	ctx, cancel := context.WithTimeout(w.ctx, 30*time.Second)
	defer cancel()
	return browser.Launch(ctx, browser.Config{ExecPath: w.opts.Chrome, ProfileDir: w.prof, Headless: true,
		NoSandbox: os.Geteuid() == 0, ActionTimeout: 10 * time.Second, DevToolsPort: true})
}

// signInTries is how many times the set-up signs the profile in before it
// gives up on the seed.
const signInTries = 4

// signIn signs the profile in to the demosite as alice with a cookie that
// survives restarts, and checks it. With keep (attach mode) that Chrome
// stays up as the person's, their tab opened in it; otherwise it is closed,
// which puts the cookie on disk.
func (w *world) signIn(keep bool) error {
	killBrowsersOn(w.prof)
	started := time.Now()
	b, err := w.launchChrome()
	if err != nil {
		return err
	}
	// Bounds for a machine under load (a Chrome there took over 15 s to
	// come up and answer); only set-up waits on them.
	p, err := dialPerson(w.prof, started, 20*time.Second)
	if err == nil {
		err = w.setCookie(p)
	}
	if err == nil {
		err = w.checkSignedIn(b)
	}
	if err == nil && keep {
		err = w.adoptChrome(b, p)
	}
	if !keep || err != nil {
		if p != nil {
			p.close()
		}
		b.Close()
		killBrowsersOn(w.prof)
	}
	return err
}

// setCookie signs the browser in: a new session of alice's, as a cookie
// that survives restarts.
func (w *world) setCookie(p *person) error {
	c := w.site.Login("alice")
	return p.setSessionCookie(w.base, c.Name, c.Value)
}

func (w *world) checkSignedIn(b *browser.Browser) error {
	ctx, cancel := context.WithTimeout(w.ctx, 40*time.Second)
	defer cancel()
	tab, err := b.NewTab(ctx, w.base+"/home")
	if err != nil {
		return err
	}
	who, err := tab.Attr(ctx, "span#whoami", "data-handle")
	b.CloseTab(ctx, tab)
	if err != nil {
		return fmt.Errorf("who is signed in: %w", err)
	}
	if who != "alice" {
		return fmt.Errorf("signed in as %q", who)
	}
	return nil
}

// startChrome (attach mode) starts the person's Chrome with their tab open
// on bob's post, a reply half typed in it.
func (w *world) startChrome() error {
	started := time.Now()
	b, err := w.launchChrome()
	if err != nil {
		return err
	}
	p, err := dialPerson(w.prof, started, 10*time.Second)
	if err != nil {
		b.Close()
		return err
	}
	if err := w.adoptChrome(b, p); err != nil {
		p.close()
		b.Close()
		return err
	}
	return nil
}

// adoptChrome makes a running Chrome the person's: they sign in again if
// a killed Chrome lost the cookie, the pages it has are theirs, and they
// open their tab in it.
func (w *world) adoptChrome(b *browser.Browser, p *person) error {
	if err := w.setCookie(p); err != nil {
		return err
	}
	pages, err := p.pages()
	if err != nil {
		return err
	}
	keep := map[target.ID]bool{}
	for _, info := range pages {
		keep[info.TargetID] = true
	}
	w.userTabs++
	t, err := p.openUserTab(fmt.Sprintf("%s/p/%d", w.base, w.seeded[0]), fmt.Sprintf("the person's own unsent reply #%d", w.userTabs), w, nil)
	if err != nil {
		return err
	}
	w.mu.Lock()
	w.chrome, w.person, w.userTab, w.keep = b, p, t, keep
	w.mu.Unlock()
	w.logf("the person's Chrome is up, their tab open")
	return nil
}

// killChrome (attach mode) kills the person's Chrome and judges the tab it
// took with it.
func (w *world) killChrome() int {
	w.mu.Lock()
	b, p, t := w.chrome, w.person, w.userTab
	w.chrome, w.person, w.userTab = nil, nil, nil
	w.mu.Unlock()
	if p != nil {
		p.mu.Lock()
		p.killing = time.Now()
		p.mu.Unlock()
	}
	n := killBrowsersOn(w.prof)
	if b != nil {
		b.Close()
	}
	if p != nil {
		if t != nil {
			time.Sleep(50 * time.Millisecond)
			vs, _ := p.checkUserTab(t, false)
			for _, v := range vs {
				w.violation(InvForeignTabs, "%s", v)
			}
		}
		p.close()
	}
	return n
}

// ensureChrome (attach mode) starts the person's Chrome again when it is
// gone, as the person would.
func (w *world) ensureChrome() {
	w.mu.Lock()
	b := w.chrome
	w.mu.Unlock()
	if b != nil {
		select {
		case <-b.Done():
		default:
			return
		}
	}
	w.browserWentDown()
	w.killChrome()
	for i := range 3 {
		err := w.startChrome()
		if err == nil {
			return
		}
		w.logf("start the person's Chrome (try %d): %v", i+1, err)
		killBrowsersOn(w.prof)
	}
}

// prepareBrowser readies the browser side before an operator starts: in
// attach mode the person's Chrome runs; in launch mode a Chrome an earlier
// operator left running stays, and the remains of a dead one go.
func (w *world) prepareBrowser() {
	// A dead operator's lease runs out first: the next one should act, not
	// find it locked (racing operators are their own fault).
	w.mu.Lock()
	dead := w.deadAt
	w.mu.Unlock()
	if d := time.Until(dead.Add(leaseTTL + 100*time.Millisecond)); d > 0 {
		time.Sleep(d)
	}
	if w.sch.Mode == ModeAttach {
		w.ensureChrome()
		return
	}
	if w.anyAlive() {
		return
	}
	// A Chrome an operator left running (it held the person's tab, or
	// the operator died) stays up for the next one to attach to; the
	// remains of one that is down go.
	if p, err := dialPerson(w.prof, time.Time{}, 300*time.Millisecond); err == nil {
		p.close()
		w.logf("the Chrome an earlier operator launched is still running")
		return
	}
	if n := killBrowsersOn(w.prof); n > 0 {
		w.browserWentDown()
		w.logf("killed %d leftover browser processes of dead operators", n)
	}
}

// launchUserTab (launch mode): the person opens a tab in the Chrome the
// operator launched, once it is up.
func (w *world) launchUserTab(main *proc) (*person, *userTab) {
	for main.Alive() {
		// Not only a fresh port file: the operator may attach to a Chrome
		// an earlier one left running.
		p, err := dialPerson(w.prof, time.Time{}, 500*time.Millisecond)
		if err != nil {
			continue
		}
		t, err := p.openUserTab(fmt.Sprintf("%s/p/%d", w.base, w.seeded[0]), "the person's reply, typed while browserop runs", w,
			func(id target.ID) {
				w.mu.Lock()
				if w.personTabs == nil {
					w.personTabs = map[target.ID]bool{}
				}
				w.personTabs[id] = true
				w.mu.Unlock()
			})
		if err != nil {
			p.close()
			w.logf("the person could not open their tab: %v", err)
			return nil, nil
		}
		w.count("user_tab")
		w.logf("the person opened a tab in the operator's Chrome")
		w.mu.Lock()
		w.launchTab, w.launchPerson = t, p
		w.mu.Unlock()
		return p, t
	}
	return nil, nil
}
