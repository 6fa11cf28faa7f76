package browser

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// LandingSigns says what shows that a committing click's submission landed.
// The wait ends at the first sign that holds. The zero LandingSigns is a
// main-frame navigation (ClickOnceAndWait's behaviour).
//
// A main-frame document that commits after the click always ends the wait,
// declared or not: a submission that navigated (a site that fell back to a
// form, a redirect to a login page) has landed somewhere, and the caller
// must look at where.
type LandingSigns struct {
	// Navigation is a main-frame document commit (a form post). It is
	// always watched; declaring it only documents the caller's intent.
	Navigation bool
	// Selector is a CSS selector of an element, visible, that was not there
	// before the click (a snackbar, a new list item). Elements that match
	// it when the click is dispatched are marked in browserop's isolated
	// world, where page scripts cannot unmark them; an element the page
	// creates anew after the click (even as a copy of an old one) counts.
	Selector string
	// URLChange is the document URL changing without a load
	// (history.pushState or replaceState, a fragment).
	URLChange bool
	// Response is the answer to a request the page sends after the click
	// (fetch, XHR, or a subframe's document): its headers, with the status
	// of the last response when it was redirected. Requests are watched
	// from just before the press, so one the page sends on its own in that
	// instant counts if it matches. A request for the main frame's
	// document is not watched here: its commit is the navigation sign.
	Response *ResponseMatch
	// Watch are CSS selectors of elements the caller will look for after
	// the landing (a refusal's message): the elements that match one of
	// them when the click is dispatched are marked as Selector's are, so
	// that Tab.CountNew counts only those the page drew after the click.
	Watch []string
}

// ResponseMatch names the requests whose answer is a landing sign.
type ResponseMatch struct {
	// Method is the request method, such as "POST", matched without regard
	// to case; "" is any.
	Method string
	// URL is matched against the full request URL (without its fragment).
	// It is required.
	URL *regexp.Regexp
	// Body, when set, chooses among the matching requests the one whose
	// answer is the landing sign: its body must match too (publishing and
	// autosaving may send the same method to the same URL). It never
	// makes a request less of a submission: every request that matches
	// Method and URL counts in SubmissionRequests and Landing.Doubt,
	// whatever its body, for an adapter's body pattern may be wrong. A
	// request whose body Chrome does not report (too long, a stream) is
	// taken as matching: it may be the submission.
	Body *regexp.Regexp
	// Answer, when set, chooses among the requests Method, URL and Body
	// match the one whose answer is the landing sign by what the site
	// answered: once the request has finished loading, its answer's body
	// is read (Network.getResponseBody, at most maxAnswerBody bytes) and
	// must match too (publishing and autosaving may PUT the same URL, and
	// only the publish's answer says it published). An answer that does
	// not match is not the landing, and the wait goes on; so is an answer
	// whose body cannot be read (longer than the bound, not kept by
	// Chrome, the tab gone). A matching request that fails before it is
	// answered still ends the wait as an unknown outcome: it may have been
	// the submission. Like Body, it never makes a request less of a
	// submission (SubmissionRequests, Landing.Doubt).
	Answer *regexp.Regexp
}

// maxAnswerBody bounds the answer bodies a ResponseMatch.Answer is tried
// on; a longer answer is not a match.
const maxAnswerBody = 1 << 20

// answerReadTimeout bounds the reading of one answer's body.
const answerReadTimeout = 10 * time.Second

// matches reports whether req is one of the requests m names (method
// and URL), and whether its answer is a landing sign (its body matches
// too).
func (m *ResponseMatch) matches(req *network.Request) (request, sign bool) {
	if m.Method != "" && !strings.EqualFold(m.Method, req.Method) {
		return false, false
	}
	// A URL this long is a data: URL or worse, never an API call; matching
	// it would hold up the event loop.
	if len(req.URL) > maxMatchedURL || !m.URL.MatchString(req.URL) {
		return false, false
	}
	if m.Body == nil {
		return true, true
	}
	body, known := requestBody(req)
	return true, !known || m.Body.MatchString(body)
}

