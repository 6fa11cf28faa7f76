package browser

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/cdproto/network"
)

// Landing says what shows that a committing click's submission landed.
// The wait ends at the first sign that holds. The zero Landing is a
// main-frame navigation (ClickOnceAndWait's behaviour).
//
// A main-frame document that commits after the click always ends the wait,
// declared or not: a submission that navigated (a site that fell back to a
// form, a redirect to a login page) has landed somewhere, and the caller
// must look at where.
type Landing struct {
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
}

// ResponseMatch names the requests whose answer is a landing sign.
type ResponseMatch struct {
	// Method is the request method, such as "POST", matched without regard
	// to case; "" is any.
	Method string
	// URL is matched against the full request URL (without its fragment).
	// It is required.
	URL *regexp.Regexp
}

func (m *ResponseMatch) matches(method, url string) bool {
	if m.Method != "" && !strings.EqualFold(m.Method, method) {
		return false
	}
	// A URL this long is a data: URL or worse, never an API call; matching
	// it would hold up the event loop.
	return len(url) <= maxMatchedURL && m.URL.MatchString(url)
}

// maxMatchedURL bounds the URLs a ResponseMatch is tried on.
const maxMatchedURL = 64 << 10

// The signs Landed.By names.
const (
	LandedNavigation = "navigation"
	LandedElement    = "element"
	LandedURL        = "url"
	LandedResponse   = "response"
)

// Landed says which sign ended the wait.
type Landed struct {
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
}

// ClickOnceAndLand is ClickOnce followed by a wait, under the tab's action
// deadline, for the first sign of l that holds (see Landing). Before any
// input reaches the page it refuses what ClickOnce refuses (a
// *SelectorError, ErrNotClickable), a Selector that is not valid CSS and a
// Response without a URL pattern; then nothing was sent. Once the press was
// dispatched every failure returns an error wrapping ErrOutcomeUnknown: the
// wait timed out, the tab or browser went away, the navigation failed or
// ended on an error page, or a request matching l.Response failed. A
// navigation that commits with an HTTP error status is a landing, not an
// error.
func (t *Tab) ClickOnceAndLand(ctx context.Context, sel string, l Landing) (Landed, error) {
	if l.Response != nil && l.Response.URL == nil {
		return Landed{}, fmt.Errorf("click %q: landing response match has no URL pattern", sel)
	}
	return t.click(ctx, sel, &l)
}

// maxWatched bounds the requests one landing wait remembers.
const maxWatched = 64

// landWatch is the armed watch of one ClickOnceAndLand: the requests sent
// since it was armed that match its ResponseMatch, and the first outcome of
// one of them. It lives in navState and changes only under Tab.mu.
type landWatch struct {
	match *ResponseMatch // nil: no request is watched
	reqs  map[network.RequestID]string
	order []network.RequestID
	// outcome is the first answer or failure of a watched request.
	outcome *reqOutcome
}

type reqOutcome struct {
	url    string
	status int
	failed string // the network error, when the request failed
}

// watchRequest records a request sent while a watch is armed, if it
// matches. It runs on the event loop.
func (t *Tab) watchRequest(ev *network.EventRequestWillBeSent) {
	if ev.RedirectResponse != nil || ev.Request == nil {
		return // a redirect continues a request already seen
	}
	t.mu.Lock()
	w, main := t.nav.land, t.nav.mainFrame
	t.mu.Unlock()
	if w == nil || w.match == nil || (ev.Type == network.ResourceTypeDocument && ev.FrameID == main) ||
		ev.Type == network.ResourceTypePreflight {
		// A CORS preflight is answered before the request itself is sent:
		// its answer says nothing about the submission.
		return
	}
	if !w.match.matches(ev.Request.Method, ev.Request.URL) {
		return
	}
	t.updateIf(func(n *navState) bool {
		if n.land != w || w.outcome != nil {
			return false
		}
		if len(w.order) >= maxWatched {
			delete(w.reqs, w.order[0])
			w.order = w.order[1:]
		}
		w.reqs[ev.RequestID] = ev.Request.URL
		w.order = append(w.order, ev.RequestID)
		return false
	})
}

// watchOutcome records the answer (status) or failure of a watched
// request. It runs on the event loop.
func (t *Tab) watchOutcome(id network.RequestID, status int, failed string) {
	t.updateIf(func(n *navState) bool {
		w := n.land
		if w == nil || w.outcome != nil {
			return false
		}
		url, ok := w.reqs[id]
		if !ok {
			return false
		}
		w.outcome = &reqOutcome{url: url, status: status, failed: failed}
		return true
	})
}

// arm starts watching for l's signs and returns the function that stops.
func (t *Tab) arm(l *Landing) func() {
	w := &landWatch{match: l.Response, reqs: map[network.RequestID]string{}}
	t.updateIf(func(n *navState) bool { n.land = w; return false })
	return func() {
		t.updateIf(func(n *navState) bool {
			if n.land == w {
				n.land = nil
			}
			return false
		})
	}
}

// markLanding marks, in the isolated world, every element that matches
// l.Selector now, so that only a new one is a sign. It returns the token
// that names the marks; "" when there is no selector.
func (t *Tab) markLanding(actx context.Context, l *Landing) (string, error) {
	if l.Selector == "" {
		return "", nil
	}
	token := strconv.FormatUint(t.landSeq.Add(1), 10)
	if err := t.eval(actx, jsLandMark, nil, l.Selector, token); err != nil {
		return "", fmt.Errorf("landing selector %q: %w", l.Selector, err)
	}
	return token, nil
}

// landPoll is how often the landing element is looked for.
const landPoll = 50 * time.Millisecond

// waitLanding waits until a sign of l holds, from the state before the
// click.
func (t *Tab) waitLanding(actx context.Context, l *Landing, before navState, token string) (Landed, error) {
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
				return Landed{}, err
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
				t.mu.Unlock()
				if done || err != nil {
					return got, err
				}
				if n == seq {
					return Landed{By: LandedElement, URL: url}, nil
				}
				continue
			}
		}
		select {
		case <-ch:
		case <-tick:
		case <-actx.Done():
			return Landed{}, actx.Err()
		case <-t.gone.Done():
			return Landed{}, context.Cause(t.gone)
		}
	}
}

// landedBy reports whether a sign of l that the event listener sees holds
// (a commit, a response, a URL change), and which.
func landedBy(n *navState, l *Landing, before *navState) (Landed, bool, error) {
	if n.seq > before.seq {
		if n.errorPage {
			return Landed{}, false, fmt.Errorf("navigation failed: %s", n.errorText)
		}
		if !n.domReady {
			return Landed{}, false, nil // parsed first, so reads see the new page
		}
		return Landed{By: LandedNavigation, Status: n.status, URL: n.url}, true, nil
	}
	if n.failSeq > before.failSeq {
		return Landed{}, false, fmt.Errorf("navigation failed: %s", n.failText)
	}
	if w := n.land; w != nil && w.outcome != nil {
		o := w.outcome
		if o.failed != "" {
			return Landed{}, false, fmt.Errorf("request %s failed: %s", redactURL(o.url), o.failed)
		}
		return Landed{By: LandedResponse, Status: o.status, URL: n.url, ResponseURL: o.url}, true, nil
	}
	if l.URLChange && n.url != before.url {
		return Landed{By: LandedURL, URL: n.url}, true, nil
	}
	return Landed{}, false, nil
}
