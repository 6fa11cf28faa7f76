package browser_test

import (
	"regexp"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/browser"
)

// TestClickOnceAndLand: each sign a publishing UI gives ends the wait, with
// what it saw; a submission that navigated ends it whatever was declared;
// and whatever fails after the click is an unknown outcome.
func TestClickOnceAndLand(t *testing.T) {
	s := newSite(t)
	_, tab := newTab(t, "")
	ctx := ctxT(t)
	echo := &browser.ResponseMatch{Method: "POST", URL: regexp.MustCompile(`/api/echo$`)}
	anyAPI := &browser.ResponseMatch{URL: regexp.MustCompile(`/api/`)}
	open := func(t *testing.T) {
		t.Helper()
		_, err := tab.Navigate(ctx, s.URL+"/land")
		require.NoError(t, err)
	}

	t.Run("Response", func(t *testing.T) {
		open(t)
		s.api.Store(0)
		var hooked atomic.Int64
		tab.OnClickDispatched(func() { hooked.Add(1) })
		defer tab.OnClickDispatched(nil)
		got, err := tab.ClickOnceAndLand(ctx, "#ok", browser.LandingSigns{Response: echo})
		require.NoError(t, err)
		require.Equal(t, browser.LandedResponse, got.By)
		require.Equal(t, 201, got.Status)
		require.Equal(t, s.URL+"/api/echo", got.ResponseURL)
		require.EqualValues(t, 1, s.api.Load())
		require.EqualValues(t, 1, hooked.Load(), "the click hook runs once, after the dispatch")
	})
	t.Run("RefusalIsALanding", func(t *testing.T) {
		open(t)
		got, err := tab.ClickOnceAndLand(ctx, "#conflict", browser.LandingSigns{Response: anyAPI})
		require.NoError(t, err, "the caller classifies a 409")
		require.Equal(t, browser.LandedResponse, got.By)
		require.Equal(t, 409, got.Status)
	})
	t.Run("MethodAndURLFilter", func(t *testing.T) {
		// A GET to /api/other goes first; only the POST matches.
		open(t)
		got, err := tab.ClickOnceAndLand(ctx, "#other-first", browser.LandingSigns{
			Response: &browser.ResponseMatch{Method: "post", URL: regexp.MustCompile(`/api/`)},
		})
		require.NoError(t, err)
		require.Equal(t, browser.LandedResponse, got.By)
		require.Equal(t, s.URL+"/api/echo", got.ResponseURL)
	})
	t.Run("Element", func(t *testing.T) {
		// The toast shows after the response, which is not declared.
		open(t)
		got, err := tab.ClickOnceAndLand(ctx, "#ok", browser.LandingSigns{Selector: "#toast"})
		require.NoError(t, err)
		require.Equal(t, browser.LandedElement, got.By)
		require.Zero(t, got.Status)
		require.Equal(t, s.URL+"/land?published=1", got.URL, "the URL the page put in place before its toast")
	})
	t.Run("ElementNotThereBefore", func(t *testing.T) {
		// p.note is on the page before the click: it is no sign.
		open(t)
		tab.SetActionTimeout(800 * time.Millisecond)
		_, err := tab.ClickOnceAndLand(ctx, "#noop", browser.LandingSigns{Selector: ".note"})
		tab.SetActionTimeout(0)
		require.ErrorIs(t, err, browser.ErrOutcomeUnknown)
		require.ErrorIs(t, err, browser.ErrTimeout)

		got, err := tab.ClickOnceAndLand(ctx, "#note", browser.LandingSigns{Selector: ".note"})
		require.NoError(t, err)
		require.Equal(t, browser.LandedElement, got.By)
	})
	t.Run("URLChange", func(t *testing.T) {
		open(t)
		got, err := tab.ClickOnceAndLand(ctx, "#push", browser.LandingSigns{URLChange: true})
		require.NoError(t, err)
		require.Equal(t, browser.LandedURL, got.By)
		require.Equal(t, s.URL+"/land?pushed=1", got.URL)
		u, err := tab.URL(ctx)
		require.NoError(t, err)
		require.Equal(t, got.URL, u)
	})
	t.Run("UndeclaredNavigation", func(t *testing.T) {
		// The site fell back to a form post: it landed, somewhere.
		open(t)
		s.posts.Store(0)
		got, err := tab.ClickOnceAndLand(ctx, "#form", browser.LandingSigns{Selector: "#toast", Response: echo})
		require.NoError(t, err)
		require.Equal(t, browser.LandedNavigation, got.By)
		require.Equal(t, 200, got.Status)
		require.Equal(t, s.URL+"/done?text=form", got.URL)
		require.EqualValues(t, 1, s.posts.Load())
	})
	t.Run("NavigationErrorStatus", func(t *testing.T) {
		// The zero Landing is a navigation; a 500 document is a landing the
		// caller classifies, not an error.
		open(t)
		got, err := tab.ClickOnceAndLand(ctx, "#form500", browser.LandingSigns{})
		require.NoError(t, err)
		require.Equal(t, browser.LandedNavigation, got.By)
		require.Equal(t, 500, got.Status)
		require.Equal(t, s.URL+"/status500", got.URL)
		require.Equal(t, 1, got.Requests)
		require.True(t, got.Answer.Counted)
	})
	t.Run("ResponseFailedIsOutcomeUnknown", func(t *testing.T) {
		open(t)
		s.api.Store(0)
		_, err := tab.ClickOnceAndLand(ctx, "#drop", browser.LandingSigns{Response: anyAPI, Selector: "#toast"})
		require.ErrorIs(t, err, browser.ErrOutcomeUnknown)
		require.NotErrorIs(t, err, browser.ErrTimeout)
		require.EqualValues(t, 1, s.api.Load(), "one click, one request")
	})
	t.Run("HangIsOutcomeUnknown", func(t *testing.T) {
		open(t)
		s.api.Store(0)
		tab.SetActionTimeout(time.Second)
		_, err := tab.ClickOnceAndLand(ctx, "#hang", browser.LandingSigns{Response: anyAPI})
		tab.SetActionTimeout(0)
		require.ErrorIs(t, err, browser.ErrOutcomeUnknown)
		require.ErrorIs(t, err, browser.ErrTimeout)
		require.Eventually(t, func() bool { return s.api.Load() >= 1 }, 15*time.Second, 10*time.Millisecond)
		require.EqualValues(t, 1, s.api.Load(), "sent once")
	})
	t.Run("RefusedBeforeTheClick", func(t *testing.T) {
		open(t)
		s.api.Store(0)
		_, err := tab.ClickOnceAndLand(ctx, "#hidden", browser.LandingSigns{Response: anyAPI})
		require.ErrorIs(t, err, browser.ErrNotClickable)
		require.NotErrorIs(t, err, browser.ErrOutcomeUnknown)
		_, err = tab.ClickOnceAndLand(ctx, "button", browser.LandingSigns{Response: anyAPI})
		require.ErrorIs(t, err, browser.ErrSelectorAmbiguous)
		require.NotErrorIs(t, err, browser.ErrOutcomeUnknown)
		_, err = tab.ClickOnceAndLand(ctx, "#ok", browser.LandingSigns{Selector: "[[["})
		require.Error(t, err)
		require.NotErrorIs(t, err, browser.ErrOutcomeUnknown)
		_, err = tab.ClickOnceAndLand(ctx, "#ok", browser.LandingSigns{Response: &browser.ResponseMatch{Method: "POST"}})
		require.Error(t, err)
		require.NotErrorIs(t, err, browser.ErrOutcomeUnknown)
		n, err := tab.Count(ctx, "#toast")
		require.NoError(t, err)
		require.Zero(t, n)
		require.Zero(t, s.api.Load(), "a refused click sends nothing")
	})
}