// requestBody is a request's body as Chrome reported it with the request,
// and whether it reported all of it.
func requestBody(req *network.Request) (string, bool) {
	if !req.HasPostData {
		return "", true
	}
	if len(req.PostDataEntries) == 0 {
		return "", false
	}
	var b strings.Builder
	for _, e := range req.PostDataEntries {
		if e == nil || len(e.Bytes) == 0 || b.Len()+len(e.Bytes) > maxMatchedURL {
			return "", false
		}
		b.Write(e.Bytes)
	}
	return b.String(), true
}

// maxMatchedURL bounds the URLs a ResponseMatch is tried on.
const maxMatchedURL = 64 << 10

// The signs Landing.By names.
const (
	LandedNavigation = "navigation"
	LandedElement    = "element"
	LandedURL        = "url"
	LandedResponse   = "response"
)

// Landing says which sign ended the wait.
type Landing struct {
	// By is LandedNavigation, LandedElement, LandedURL or LandedResponse.
	By string
	// Status is the HTTP status of the committed document (navigation),
	// whatever it is (4xx and 5xx included: the caller classifies it), or
	// of the matched response (response); 0 otherwise.
	Status int
	// URL is the document URL after landing.
	URL string
	// ResponseURL is the URL of the matched request (response only).
	ResponseURL string
	// Requests counts the requests that could carry the submission, sent
	// from the press until the landing: main-frame document requests (a
	// form post and its redirects are one) and requests matching
	// LandingSigns.Response. A page that sent the submission twice (a double
	// submit, a script's or a service worker's resend) shows 2 or more;
	// a landing no request led to, 0. Tab.SubmissionRequests goes on
	// counting after the landing. Chrome's network stack can re-send a
	// request without any CDP event (docs/decisions/
	// 2026-11-30-browser-no-silent-resend.md): such a resend is not in
	// this count, see Answer and Doubt.
	Requests int
	// Answer is what the network said of the response Status comes from.
	Answer Answer
}

// Answer describes the response a landing's Status comes from, as CDP's
// Network.responseReceived (and, for each redirect, requestWillBeSent's
// redirectResponse) reported it.
type Answer struct {
	// Counted is true when Status is the answer to a request in
	// Landing.Requests: for a navigation, the committed document is the
	// one a main-frame request sent after the press loaded; for a
	// response, always. It is false for a document that committed without
	// a request seen after the press (about:blank, a page restored from
	// the back-forward cache) and for element and URL landings.
	Counted bool
	// Protocol is the network protocol the answer came over ("http/1.1",
	// "h2", "h3"); when a redirect of the request came over another than
	// HTTP/1.x, that one. "" when Chrome did not say.
	Protocol string
	// ConnectionReused is true when the request, or one of its redirects,
	// was answered on a connection that had been used (or opened) before:
	// the connections on which Chrome re-sends a request by itself.
	ConnectionReused bool
	// FromServiceWorker is true when a service worker answered (it may
	// have sent the request any number of times).
	FromServiceWorker bool
	// FromCache is true when the answer came from the disk or prefetch
	// cache or from early hints: not from the server, for this request.
	FromCache bool
	// Redirected is true when the request was redirected: the page is the
	// answer to a request the redirect made (a 307 or 308 sends the body
	// again, a 303 turns it into a GET), not the site's answer to the
	// submission itself.
	Redirected bool
}

// add records one response of the request (a redirect or its answer).
func (a *Answer) add(r *network.Response) {
	if r == nil {
		return
	}
	if a.Protocol == "" || isHTTP1(a.Protocol) {
		a.Protocol = r.Protocol
	}
	a.ConnectionReused = a.ConnectionReused || r.ConnectionReused
	a.FromServiceWorker = a.FromServiceWorker || r.FromServiceWorker
	a.FromCache = a.FromCache || r.FromDiskCache || r.FromPrefetchCache || r.FromEarlyHints
}

// isHTTP1 reports whether a CDP protocol name is HTTP/1.0 or HTTP/1.1.
func isHTTP1(p string) bool {
	p = strings.ToLower(p)
	return p == "http/1.1" || p == "http/1.0"
}

