package browser

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/chromedp/cdproto/network"
)

// SendWatch watches a tab while an action is prepared, before its
// committing click, for what could have carried the submission already: a
// step the adapter declares that sends (a key pressed in a box that sends
// on Enter, a click on a sending control). The caller (sites) decides which
// of its counts is evidence for the action at hand; see Sends. It is armed
// by Tab.WatchSends and ends with Stop or the tab's next WatchSends.
type SendWatch struct {
	t *Tab
	// match names the requests of the submission (the landing's response),
	// nil when the action declares none.
	match *ResponseMatch
	// selector is the landing's element, "" when none; token names the
	// marks of the elements that matched it in the document seq.
	selector string
	token    string
	seq      uint64
	// The counts and the first URL change under t.mu only.
	posts, matched int
	first          string
	lost           bool
}

// Sends is what a SendWatch saw since it was armed.
type Sends struct {
	// Posts counts requests for a document (in any frame) sent with a
	// method that carries a body (a form submitted: anything but GET,
	// HEAD and OPTIONS).
	Posts int
	// Matched counts requests the watch's ResponseMatch names (method, URL
	// and body, whatever the answer).
	Matched int
	// New counts visible elements matching the landing's selector that
	// were not there when the watch was armed (or when the document it
	// last marked committed).
	New int
	// Lost: the marks of the landing's selector were lost (the page's
	// world was replaced without a commit browserop saw): New is unknown.
	Lost bool
	// First is the first counted request's URL, its query and fragment
	// cut off.
	First string
}

// WatchSends arms a SendWatch on the tab: requests from now on, and, when
// l.Selector is set, the elements matching it now (marked in browserop's
// isolated world, where page scripts cannot unmark them). A selector that
// is not valid CSS is an error, and nothing is armed.
func (t *Tab) WatchSends(ctx context.Context, l LandingSigns) (*SendWatch, error) {
	w := &SendWatch{t: t, match: l.Response, selector: l.Selector}
	if w.match != nil && w.match.URL == nil {
		return nil, fmt.Errorf("watch sends: landing response match has no URL pattern")
	}
	t.mu.Lock()
	t.sendWatch = w
	w.seq = t.nav.seq
	t.mu.Unlock()
	if w.selector != "" {
		if err := w.mark(ctx); err != nil {
			w.Stop()
			return nil, err
		}
	}
	return w, nil
}

// mark marks the elements matching the watch's selector in the current
// document.
func (w *SendWatch) mark(ctx context.Context) error {
	token := "s" + strconv.FormatUint(w.t.landSeq.Add(1), 10)
	w.t.mu.Lock()
	seq := w.t.nav.seq
	w.t.mu.Unlock()
	var bad struct {
		Sel string `json:"sel"`
	}
	err := w.t.run(ctx, "mark the landing's elements before the steps", 0, func(actx context.Context) error {
		return w.t.eval(actx, jsSendMark, &bad, w.selector, token)
	})
	if err != nil {
		return fmt.Errorf("watch sends: %w", err)
	}
	if bad.Sel != "" {
		return fmt.Errorf("watch sends: landing selector %q is not valid CSS", bad.Sel)
	}
	w.t.mu.Lock()
	w.token, w.seq = token, seq
	w.t.mu.Unlock()
	return nil
}

// Remark counts the new elements of the document being left (when it is
// still the one marked) and marks those of the current one: a step loaded
// a document, and what it shows was there before anything of the
// action's was sent from it.
func (w *SendWatch) Remark(ctx context.Context) error {
	if w.selector == "" {
		return nil
	}
	if _, err := w.Sends(ctx); err != nil {
		return err
	}
	return w.mark(ctx)
}

// ArmedSends returns the tab's armed SendWatch, nil when none is.
func (t *Tab) ArmedSends() *SendWatch {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sendWatch
}