// TestLandingCountsTheSubmission: a landing says how many requests could
// have carried the submission, from the press, and whether its status is
// the answer to one of them: one request answered once over HTTP/1.1 on a
// fresh connection is the only answer that can prove a refusal; a double
// submit, a resend once answered, or a landing no request led to cannot.
func TestLandingCountsTheSubmission(t *testing.T) {
	s := newSite(t)
	_, tab := newTab(t, "")
	ctx := ctxT(t)
	anyAPI := &browser.ResponseMatch{URL: regexp.MustCompile(`/api/`)}
	open := func(t *testing.T) {
		t.Helper()
		_, err := tab.Navigate(ctx, s.URL+"/land")
		require.NoError(t, err)
	}

	t.Run("ResponseAnsweredOnce", func(t *testing.T) {
		open(t)
		got, err := tab.ClickOnceAndLand(ctx, "#conflict", browser.LandingSigns{Response: anyAPI})
		require.NoError(t, err)
		require.Equal(t, browser.LandedResponse, got.By)
		require.Equal(t, 409, got.Status)
		require.Equal(t, 1, got.Requests)
		require.True(t, got.Answer.Counted)
		require.Equal(t, "http/1.1", got.Answer.Protocol)
		require.False(t, got.Answer.ConnectionReused, "owned tabs ask for Connection: close")
		require.False(t, got.Answer.FromServiceWorker || got.Answer.FromCache)
		time.Sleep(300 * time.Millisecond)
		require.Equal(t, 1, tab.SubmissionRequests())
		require.Empty(t, got.Doubt(tab.SubmissionRequests()), "the answer to one submission")
	})
	t.Run("DoubleSubmit", func(t *testing.T) {
		open(t)
		s.api.Store(0)
		got, err := tab.ClickOnceAndLand(ctx, "#conflict-twice", browser.LandingSigns{Response: anyAPI})
		require.NoError(t, err)
		require.Equal(t, 409, got.Status)
		require.Eventually(t, func() bool { return tab.SubmissionRequests() == 2 }, 5*time.Second, 20*time.Millisecond)
		require.Equal(t, "2 requests of the submission were seen", got.Doubt(tab.SubmissionRequests()))
		// Chrome reports a request as it sends it: on a busy machine the
		// server counts it a moment later.
		require.Eventually(t, func() bool { return s.api.Load() == 2 }, 5*time.Second, 20*time.Millisecond)
	})
	t.Run("ResendOnceAnswered", func(t *testing.T) {
		// The page sends the submission again after the site answered
		// (an editor's retry with a fresh token): counted after the
		// landing.
		open(t)
		got, err := tab.ClickOnceAndLand(ctx, "#conflict-resend", browser.LandingSigns{Response: anyAPI})
		require.NoError(t, err)
		require.Equal(t, 409, got.Status)
		require.Equal(t, 1, got.Requests, "one request when the answer came")
		require.Eventually(t, func() bool { return tab.SubmissionRequests() == 2 }, 5*time.Second, 20*time.Millisecond)
		require.NotEmpty(t, got.Doubt(tab.SubmissionRequests()))
	})
	t.Run("FormAnsweredOnce", func(t *testing.T) {
		open(t)
		s.posts.Store(0)
		got, err := tab.ClickOnceAndLand(ctx, "#refuse", browser.LandingSigns{})
		require.NoError(t, err)
		require.Equal(t, browser.LandedNavigation, got.By)
		require.Equal(t, 429, got.Status)
		require.Equal(t, 1, got.Requests)
		require.True(t, got.Answer.Counted, "the committed document is the answer to the form's request")
		require.Equal(t, "http/1.1", got.Answer.Protocol)
		require.Empty(t, got.Doubt(tab.SubmissionRequests()))
		require.EqualValues(t, 1, s.posts.Load())
		n, err := tab.CountNew(ctx, "#refused")
		require.NoError(t, err)
		require.Equal(t, 1, n, "in a new document every element is new")
	})
	t.Run("FormSubmittedTwice", func(t *testing.T) {
		// The button submits its form, and its script submits it again:
		// two document requests, the first cancelled by the second.
		open(t)
		s.posts.Store(0)
		got, err := tab.ClickOnceAndLand(ctx, "#refuse-twice", browser.LandingSigns{})
		require.Eventually(t, func() bool { return tab.SubmissionRequests() >= 2 }, 5*time.Second, 20*time.Millisecond)
		if err != nil {
			// Chrome reported the first one cancelled before it sent the
			// second: a failed navigation, as unknown as two requests.
			require.ErrorIs(t, err, browser.ErrOutcomeUnknown)
			return
		}
		require.Equal(t, 429, got.Status)
		require.Contains(t, got.Doubt(tab.SubmissionRequests()), "requests of the submission were seen")
	})
	t.Run("NoRequest", func(t *testing.T) {
		open(t)
		got, err := tab.ClickOnceAndLand(ctx, "#blank", browser.LandingSigns{})
		require.NoError(t, err)
		require.Equal(t, browser.LandedNavigation, got.By)
		require.Zero(t, got.Requests)
		require.False(t, got.Answer.Counted)
		require.Equal(t, "no request of the submission was seen", got.Doubt(tab.SubmissionRequests()))
	})
	t.Run("NavigateEndsTheWatch", func(t *testing.T) {
		open(t)
		_, err := tab.ClickOnceAndLand(ctx, "#conflict", browser.LandingSigns{Response: anyAPI})
		require.NoError(t, err)
		require.Equal(t, 1, tab.SubmissionRequests())
		open(t)
		require.Zero(t, tab.SubmissionRequests())
		n, err := tab.CountNew(ctx, ".note")
		require.NoError(t, err)
		require.Zero(t, n, "no landing to compare with: nothing is known to be new")
	})
	t.Run("CountNewInTheSamePage", func(t *testing.T) {
		// .note is on the page before the click; a watched selector
		// counts only what the page draws after it.
		open(t)
		_, err := tab.ClickOnceAndLand(ctx, "#conflict", browser.LandingSigns{Response: anyAPI, Watch: []string{".note"}})
		require.NoError(t, err)
		all, err := tab.Count(ctx, ".note")
		require.NoError(t, err)
		require.Equal(t, 1, all)
		n, err := tab.CountNew(ctx, ".note")
		require.NoError(t, err)
		require.Zero(t, n, "the old note is no answer to the click")

		open(t)
		_, err = tab.ClickOnceAndLand(ctx, "#note", browser.LandingSigns{Selector: ".note", Watch: []string{".note"}})
		require.NoError(t, err)
		n, err = tab.CountNew(ctx, ".note")
		require.NoError(t, err)
		require.Equal(t, 1, n, "the note drawn after the click")

		open(t)
		_, err = tab.ClickOnceAndLand(ctx, "#ok", browser.LandingSigns{Response: anyAPI, Watch: []string{"[[["}})
		require.Error(t, err, "a watched selector that is not CSS is refused before the click")
		require.NotErrorIs(t, err, browser.ErrOutcomeUnknown)
	})
}

