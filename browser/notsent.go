package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// ErrNotSent means a committing click was dispatched and it is proven that
// nothing left the page from the press until its document was destroyed:
// the outcome is definitive, nothing was submitted. See ClickOnceAndLand
// and AllowTeardown for what the proof observes; docs/design.md states it.
var ErrNotSent = errors.New("the click sent nothing")

// notSentQuiet is how long, after the landing wait gave up, every request
// of the page is blocked and counted before the document is torn down: a
// submission the page sends late shows (and is stopped) here.
const notSentQuiet = 2 * time.Second

// notSentSettle is how long, after the blank document committed, the
// clicked document's pagehide and unload handlers (run after the commit
// when the document moves out of its frame) are given to try a request.
const notSentSettle = 500 * time.Millisecond

// notSentBudget bounds the proof after the landing wait.
const notSentBudget = 15 * time.Second

// sendTrack is what the tab's session showed of the channels a page can
// send through that outlive one request: its open WebSockets and
// WebTransports and its attached child targets (out-of-process frames,
// workers), tracked from the attachment on; and the guard of the last
// committing click. It changes under Tab.mu.
type sendTrack struct {
	allowTeardown bool
	sockets       map[network.RequestID]bool
	children      map[target.SessionID]bool
	guard         *sendGuard
}

// sendGuard watches one committing click from just before its press: it
// counts every sign that something may have left the page. Once sealed,
// every request the interception pauses is failed instead of continued.
type sendGuard struct {
	sealed bool
	// requests counts requestWillBeSent events of any type (redirects
	// too), paused the requests Fetch interception stopped, sockets the
	// WebSocket, WebTransport and direct socket events, children the
	// child targets attached to the tab.
	requests, paused, sockets, children int
	// created is the browser's count of created targets at the press.
	created int64
}

// seen is the first sign that something may have left the page, "" for
// none.
func (g *sendGuard) seen(created int64) string {
	switch {
	case g.requests > 0:
		return fmt.Sprintf("%d requests were seen", g.requests)
	case g.paused > 0:
		return fmt.Sprintf("%d requests were stopped", g.paused)
	case g.sockets > 0:
		return "a socket was used"
	case g.children > 0:
		return "a frame or worker target was attached"
	case created != g.created:
		return "a target was created in the browser"
	}
	return ""
}

// AllowTeardown says whether the tab is browserop's own working tab, which
// no person sees: only then may a ClickOnceAndLand whose landing wait
// fails tear its document down to prove that nothing was sent
// (ErrNotSent). A tab given to a person must never allow it.
func (t *Tab) AllowTeardown(allow bool) {
	t.mu.Lock()
	t.sends.allowTeardown = allow
	t.mu.Unlock()
}

// watchSends records, on the event loop, the events of the channels a page
// sends through, for sendTrack and the armed guard.
func (t *Tab) watchSends(ev any) {
	var paused *fetch.EventRequestPaused
	t.mu.Lock()
	s := &t.sends
	g := s.guard
	if g == nil {
		g = &sendGuard{} // counts nothing anyone reads
	}
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		g.requests++
	case *fetch.EventRequestPaused:
		g.paused++
		paused = ev
	case *network.EventWebSocketCreated:
		if s.sockets == nil {
			s.sockets = map[network.RequestID]bool{}
		}
		s.sockets[ev.RequestID] = true
		g.sockets++
	case *network.EventWebTransportCreated:
		if s.sockets == nil {
			s.sockets = map[network.RequestID]bool{}
		}
		s.sockets[ev.TransportID] = true
		g.sockets++
	case *network.EventWebSocketClosed:
		delete(s.sockets, ev.RequestID)
	case *network.EventWebTransportClosed:
		delete(s.sockets, ev.TransportID)
	case *network.EventWebSocketWillSendHandshakeRequest, *network.EventWebSocketFrameSent,
		*network.EventDirectTCPSocketCreated, *network.EventDirectUDPSocketCreated,
		*network.EventDirectTCPSocketChunkSent, *network.EventDirectUDPSocketChunkSent:
		g.sockets++
	case *target.EventAttachedToTarget:
		if s.children == nil {
			s.children = map[target.SessionID]bool{}
		}
		s.children[ev.SessionID] = true
		g.children++
	case *target.EventDetachedFromTarget:
		delete(s.children, ev.SessionID)
	}
	fail := g.sealed
	t.mu.Unlock()
	if paused != nil {
		// The read loop cannot send commands.
		go t.answerPaused(paused.RequestID, fail)
	}
}