// RemarkSends is Remark of the tab's armed SendWatch, if any.
func (t *Tab) RemarkSends(ctx context.Context) error {
	if w := t.ArmedSends(); w != nil {
		return w.Remark(ctx)
	}
	return nil
}

// Sends returns what the watch saw so far. New is read from the page; a
// document committed since the last mark (not Remarked) leaves New at what
// was counted before it, and Lost set.
func (w *SendWatch) Sends(ctx context.Context) (Sends, error) {
	t := w.t
	t.mu.Lock()
	s := Sends{Posts: w.posts, Matched: w.matched, First: w.first, Lost: w.lost}
	token, seq, cur := w.token, w.seq, t.nav.seq
	t.mu.Unlock()
	if w.selector == "" {
		return s, nil
	}
	if cur != seq {
		s.Lost = true
		return s, nil
	}
	var r struct {
		N    int  `json:"n"`
		Lost bool `json:"lost"`
	}
	err := t.run(ctx, fmt.Sprintf("read new %q", w.selector), 0, func(actx context.Context) error {
		return t.eval(actx, jsSendNew, &r, w.selector, token)
	})
	if err != nil {
		return s, err
	}
	s.New = r.N
	s.Lost = s.Lost || r.Lost
	return s, nil
}

// Stop ends the watch (the tab's next WatchSends ends it too).
func (w *SendWatch) Stop() {
	w.t.mu.Lock()
	if w.t.sendWatch == w {
		w.t.sendWatch = nil
	}
	w.t.mu.Unlock()
}

// watchSendRequest counts a request sent while a SendWatch is armed. It
// runs on the event loop.
func (t *Tab) watchSendRequest(ev *network.EventRequestWillBeSent) {
	if ev.Request == nil || ev.Type == network.ResourceTypePreflight || ev.RedirectResponse != nil {
		// A preflight is no submission; a redirect continues a request
		// already counted.
		return
	}
	t.mu.Lock()
	w := t.sendWatch
	t.mu.Unlock()
	if w == nil {
		return
	}
	post := ev.Type == network.ResourceTypeDocument && bodyMethod(ev.Request.Method)
	matched := false
	if w.match != nil && ev.Type != network.ResourceTypeDocument {
		matched, _ = w.match.matches(ev.Request)
	}
	if !post && !matched {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if post {
		w.posts++
	}
	if matched {
		w.matched++
	}
	if w.first == "" {
		w.first = redactURL(ev.Request.URL)
		if len(w.first) > maxMatchedURL {
			w.first = w.first[:maxMatchedURL]
		}
	}
}

// bodyMethod reports whether an HTTP method carries a request body that
// may change state.
func bodyMethod(m string) bool {
	switch strings.ToUpper(m) {
	case "GET", "HEAD", "OPTIONS", "":
		return false
	}
	return true
}

const (
	// jsSendMark marks the elements matching sel in a WeakSet held by the
	// isolated world's global (its own, apart from a click's landing
	// marks). It returns sel when it is not valid CSS.
	jsSendMark = `function(sel, token){
	try { __browseropQuery(document, sel); } catch (e) { return {sel: sel}; }
	const m = new WeakSet();
	for (const e of __browseropQuery(document, sel)) m.add(e);
	globalThis.__browseropSends = {token: token, marks: m};
	return {sel: ''};
}`

	// jsSendNew counts the visible elements matching sel not marked by
	// token; without those marks it reports them lost.
	jsSendNew = `function(sel, token){
	const s = globalThis.__browseropSends;
	if (!s || s.token !== token) return {n: 0, lost: true};
	let n = 0;
	for (const e of __browseropQuery(document, sel)) {
		if (s.marks.has(e)) continue;
		const r = e.getBoundingClientRect(), st = getComputedStyle(e);
		if (r.width > 0 && r.height > 0 && st.visibility !== 'hidden' && st.display !== 'none') n++;
	}
	return {n: n, lost: false};
}`
)