// Doubt returns why the landing's Status (and the page it committed) may
// not be the site's answer to one submission, or "" when it is.
// requests is the number of the submission's requests counted so far (at
// least l.Requests; see Tab.SubmissionRequests). It is the answer to one
// submission only when the landing is a navigation or a response, exactly
// one request was seen, Status answers that request (Answer.Counted),
// every response of it came over HTTP/1.x, on a connection that was not
// reused, neither from a cache nor from a service worker, and it was not
// redirected (a site that commits and redirects, with a 303 to its
// success page or a 307 that makes the browser send the form again, shows
// a page that answers the redirect's request). Over HTTP/2 or
// HTTP/3, on a reused connection or behind a service worker, Chrome or
// the worker may have sent the request again without any event; over
// HTTP/1.x on fresh connections it still may in one case no event shows
// (a first attempt on a socket that died before any answer, re-sent on a
// new one: docs/decisions/2026-12-02-refusals-answer-one-submission.md).
// The reasons are fixed phrases (with a count or Chrome's protocol name).
func (l Landing) Doubt(requests int) string {
	requests = max(requests, l.Requests)
	a := l.Answer
	switch {
	case l.By != LandedNavigation && l.By != LandedResponse:
		return "the landing was no answer to a request"
	case requests == 0:
		return "no request of the submission was seen"
	case requests > 1:
		return fmt.Sprintf("%d requests of the submission were seen", requests)
	case !a.Counted:
		return "the page is not the answer to the submission's request"
	case a.FromServiceWorker:
		return "a service worker answered the submission"
	case a.FromCache:
		return "the answer came from a cache"
	case a.Protocol == "":
		return "the answer's protocol is unknown"
	case !isHTTP1(a.Protocol):
		return fmt.Sprintf("the answer came over %s, where a request may be sent again unseen", excerptProto(a.Protocol))
	case a.ConnectionReused:
		return "the request went out on a reused connection, where it may be sent again unseen"
	case a.Redirected:
		return "the submission was redirected, so the page answers a request after it, not the submission"
	}
	return ""
}

// excerptProto keeps a protocol name short and printable.
func excerptProto(p string) string {
	p = strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e {
			return -1
		}
		return r
	}, p)
	if len(p) > 16 {
		p = p[:16]
	}
	return p
}

// ClickOnceAndLand is ClickOnce followed by a wait, under the tab's action
// deadline, for the first sign of l that holds (see LandingSigns). Before any
// input reaches the page it refuses what ClickOnce refuses (a
// *SelectorError, ErrNotClickable), a Selector that is not valid CSS and a
// Response without a URL pattern; then nothing was sent. Once the press was
// dispatched every failure returns an error wrapping ErrOutcomeUnknown: the
// wait timed out, the tab or browser went away, the navigation failed or
// ended on an error page, or a request matching l.Response failed. A
// navigation that commits with an HTTP error status is a landing, not an
// error. The landing counts the requests that could carry the submission
// (Landing.Requests) and says where its status came from (Landing.Answer):
// Landing.Doubt tells whether the status is the site's answer to one
// submission.
func (t *Tab) ClickOnceAndLand(ctx context.Context, sel string, l LandingSigns) (Landing, error) {
	if l.Response != nil && l.Response.URL == nil {
		return Landing{}, fmt.Errorf("click %q: landing response match has no URL pattern", sel)
	}
	return t.click(ctx, sel, &l)
}

// maxWatched bounds the requests of each kind one landing watch remembers
// (it counts them all).
const maxWatched = 64

// landWatch is the watch of one ClickOnceAndLand, armed just before its
// press: the main-frame document requests and the requests matching its
// ResponseMatch sent since, and the first outcome of a matching one. It
// stays in navState after the landing, counting, until the tab's next
// ClickOnceAndLand or Navigate (SubmissionRequests). It changes only under
// Tab.mu.
type landWatch struct {
	match *ResponseMatch // nil: no request is matched
	// reqs are the requests matching match, docs the main-frame document
	// requests; matched and docCount count them all.
	reqs, docs        watchedSet
	matched, docCount int
	// outcome is the first answer or failure of a matching request.
	outcome *reqOutcome
	// token names the element marks of this click (markLanding); seq is
	// the main-frame commit count at the press.
	token string
	seq   uint64
}

// requests is how many requests that could carry the submission were
// seen.
func (w *landWatch) requests() int { return w.matched + w.docCount }

// watchedSet remembers up to maxWatched requests, oldest dropped first.
type watchedSet struct {
	m     map[network.RequestID]*watchedReq
	order []network.RequestID
}

