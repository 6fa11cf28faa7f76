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
		got, err := tab.ClickOnceAndLand(ctx, "#ok", browser.Landing{Response: echo})
		require.NoError(t, err)
		require.Equal(t, browser.LandedResponse, got.By)
		require.Equal(t, 201, got.Status)
		require.Equal(t, s.URL+"/api/echo", got.ResponseURL)
		require.EqualValues(t, 1, s.api.Load())
		require.EqualValues(t, 1, hooked.Load(), "the click hook runs once, after the dispatch")
	})
	t.Run("RefusalIsALanding", func(t *testing.T) {
		open(t)
		got, err := tab.ClickOnceAndLand(ctx, "#conflict", browser.Landing{Response: anyAPI})
		require.NoError(t, err, "the caller classifies a 409")
		require.Equal(t, browser.LandedResponse, got.By)
		require.Equal(t, 409, got.Status)
	})
	t.Run("MethodAndURLFilter", func(t *testing.T) {
		// A GET to /api/other goes first; only the POST matches.
		open(t)
		got, err := tab.ClickOnceAndLand(ctx, "#other-first", browser.Landing{
			Response: &browser.ResponseMatch{Method: "post", URL: regexp.MustCompile(`/api/`)},
		})
		require.NoError(t, err)
		require.Equal(t, browser.LandedResponse, got.By)
		require.Equal(t, s.URL+"/api/echo", got.ResponseURL)
	})
	t.Run("Element", func(t *testing.T) {
		// The toast shows after the response, which is not declared.
		open(t)
		got, err := tab.ClickOnceAndLand(ctx, "#ok", browser.Landing{Selector: "#toast"})
		require.NoError(t, err)
		require.Equal(t, browser.LandedElement, got.By)
		require.Zero(t, got.Status)
		require.Equal(t, s.URL+"/land?published=1", got.URL, "the URL the page put in place before its toast")
	})
	t.Run("ElementNotThereBefore", func(t *testing.T) {
		// p.note is on the page before the click: it is no sign.
		open(t)
		tab.SetActionTimeout(800 * time.Millisecond)
		_, err := tab.ClickOnceAndLand(ctx, "#noop", browser.Landing{Selector: ".note"})
		tab.SetActionTimeout(0)
		require.ErrorIs(t, err, browser.ErrOutcomeUnknown)
		require.ErrorIs(t, err, browser.ErrTimeout)

		got, err := tab.ClickOnceAndLand(ctx, "#note", browser.Landing{Selector: ".note"})
		require.NoError(t, err)
		require.Equal(t, browser.LandedElement, got.By)
	})
	t.Run("URLChange", func(t *testing.T) {
		open(t)
		got, err := tab.ClickOnceAndLand(ctx, "#push", browser.Landing{URLChange: true})
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
		got, err := tab.ClickOnceAndLand(ctx, "#form", browser.Landing{Selector: "#toast", Response: echo})
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
		got, err := tab.ClickOnceAndLand(ctx, "#form500", browser.Landing{})
		require.NoError(t, err)
		require.Equal(t, browser.Landed{By: browser.LandedNavigation, Status: 500, URL: s.URL + "/status500"}, got)
	})
	t.Run("ResponseFailedIsOutcomeUnknown", func(t *testing.T) {
		open(t)
		s.api.Store(0)
		_, err := tab.ClickOnceAndLand(ctx, "#drop", browser.Landing{Response: anyAPI, Selector: "#toast"})
		require.ErrorIs(t, err, browser.ErrOutcomeUnknown)
		require.NotErrorIs(t, err, browser.ErrTimeout)
		require.EqualValues(t, 1, s.api.Load(), "one click, one request")
	})
	t.Run("HangIsOutcomeUnknown", func(t *testing.T) {
		open(t)
		s.api.Store(0)
		tab.SetActionTimeout(time.Second)
		_, err := tab.ClickOnceAndLand(ctx, "#hang", browser.Landing{Response: anyAPI})
		tab.SetActionTimeout(0)
		require.ErrorIs(t, err, browser.ErrOutcomeUnknown)
		require.ErrorIs(t, err, browser.ErrTimeout)
		require.Eventually(t, func() bool { return s.api.Load() >= 1 }, 15*time.Second, 10*time.Millisecond)
		require.EqualValues(t, 1, s.api.Load(), "sent once")
	})
	t.Run("RefusedBeforeTheClick", func(t *testing.T) {
		open(t)
		s.api.Store(0)
		_, err := tab.ClickOnceAndLand(ctx, "#hidden", browser.Landing{Response: anyAPI})
		require.ErrorIs(t, err, browser.ErrNotClickable)
		require.NotErrorIs(t, err, browser.ErrOutcomeUnknown)
		_, err = tab.ClickOnceAndLand(ctx, "button", browser.Landing{Response: anyAPI})
		require.ErrorIs(t, err, browser.ErrSelectorAmbiguous)
		require.NotErrorIs(t, err, browser.ErrOutcomeUnknown)
		_, err = tab.ClickOnceAndLand(ctx, "#ok", browser.Landing{Selector: "[[["})
		require.Error(t, err)
		require.NotErrorIs(t, err, browser.ErrOutcomeUnknown)
		_, err = tab.ClickOnceAndLand(ctx, "#ok", browser.Landing{Response: &browser.ResponseMatch{Method: "POST"}})
		require.Error(t, err)
		require.NotErrorIs(t, err, browser.ErrOutcomeUnknown)
		n, err := tab.Count(ctx, "#toast")
		require.NoError(t, err)
		require.Zero(t, n)
		require.Zero(t, s.api.Load(), "a refused click sends nothing")
	})
}