// answerPaused continues a request the interception paused, or fails it
// once the guard is sealed.
func (t *Tab) answerPaused(id fetch.RequestID, fail bool) {
	ctx, cancel := context.WithTimeout(t.ctx, 5*time.Second)
	defer cancel()
	if fail {
		_, _ = chromedp.Call(ctx, fetch.FailRequest, fetch.FailRequestParams{RequestID: id, ErrorReason: network.ErrorReasonBlockedByClient})
		return
	}
	_, _ = chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: id})
}

// armSendGuard, run just before a committing click's press, checks that
// every channel the page could send through is one the guard sees, and
// starts the interception that counts each request in the browser before
// it leaves. It returns nil, with nothing left enabled, when the tab may
// not be torn down or a check fails: the click then gives no proof.
func (t *Tab) armSendGuard(actx context.Context) *sendGuard {
	t.mu.Lock()
	ok := t.sends.allowTeardown && len(t.sends.sockets) == 0 && len(t.sends.children) == 0 && t.nav.seq > 0
	t.mu.Unlock()
	if !ok || !t.b.Owns(TargetID(t.id)) || !t.pageIsolated(actx) {
		return nil
	}
	g := &sendGuard{created: t.b.targetsCreated.Load()}
	t.mu.Lock()
	t.sends.guard = g
	t.mu.Unlock()
	_, err := chromedp.Call(actx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*"}}})
	if err != nil {
		t.dropSendGuard(g)
		return nil
	}
	return g
}

// dropSendGuard ends the guard and the interception (the requests it
// paused are answered by their own goroutines).
func (t *Tab) dropSendGuard(g *sendGuard) {
	t.mu.Lock()
	if t.sends.guard == g {
		t.sends.guard = nil
	}
	t.mu.Unlock()
	ctx, cancel := context.WithTimeout(t.ctx, 5*time.Second)
	defer cancel()
	_, _ = chromedp.Call(ctx, fetch.Disable, cdp.Empty{})
}

// pageIsolated reports whether the page's document can send only through
// the tab's own session: its own channels are ones the guard sees
// (sendChannels), no target in the browser but pages and its own UI (no
// worker, worklet or out-of-process frame of anyone), no other tab that
// could send for it (otherSender), and no live RTCPeerConnection in its
// main world.
func (t *Tab) pageIsolated(actx context.Context) bool {
	if t.sendChannels(actx) != "" {
		return false
	}
	res, err := chromedp.CallBrowser(actx, target.GetTargets, target.GetTargetsParams{})
	if err != nil {
		return false
	}
	for _, info := range res.TargetInfos {
		if info == nil || (info.Type != "page" && info.Type != "browser" && info.Type != "tab" && info.Type != "browser_ui") {
			return false
		}
	}
	if otherSender(res.TargetInfos, t.id) != "" {
		return false
	}
	n, err := t.livePeerConnections(actx)
	return err == nil && n == 0
}

// sendChannels says which of the page's own channels the guard cannot see
// is there, "" for none: a subframe, a service worker registered for its
// origin (or controlling it), or fetchLater, whose requests the browser
// sends for the page after its document is gone, outside the tab's
// interception. browserop's launches disable it (launchFlags); in a
// browser browserop attached to, it is there and no click is proven.
func (t *Tab) sendChannels(actx context.Context) string {
	var r struct {
		Frames     int  `json:"frames"`
		SW         bool `json:"sw"`
		FetchLater bool `json:"fetchLater"`
	}
	switch err := t.eval(actx, jsSendChannels, &r); {
	case err != nil:
		return "the page's channels could not be read"
	case r.Frames != 0:
		return "the page has a frame"
	case r.SW:
		return "the page has a service worker"
	case r.FetchLater:
		return "the page can defer a request with fetchLater"
	}
	return ""
}

// jsSendChannels counts the page's subframes and says whether a service
// worker is registered for its origin or controls it, and whether
// fetchLater exists (read in the isolated world, which the page cannot
// change: it is there when the browser has the feature).
const jsSendChannels = `async function() {
	let sw = false;
	if (navigator.serviceWorker) {
		sw = !!navigator.serviceWorker.controller || (await navigator.serviceWorker.getRegistrations()).length > 0;
	}
	return {frames: window.frames.length, sw, fetchLater: typeof fetchLater !== 'undefined'};
}`

// otherSender names another tab of the browser that could send for the
// clicked page, "" for none: one it opened (the opener's pages script
// each other), or one on the same site, which shares its storage,
// BroadcastChannel and locks (a site's tabs can elect one of them to
// send for all). Such a send is another target's request, which the
// clicked tab's interception never sees. Sites are compared by their
// hosts' last two labels, which may take two sites for one (co.uk), never
// one for two.
func otherSender(infos []*target.Info, self target.ID) string {
	var own string
	for _, info := range infos {
		if info != nil && info.TargetID == self {
			own = siteOf(info.URL)
		}
	}
	for _, info := range infos {
		if info == nil || info.TargetID == self || info.Type != "page" {
			continue
		}
		switch s := siteOf(info.URL); {
		case info.OpenerID == self:
			return "the page opened another tab"
		case own == "":
			return "the clicked page's site is not known, and another tab is open"
		case s == own:
			return "another tab is on the same site"
		}
	}
	return ""
}

// siteOf is the site of an http(s) URL (of a blob: URL, its page's): its
// host's last two labels, or the host when it is an address or a single
// label; "" for other schemes (about:blank, chrome:, data:), whose pages
// share nothing with a site.
func siteOf(raw string) string {
	raw = strings.TrimPrefix(raw, "blob:")
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return ""
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if net.ParseIP(host) != nil {
		return host
	}
	labels := strings.Split(host, ".")
	if len(labels) <= 2 {
		return host
	}
	return strings.Join(labels[len(labels)-2:], ".")
}

// livePeerConnections counts the RTCPeerConnection objects alive in the
// main world of the main frame (WebRTC sends with no CDP event).
func (t *Tab) livePeerConnections(actx context.Context) (int, error) {
	proto, err := chromedp.Call(actx, runtime.Evaluate, runtime.EvaluateParams{
		Expression: "typeof RTCPeerConnection === 'function' ? RTCPeerConnection.prototype : null", Silent: new(true),
	})
	if err != nil {
		return 0, err
	}
	if proto.ExceptionDetails != nil {
		return 0, errors.New("page script failed")
	}
	if proto.Result == nil || proto.Result.ObjectID == "" {
		return 0, nil // no WebRTC in this browser
	}
	defer chromedp.Call(actx, runtime.ReleaseObject, runtime.ReleaseObjectParams{ObjectID: proto.Result.ObjectID})
	objs, err := chromedp.Call(actx, runtime.QueryObjects, runtime.QueryObjectsParams{PrototypeObjectID: proto.Result.ObjectID})
	if err != nil || objs.Objects == nil {
		return 0, cmpErr(err, "query objects")
	}
	defer chromedp.Call(actx, runtime.ReleaseObject, runtime.ReleaseObjectParams{ObjectID: objs.Objects.ObjectID})
	n, err := chromedp.Call(actx, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
		FunctionDeclaration: "function() { return this.length; }", ObjectID: objs.Objects.ObjectID, ReturnByValue: new(true),
	})
	if err != nil || n.Result == nil {
		return 0, cmpErr(err, "count objects")
	}
	var count int
	if err := json.Unmarshal(n.Result.Value, &count); err != nil {
		return 0, err
	}
	return count, nil
}