type watchedReq struct {
	url    string
	loader cdp.LoaderID
	answer Answer
	// sign: its answer may be the landing (ResponseMatch.Body).
	sign bool
	// status is the status of its answer, kept while its body is still
	// to be read (ResponseMatch.Answer); answered says it came, reading
	// that its body is being read.
	status            int
	answered, reading bool
}

func (s *watchedSet) put(id network.RequestID, r *watchedReq) {
	if s.m == nil {
		s.m = map[network.RequestID]*watchedReq{}
	}
	if len(s.order) >= maxWatched {
		delete(s.m, s.order[0])
		s.order = s.order[1:]
	}
	s.m[id] = r
	s.order = append(s.order, id)
}

func (s *watchedSet) get(id network.RequestID) *watchedReq { return s.m[id] }

type reqOutcome struct {
	url    string
	status int
	failed string // the network error, when the request failed
	answer Answer
}

// watchRequest records a request sent while a watch is armed: a
// main-frame document request, or one matching the watch's ResponseMatch;
// a redirect adds its response to the request it continues. It runs on
// the event loop.
func (t *Tab) watchRequest(ev *network.EventRequestWillBeSent) {
	if ev.Request == nil || ev.Type == network.ResourceTypePreflight {
		// A CORS preflight is answered before the request itself is sent:
		// its answer says nothing about the submission.
		return
	}
	t.mu.Lock()
	w, main := t.nav.land, t.nav.mainFrame
	t.mu.Unlock()
	if w == nil {
		return
	}
	doc := ev.Type == network.ResourceTypeDocument && ev.FrameID == main
	matched, sign := false, false
	if !doc && ev.RedirectResponse == nil && w.match != nil {
		// Matched outside the lock: a long URL takes a moment.
		matched, sign = w.match.matches(ev.Request)
	}
	t.updateIf(func(n *navState) bool {
		if n.land != w {
			return false
		}
		if ev.RedirectResponse != nil {
			// A redirect continues a request already seen (or not).
			for _, r := range []*watchedReq{w.docs.get(ev.RequestID), w.reqs.get(ev.RequestID)} {
				if r != nil {
					r.answer.add(ev.RedirectResponse)
					r.answer.Redirected = true
				}
			}
			return false
		}
		switch {
		case doc:
			w.docCount++
			w.docs.put(ev.RequestID, &watchedReq{url: ev.Request.URL, loader: ev.LoaderID})
		case matched:
			w.matched++
			w.reqs.put(ev.RequestID, &watchedReq{url: ev.Request.URL, sign: sign})
		}
		return false
	})
}

// watchAnswer records the answer to a watched request; the first answer
// of a matching request is the watch's outcome. It runs on the event loop.
func (t *Tab) watchAnswer(id network.RequestID, resp *network.Response) {
	t.updateIf(func(n *navState) bool {
		w := n.land
		if w == nil {
			return false
		}
		if r := w.docs.get(id); r != nil {
			r.answer.add(resp) // the commit wakes the waiter
		}
		r := w.reqs.get(id)
		if r == nil {
			return false
		}
		r.answer.add(resp)
		if w.outcome != nil || !r.sign {
			return false
		}
		if w.match != nil && w.match.Answer != nil {
			// The landing, if it is, once its body has been read.
			r.status, r.answered = int(resp.Status), true
			return false
		}
		w.outcome = &reqOutcome{url: r.url, status: int(resp.Status), answer: r.answer}
		return true
	})
}

// watchFinished starts reading the answer's body of a watched request
// that has finished loading, when the watch's ResponseMatch.Answer
// decides whether it is the landing. It runs on the event loop, which
// cannot send commands: the body is read from another goroutine.
func (t *Tab) watchFinished(ev *network.EventLoadingFinished) {
	var w *landWatch
	var r *watchedReq
	t.updateIf(func(n *navState) bool {
		if n.land == nil || n.land.outcome != nil || n.land.match == nil || n.land.match.Answer == nil {
			return false
		}
		got := n.land.reqs.get(ev.RequestID)
		if got == nil || !got.sign || !got.answered || got.reading {
			return false
		}
		got.reading = true
		w, r = n.land, got
		return false
	})
	if r == nil {
		return
	}
	if ev.EncodedDataLength > maxAnswerBody {
		return // longer than any answer tried: not the landing
	}
	go t.readAnswer(w, r, ev.RequestID)
}