// TestLandedDoubt: what a landing's answer proves, case by case.
func TestLandedDoubt(t *testing.T) {
	one := browser.Answer{Counted: true, Protocol: "http/1.1"}
	for _, tc := range []struct {
		name string
		l    browser.Landing
		n    int
		want string
	}{
		{"OneAnswer", browser.Landing{By: browser.LandedResponse, Status: 409, Requests: 1, Answer: one}, 1, ""},
		{"HTTP10", browser.Landing{By: browser.LandedNavigation, Status: 429, Requests: 1, Answer: browser.Answer{Counted: true, Protocol: "HTTP/1.0"}}, 1, ""},
		{"MoreLater", browser.Landing{By: browser.LandedResponse, Status: 409, Requests: 1, Answer: one}, 3, "3 requests of the submission were seen"},
		{"CountNeverShrinks", browser.Landing{By: browser.LandedResponse, Status: 409, Requests: 2, Answer: one}, 0, "2 requests of the submission were seen"},
		{"None", browser.Landing{By: browser.LandedNavigation, Status: 200}, 0, "no request of the submission was seen"},
		{"Element", browser.Landing{By: browser.LandedElement, Requests: 1}, 1, "the landing was no answer to a request"},
		{"URL", browser.Landing{By: browser.LandedURL, Requests: 1}, 1, "the landing was no answer to a request"},
		{"NotItsAnswer", browser.Landing{By: browser.LandedNavigation, Status: 429, Requests: 1, Answer: browser.Answer{Protocol: "http/1.1"}}, 1, "the page is not the answer to the submission's request"},
		{"H2", browser.Landing{By: browser.LandedResponse, Status: 409, Requests: 1, Answer: browser.Answer{Counted: true, Protocol: "h2"}}, 1, "the answer came over h2, where a request may be sent again unseen"},
		{"H3", browser.Landing{By: browser.LandedResponse, Status: 409, Requests: 1, Answer: browser.Answer{Counted: true, Protocol: "h3"}}, 1, "the answer came over h3, where a request may be sent again unseen"},
		{"QUIC", browser.Landing{By: browser.LandedResponse, Status: 409, Requests: 1, Answer: browser.Answer{Counted: true, Protocol: "quic/1+spdy/3"}}, 1, "the answer came over quic/1+spdy/3, where a request may be sent again unseen"},
		{"NoProtocol", browser.Landing{By: browser.LandedResponse, Status: 409, Requests: 1, Answer: browser.Answer{Counted: true}}, 1, "the answer's protocol is unknown"},
		{"Reused", browser.Landing{By: browser.LandedResponse, Status: 409, Requests: 1, Answer: browser.Answer{Counted: true, Protocol: "http/1.1", ConnectionReused: true}}, 1, "the request went out on a reused connection, where it may be sent again unseen"},
		{"ServiceWorker", browser.Landing{By: browser.LandedResponse, Status: 409, Requests: 1, Answer: browser.Answer{Counted: true, Protocol: "http/1.1", FromServiceWorker: true}}, 1, "a service worker answered the submission"},
		{"Cache", browser.Landing{By: browser.LandedNavigation, Status: 429, Requests: 1, Answer: browser.Answer{Counted: true, Protocol: "http/1.1", FromCache: true}}, 1, "the answer came from a cache"},
		{"Redirected", browser.Landing{By: browser.LandedNavigation, Status: 409, Requests: 1, Answer: browser.Answer{Counted: true, Protocol: "http/1.1", Redirected: true}}, 1, "the submission was redirected, so the page answers a request after it, not the submission"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, tc.l.Doubt(tc.n))
		})
	}
}