func cmpErr(err error, what string) error {
	if err != nil {
		return err
	}
	return errors.New(what + ": no answer")
}

// proveNotSent runs after a committing click whose landing wait failed
// with why. It returns an error wrapping ErrNotSent only when nothing at
// all was seen leaving the page from the press through the teardown of
// its document; any other outcome (a sign of a send, a failed command,
// the tab gone) returns why wrapped in ErrOutcomeUnknown. It blocks every
// request of the page from the moment the landing wait failed, waits
// notSentQuiet, then navigates the tab to about:blank, drops its history
// (the clicked document can never be restored from the back-forward
// cache) and waits notSentSettle. A proven tab stays blocked: the caller
// closes it.
func (t *Tab) proveNotSent(ctx context.Context, g *sendGuard, why error) error {
	unknown := func(reason string) error {
		t.dropSendGuard(g)
		return fmt.Errorf("%w: %w (%s)", ErrOutcomeUnknown, why, reason)
	}
	if !errors.Is(why, ErrTimeout) {
		return unknown("the landing wait did not time out")
	}
	if s := t.guardSeen(g); s != "" {
		// Something may have left already: there is nothing to prove,
		// and the page is left as it is (reconciliation may read it).
		return unknown(s)
	}
	t.mu.Lock()
	g.sealed = true
	t.mu.Unlock()
	err := t.run(ctx, "prove the click sent nothing", notSentBudget, func(actx context.Context) error {
		if err := sleepCtx(actx, notSentQuiet); err != nil {
			return err
		}
		if s := t.guardSeen(g); s != "" {
			return errors.New(s)
		}
		if n, err := t.livePeerConnections(actx); err != nil || n > 0 {
			return errors.New("a peer connection may be open")
		}
		if s := t.sendChannels(actx); s != "" {
			return errors.New(s)
		}
		targets, err := chromedp.CallBrowser(actx, target.GetTargets, target.GetTargetsParams{})
		if err != nil {
			return fmt.Errorf("list targets: %w", err)
		}
		if s := otherSender(targets.TargetInfos, t.id); s != "" {
			return errors.New(s)
		}
		seq := t.snapshot().seq
		res, err := chromedp.Call(actx, page.Navigate, page.NavigateParams{URL: "about:blank"})
		if err != nil || res.ErrorText != "" {
			return errors.New("the teardown navigation failed")
		}
		err = t.waitNav(actx, func(n *navState) (bool, error) {
			return n.seq > seq && n.url == "about:blank", nil
		})
		if err != nil {
			return fmt.Errorf("wait for the blank document: %w", err)
		}
		if err := sleepCtx(actx, notSentSettle); err != nil {
			return err
		}
		if _, err := chromedp.Call(actx, page.ResetNavigationHistory, cdp.Empty{}); err != nil {
			return fmt.Errorf("drop the history: %w", err)
		}
		// Only the blank entry is left: no history navigation can bring
		// the clicked document back from the back-forward cache.
		h, err := chromedp.Call(actx, page.GetNavigationHistory, cdp.Empty{})
		if err != nil || len(h.Entries) != 1 {
			return errors.New("the clicked document is still in the history")
		}
		// A round trip through the browser: what it emitted before is in.
		if _, err := chromedp.CallBrowser(actx, target.GetTargets, target.GetTargetsParams{}); err != nil {
			return fmt.Errorf("list targets: %w", err)
		}
		if s := t.guardSeen(g); s != "" {
			return errors.New(s)
		}
		return nil
	})
	if err != nil {
		return unknown(err.Error())
	}
	if err := t.Err(); err != nil {
		return unknown("the tab went away")
	}
	return fmt.Errorf("%w: nothing left the page from the press until its document was torn down (%w)", ErrNotSent, scrub(why))
}

// guardSeen is g.seen under the lock.
func (t *Tab) guardSeen(g *sendGuard) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return g.seen(t.b.targetsCreated.Load())
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