// readAnswer reads the body of r's answer and, when it matches the
// watch's ResponseMatch.Answer, makes r's answer the watch's outcome
// (unless the watch ended or another request landed first). A body that
// cannot be read, or is longer than maxAnswerBody, is no match.
func (t *Tab) readAnswer(w *landWatch, r *watchedReq, id network.RequestID) {
	ctx, cancel := context.WithTimeout(t.ctx, answerReadTimeout)
	defer cancel()
	res, err := chromedp.Call(ctx, network.GetResponseBody, network.GetResponseBodyParams{RequestID: id})
	if err != nil || len(res.Body) > maxAnswerBody || !w.match.Answer.Match(res.Body) {
		return
	}
	t.updateIf(func(n *navState) bool {
		if n.land != w || w.outcome != nil {
			return false
		}
		w.outcome = &reqOutcome{url: r.url, status: r.status, answer: r.answer}
		return true
	})
}

// watchFailed records the failure of a watched request. It runs on the
// event loop.
func (t *Tab) watchFailed(id network.RequestID, failed string) {
	t.updateIf(func(n *navState) bool {
		w := n.land
		if w == nil || w.outcome != nil {
			return false
		}
		r := w.reqs.get(id)
		if r == nil || !r.sign {
			return false
		}
		w.outcome = &reqOutcome{url: r.url, failed: failed}
		return true
	})
}

// arm starts watching for l's signs, replacing the watch of an earlier
// click; token names the click's element marks.
func (t *Tab) arm(l *LandingSigns, token string) {
	w := &landWatch{match: l.Response, token: token}
	t.updateIf(func(n *navState) bool {
		w.seq = n.seq
		n.land = w
		return false
	})
}

// disarm ends the watch of the last ClickOnceAndLand.
func (t *Tab) disarm() {
	t.updateIf(func(n *navState) bool { n.land = nil; return false })
}

// SubmissionRequests returns how many requests that could carry the
// submission of the tab's last ClickOnceAndLand have been sent from its
// press until now: what Landing.Requests counts at the landing, counted on
// after it, until the tab's next ClickOnceAndLand or Navigate. A page
// script that sends the submission again once the site answered (a retry
// with a fresh token, a double submit) shows here. 0 when no watch is
// left.
func (t *Tab) SubmissionRequests() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.nav.land == nil {
		return 0
	}
	return t.nav.land.requests()
}

// CountNew returns how many visible elements match sel that the page drew
// after the press of the tab's last ClickOnceAndLand: after a navigation
// since the press, every visible match (the document is new); otherwise
// the visible matches that were not there at the press, which needs sel
// among that landing's Selector or Watch. Without a landing to compare
// with (none, or its marks were lost with the page's world), it returns 0:
// nothing is known to be new. It never waits.
func (t *Tab) CountNew(ctx context.Context, sel string) (int, error) {
	texts, err := t.TextsNew(ctx, sel)
	return len(texts), err
}

// TextsNew returns the visible texts of the elements CountNew counts, in
// document order: what the page drew after the press, never a message
// left from before it.
func (t *Tab) TextsNew(ctx context.Context, sel string) ([]string, error) {
	t.mu.Lock()
	w, seq := t.nav.land, t.nav.seq
	t.mu.Unlock()
	if w == nil {
		return nil, nil
	}
	token := w.token
	if seq > w.seq {
		token = "" // a new document: nothing in it was marked
	}
	var r struct {
		N     int      `json:"n"`
		Texts []string `json:"texts"`
		Lost  bool     `json:"lost"`
	}
	err := t.run(ctx, fmt.Sprintf("read new %q", sel), 0, func(actx context.Context) error {
		return t.eval(actx, jsCountNew, &r, sel, token)
	})
	if err != nil || r.Lost {
		return nil, err
	}
	return r.Texts, nil
}

// markLanding marks, in the isolated world, every element that matches
// l.Selector or one of l.Watch now, so that only a new one is a sign (or
// counts for CountNew). It returns the token that names the marks; ""
// when there is nothing to mark.
func (t *Tab) markLanding(actx context.Context, l *LandingSigns) (string, error) {
	sels := l.Watch
	if l.Selector != "" {
		sels = append([]string{l.Selector}, sels...)
	}
	if len(sels) == 0 {
		return "", nil
	}
	token := strconv.FormatUint(t.landSeq.Add(1), 10)
	var bad struct {
		Sel string `json:"sel"`
	}
	if err := t.eval(actx, jsLandMark, &bad, sels, token); err != nil {
		return "", fmt.Errorf("landing selectors: %w", err)
	}
	if bad.Sel != "" {
		return "", fmt.Errorf("landing selector %q is not valid CSS", bad.Sel)
	}
	return token, nil
}

// landPoll is how often the landing element is looked for.
const landPoll = 50 * time.Millisecond

// waitLanding waits until a sign of l holds, from the state before the
// click.
func (t *Tab) waitLanding(actx context.Context, l *LandingSigns, before navState, token string) (Landing, error) {
	var tick <-chan time.Time
	if l.Selector != "" {
		tk := time.NewTicker(landPoll)
		defer tk.Stop()
		tick = tk.C
	}
	for {
		t.mu.Lock()
		got, done, err := landedBy(&t.nav, l, &before)
		ch, seq := t.changed, t.nav.seq
		t.mu.Unlock()
		if done || err != nil {
			return got, err
		}
		if l.Selector != "" && seq == before.seq {
			var r struct {
				Found bool `json:"found"`
			}
			if err := t.eval(actx, jsLandElement, &r, l.Selector, token); err != nil && !isStaleContext(err) {
				return Landing{}, err
			}
			if r.Found {
				// The events that came before the eval's answer were
				// seen first: a response or commit that preceded the
				// element is the earlier sign. A document that committed
				// meanwhile decides on the next turn.
				t.mu.Lock()
				got, done, err := landedBy(&t.nav, l, &before)
				n := t.nav.seq
				url := t.nav.url
				reqs := requestsOf(&t.nav)
				t.mu.Unlock()
				if done || err != nil {
					return got, err
				}
				if n == seq {
					return Landing{By: LandedElement, URL: url, Requests: reqs}, nil
				}
				continue
			}
		}
		select {
		case <-ch:
		case <-tick:
		case <-actx.Done():
			return Landing{}, actx.Err()
		case <-t.gone.Done():
			return Landing{}, context.Cause(t.gone)
		}
	}
}

// requestsOf is the request count of the armed watch, 0 without one.
func requestsOf(n *navState) int {
	if n.land == nil {
		return 0
	}
	return n.land.requests()
}

// landedBy reports whether a sign of l that the event listener sees holds
// (a commit, a response, a URL change), and which.
func landedBy(n *navState, l *LandingSigns, before *navState) (Landing, bool, error) {
	if n.seq > before.seq {
		if n.errorPage {
			return Landing{}, false, fmt.Errorf("navigation failed: %s", n.errorText)
		}
		if !n.domReady {
			return Landing{}, false, nil // parsed first, so reads see the new page
		}
		got := Landing{By: LandedNavigation, Status: n.status, URL: n.url}
		if w := n.land; w != nil {
			got.Requests = w.requests()
			for _, id := range w.docs.order {
				if r := w.docs.get(id); r != nil && r.loader != "" && r.loader == n.loaderID {
					got.Answer = r.answer
					got.Answer.Counted = true
				}
			}
		}
		return got, true, nil
	}
	if n.failSeq > before.failSeq {
		if strings.Contains(n.failText, "ERR_ABORTED") {
			return Landing{}, false, fmt.Errorf("navigation failed: %s: %w", n.failText, ErrAborted)
		}
		return Landing{}, false, fmt.Errorf("navigation failed: %s", n.failText)
	}
	if w := n.land; w != nil && w.outcome != nil {
		o := w.outcome
		if o.failed != "" {
			return Landing{}, false, fmt.Errorf("request %s failed: %s", redactURL(o.url), o.failed)
		}
		a := o.answer
		a.Counted = true
		return Landing{By: LandedResponse, Status: o.status, URL: n.url, ResponseURL: o.url, Requests: w.requests(), Answer: a}, true, nil
	}
	if l.URLChange && n.url != before.url {
		return Landing{By: LandedURL, URL: n.url, Requests: requestsOf(n)}, true, nil
	}
	return Landing{}, false, nil
}
