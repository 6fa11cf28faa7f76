package browser_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/browser"
)

func TestNavigate(t *testing.T) {
	s := newSite(t)
	_, tab := newTab(t, "")
	ctx := ctxT(t)

	t.Run("OK", func(t *testing.T) {
		status, err := tab.Navigate(ctx, s.URL+"/page")
		require.NoError(t, err)
		require.Equal(t, 200, status)
		got, err := tab.Status(ctx)
		require.NoError(t, err)
		require.Equal(t, 200, got)
		origin, err := tab.Origin(ctx)
		require.NoError(t, err)
		require.Equal(t, s.URL, origin)
	})
	t.Run("NotFound", func(t *testing.T) {
		status, err := tab.Navigate(ctx, s.URL+"/missing")
		require.NoError(t, err)
		require.Equal(t, 404, status)
	})
	t.Run("Redirect", func(t *testing.T) {
		status, err := tab.Navigate(ctx, s.URL+"/redirect")
		require.NoError(t, err)
		require.Equal(t, 200, status)
		u, err := tab.URL(ctx)
		require.NoError(t, err)
		require.Equal(t, s.URL+"/page", u)
	})
	t.Run("ErrBadURL", func(t *testing.T) {
		for _, u := range []string{"javascript:alert(1)", "file:///etc/passwd", "data:text/html,x", "chrome://settings", "/relative"} {
			_, err := tab.Navigate(ctx, u)
			require.ErrorIs(t, err, browser.ErrBadURL, u)
		}
	})
	t.Run("ErrTimeout", func(t *testing.T) {
		tab.SetActionTimeout(700 * time.Millisecond)
		defer tab.SetActionTimeout(0)
		_, err := tab.Navigate(ctx, s.URL+"/slow")
		require.ErrorIs(t, err, browser.ErrTimeout)
	})
	t.Run("ConnectionRefused", func(t *testing.T) {
		_, err := tab.Navigate(ctx, "http://127.0.0.1:1/")
		require.Error(t, err)
		require.NotErrorIs(t, err, browser.ErrTimeout)
	})
}

func TestReads(t *testing.T) {
	s := newSite(t)
	_, tab := newTab(t, s.URL+"/page")
	ctx := ctxT(t)

	n, err := tab.Count(ctx, "p.p")
	require.NoError(t, err)
	require.Equal(t, 2, n)
	n, err = tab.Count(ctx, "#nothing")
	require.NoError(t, err)
	require.Zero(t, n)

	txt, err := tab.Text(ctx, "#whoami")
	require.NoError(t, err)
	require.Equal(t, "signed in as @alice", txt)

	_, err = tab.Text(ctx, "p.p")
	require.ErrorIs(t, err, browser.ErrSelectorAmbiguous)
	_, err = tab.Text(ctx, "#nothing")
	require.ErrorIs(t, err, browser.ErrNotFound)

	texts, err := tab.Texts(ctx, "p.p")
	require.NoError(t, err)
	require.Equal(t, []string{"one", "two"}, texts)

	h, err := tab.Attr(ctx, "#whoami", "data-handle")
	require.NoError(t, err)
	require.Equal(t, "alice", h)
	_, err = tab.Attr(ctx, "#whoami", "data-nope")
	require.ErrorIs(t, err, browser.ErrNotFound)

	authors, err := tab.Attrs(ctx, "article.post", "data-author")
	require.NoError(t, err)
	require.Equal(t, []string{"alice", "bob"}, authors)

	v, err := tab.Value(ctx, "#t")
	require.NoError(t, err)
	require.Equal(t, "old text", v)

	items, err := tab.Extract(ctx, "article.post", []browser.Field{
		{Name: "author", Attr: "data-author"},
		{Name: "text", Selector: ".post-text"},
		{Name: "link", Selector: "a.permalink", Attr: "href"},
		{Name: "time", Selector: "time", Attr: "datetime"},
	})
	require.NoError(t, err)
	require.Len(t, items, 2)
	require.Equal(t, browser.Found{Value: "alice", Count: 1, Present: true}, items[0]["author"])
	require.Equal(t, browser.Found{Value: "first", Count: 1, Present: true}, items[0]["text"])
	require.Equal(t, "/p/1", items[0]["link"].Value)
	require.Equal(t, browser.Found{}, items[0]["time"])
	require.Equal(t, 2, items[1]["text"].Count, "a doubled field is visible")

	t.Run("WaitVisible", func(t *testing.T) {
		require.NoError(t, tab.WaitVisible(ctx, "#late", 5*time.Second))
		err := tab.WaitVisible(ctx, "#hidden", 300*time.Millisecond)
		require.ErrorIs(t, err, browser.ErrTimeout)
	})
	t.Run("BadSelector", func(t *testing.T) {
		_, err := tab.Count(ctx, "[[[")
		require.Error(t, err)
	})
}

// TestIsolatedFromPageScripts: a page that rewrites querySelectorAll,
// getAttribute and textContent in its own world cannot lie to the reads.
func TestIsolatedFromPageScripts(t *testing.T) {
	s := newSite(t)
	_, tab := newTab(t, s.URL+"/evil")
	ctx := ctxT(t)
	h, err := tab.Attr(ctx, "#whoami", "data-handle")
	require.NoError(t, err)
	require.Equal(t, "alice", h)
	txt, err := tab.Text(ctx, "#whoami")
	require.NoError(t, err)
	require.Equal(t, "@alice", txt)
}

func TestFill(t *testing.T) {
	s := newSite(t)
	_, tab := newTab(t, s.URL+"/page")
	ctx := ctxT(t)

	t.Run("Replace", func(t *testing.T) {
		text := "new text\nsecond line – ünïcödé 🙂"
		got, err := tab.Fill(ctx, "#t", text)
		require.NoError(t, err)
		require.Equal(t, text, got)
		v, err := tab.Value(ctx, "#t")
		require.NoError(t, err)
		require.Equal(t, text, v)
		// Again: replace, never append.
		got, err = tab.Fill(ctx, "#t", "short")
		require.NoError(t, err)
		require.Equal(t, "short", got)
	})
	t.Run("Input", func(t *testing.T) {
		got, err := tab.Fill(ctx, "#i", "value")
		require.NoError(t, err)
		require.Equal(t, "value", got)
	})
	t.Run("ContentEditable", func(t *testing.T) {
		got, err := tab.Fill(ctx, "#ce", "rich")
		require.NoError(t, err)
		require.Equal(t, "rich", got)
	})
	t.Run("Empty", func(t *testing.T) {
		got, err := tab.Fill(ctx, "#t", "")
		require.NoError(t, err)
		require.Equal(t, "", got)
	})
	t.Run("ErrSelectorAmbiguous", func(t *testing.T) {
		_, err := tab.Fill(ctx, "p.p", "x")
		require.ErrorIs(t, err, browser.ErrSelectorAmbiguous)
		_, err = tab.Fill(ctx, "#nothing", "x")
		require.ErrorIs(t, err, browser.ErrNotFound)
	})
	t.Run("NotEditable", func(t *testing.T) {
		_, err := tab.Fill(ctx, "#whoami", "x")
		require.Error(t, err)
	})
	t.Run("PageRewrites", func(t *testing.T) {
		_, err := tab.Navigate(ctx, s.URL+"/append")
		require.NoError(t, err)
		got, err := tab.Fill(ctx, "#t", "hello")
		require.NoError(t, err)
		require.Equal(t, "DRAFT hello", got, "Fill reports what the page holds")
	})
	require.Zero(t, s.posts.Load(), "filling never submits")
}

func TestClickOnce(t *testing.T) {
	s := newSite(t)
	_, tab := newTab(t, s.URL+"/page")
	ctx := ctxT(t)

	t.Run("ErrSelectorAmbiguous", func(t *testing.T) {
		err := tab.ClickOnce(ctx, "button.dup")
		require.ErrorIs(t, err, browser.ErrSelectorAmbiguous)
		require.NotErrorIs(t, err, browser.ErrOutcomeUnknown)
		var se *browser.SelectorError
		require.ErrorAs(t, err, &se)
		require.Equal(t, 2, se.Count)
		err = tab.ClickOnce(ctx, "#nothing")
		require.ErrorIs(t, err, browser.ErrSelectorAmbiguous)
		require.ErrorIs(t, err, browser.ErrNotFound)
	})
	t.Run("HiddenCopiesDoNotCount", func(t *testing.T) {
		// Two elements match, one of them inside a hidden layout: the
		// click considers the visible one only; and two hidden ones are
		// no visible element at all.
		err := tab.ClickOnce(ctx, "button.twohidden")
		var se *browser.SelectorError
		require.ErrorAs(t, err, &se)
		require.Equal(t, 0, se.Count)
		require.Equal(t, 2, se.Hidden)
		require.ErrorIs(t, err, browser.ErrNotFound)
		require.Contains(t, err.Error(), "matched 0 visible elements (and 2 hidden)")
		require.NoError(t, tab.WaitClickable(ctx, "button.copy", 0))
	})
	t.Run("ErrNotClickable", func(t *testing.T) {
		err := tab.ClickOnce(ctx, "#hidden")
		require.ErrorIs(t, err, browser.ErrNotClickable)
		_, err = tab.Navigate(ctx, s.URL+"/page?covered")
		require.NoError(t, err)
		err = tab.ClickOnce(ctx, "#go")
		require.ErrorIs(t, err, browser.ErrNotClickable)
		require.NotErrorIs(t, err, browser.ErrOutcomeUnknown)
	})
	require.Zero(t, s.posts.Load(), "a refused click sends nothing")

	t.Run("OK", func(t *testing.T) {
		_, err := tab.Navigate(ctx, s.URL+"/page")
		require.NoError(t, err)
		_, err = tab.Fill(ctx, "#t", "hi")
		require.NoError(t, err)
		status, err := tab.ClickOnceAndWait(ctx, "#go")
		require.NoError(t, err)
		require.Equal(t, 200, status)
		u, err := tab.URL(ctx)
		require.NoError(t, err)
		require.Equal(t, s.URL+"/done?text=hi", u)
		require.EqualValues(t, 1, s.posts.Load())

		_, err = tab.Navigate(ctx, s.URL+"/page")
		require.NoError(t, err)
		status, err = tab.ClickOnceAndWait(ctx, "button.copy")
		require.NoError(t, err, "the hidden copy is not considered")
		require.Equal(t, 200, status)
		u, err = tab.URL(ctx)
		require.NoError(t, err)
		require.Equal(t, s.URL+"/done?text=copy", u, "the visible one was clicked")
		require.EqualValues(t, 2, s.posts.Load())
	})
	t.Run("HangIsOutcomeUnknown", func(t *testing.T) {
		s.posts.Store(0)
		_, err := tab.Navigate(ctx, s.URL+"/page")
		require.NoError(t, err)
		tab.SetActionTimeout(time.Second)
		defer tab.SetActionTimeout(0)
		_, err = tab.ClickOnceAndWait(ctx, "#hang")
		require.ErrorIs(t, err, browser.ErrOutcomeUnknown)
		require.ErrorIs(t, err, browser.ErrTimeout)
		// On a busy machine the request can reach the server after the
		// click's deadline: that is why a timeout is ambiguous. It does
		// arrive, once.
		require.Eventually(t, func() bool { return s.posts.Load() >= 1 }, 15*time.Second, 10*time.Millisecond,
			"the server got it: ambiguous, not failed")
		require.EqualValues(t, 1, s.posts.Load(), "sent once")
	})
	t.Run("DropIsOutcomeUnknownAndSentOnce", func(t *testing.T) {
		// The server commits and closes the connection without a byte.
		// Chrome re-sends such a POST on a reused or preconnected
		// connection; owned tabs leave it neither (Connection: close, and
		// PrepareProfile turned preconnects off), even after the history
		// of earlier submissions taught the predictor this origin.
		for range 3 {
			_, err := tab.Navigate(ctx, s.URL+"/page")
			require.NoError(t, err)
			_, err = tab.ClickOnceAndWait(ctx, "#go")
			require.NoError(t, err)
		}
		s.posts.Store(0)
		for i := range 3 {
			_, err := tab.Navigate(ctx, s.URL+"/page")
			require.NoError(t, err)
			_, err = tab.ClickOnceAndWait(ctx, "#drop")
			require.ErrorIs(t, err, browser.ErrOutcomeUnknown)
			require.EqualValues(t, i+1, s.posts.Load(), "one click, one request")
		}
	})
	t.Run("CallerCancelAfterDispatch", func(t *testing.T) {
		s.posts.Store(0)
		_, err := tab.Navigate(ctx, s.URL+"/page")
		require.NoError(t, err)
		cctx, cancel := context.WithTimeout(ctx, 800*time.Millisecond)
		defer cancel()
		_, err = tab.ClickOnceAndWait(cctx, "#hang")
		require.ErrorIs(t, err, browser.ErrOutcomeUnknown)
		require.True(t, errors.Is(err, context.DeadlineExceeded))
	})
}

// A tab created on a blank marker URL carries it from its first moment
// (what an inventory lists for it), and can then be navigated as any tab;
// a marker is not a URL to navigate to.
func TestNewTabOnBlankMarker(t *testing.T) {
	s := newSite(t)
	b := shared.Browser(t)
	ctx := ctxT(t)
	const marker = "about:blank#browserop-tab-7-0123456789abcdef"
	tab, err := b.NewTab(ctx, marker)
	require.NoError(t, err)
	t.Cleanup(func() { b.CloseTab(ctx, tab) })
	inv, err := b.Targets(ctx)
	require.NoError(t, err)
	got, ok := findTarget(inv, tab.ID())
	require.True(t, ok)
	require.Equal(t, marker, got.URL)
	require.True(t, got.Owned)
	_, err = tab.Navigate(ctx, s.URL+"/page")
	require.NoError(t, err)
	_, err = tab.Navigate(ctx, marker)
	require.ErrorIs(t, err, browser.ErrBadURL)
	for raw, want := range map[string]bool{
		marker: true, "about:blank#x": true, "about:blank": false, "about:blank#": false,
		"about:blank#a b": false, "about:blankx#y": false, "https://example.com/#x": false,
	} {
		require.Equal(t, want, browser.IsBlankMarker(raw), raw)
	}
}

// CloseTarget closes an owned tab without attaching to it, confirms it,
// and refuses a tab that is not owned; a tab already gone is ErrTabGone.
func TestCloseTarget(t *testing.T) {
	s := newSite(t)
	b := shared.Browser(t)
	ctx := ctxT(t)
	tab, err := b.NewTab(ctx, s.URL+"/page")
	require.NoError(t, err)
	id := tab.ID()
	tab.Release()
	userID, err := browser.RawCreate(b, s.URL+"/page?mine")
	require.NoError(t, err)
	t.Cleanup(func() { _ = browser.RawCloseTarget(b, userID) })

	_, err = b.CloseTarget(ctx, userID)
	require.ErrorIs(t, err, browser.ErrNotOwned)
	rcpt, err := b.CloseTarget(ctx, id)
	require.NoError(t, err)
	require.True(t, rcpt.Sent && rcpt.Confirmed)
	inv, err := b.Targets(ctx)
	require.NoError(t, err)
	require.False(t, inv.Has(id))
	require.True(t, inv.Has(userID), "the person's tab is untouched")
	require.False(t, b.Owns(id))
	require.NoError(t, b.Adopt(ctx, userID) /* listed, so adoptable */)
	require.NoError(t, browser.RawCloseTarget(b, userID))
	require.Eventually(t, func() bool {
		inv, err := b.Targets(ctx)
		return err == nil && inv.Complete && !inv.Has(userID)
	}, 10*time.Second, 20*time.Millisecond)
	_, err = b.CloseTarget(ctx, userID)
	require.ErrorIs(t, err, browser.ErrTabGone)
}

// TestFillEditors: Fill replaces what a publishing UI's editors hold (an
// autofilled input, a ProseMirror-like editor whose text lives in
// paragraphs, a block made editable by a click) and reads back the text a
// person sees, a line per paragraph.
func TestFillEditors(t *testing.T) {
	s := newSite(t)
	_, tab := newTab(t, s.URL+"/rich?other="+s.URL)
	ctx := ctxT(t)

	t.Run("Autofilled", func(t *testing.T) {
		v, err := tab.Value(ctx, "#user")
		require.NoError(t, err)
		require.Equal(t, "alice", v)
		got, err := tab.Fill(ctx, "#user", "bob")
		require.NoError(t, err)
		require.Equal(t, "bob", got)
	})
	t.Run("Paragraphs", func(t *testing.T) {
		v, err := tab.Value(ctx, "#pm")
		require.NoError(t, err)
		require.Equal(t, "old one\nold two", v, "a line per paragraph, not innerText's blank line between them")
		text := "first  line\n\nthird – ünïcödé 🙂"
		got, err := tab.Fill(ctx, "#pm", text)
		require.NoError(t, err)
		require.Equal(t, text, got)
		n, err := tab.Count(ctx, "#pm p")
		require.NoError(t, err)
		require.Equal(t, 3, n, "the editor made a paragraph of each line")
		got, err = tab.Fill(ctx, "#pm", "short")
		require.NoError(t, err)
		require.Equal(t, "short", got, "replaced, not appended")
		got, err = tab.Fill(ctx, "#pm", "")
		require.NoError(t, err)
		require.Equal(t, "", got)
	})
	t.Run("EditableAfterClick", func(t *testing.T) {
		_, err := tab.Fill(ctx, "#host", "x")
		require.ErrorIs(t, err, browser.ErrNotClickable, "not editable yet")
		require.NoError(t, tab.ClickOnce(ctx, "#add"))
		got, err := tab.Fill(ctx, "#host p", "hello\nworld")
		require.NoError(t, err)
		require.Equal(t, "hello\nworld", got)
		v, err := tab.Value(ctx, "#host p")
		require.NoError(t, err)
		require.Equal(t, "hello\nworld", v)
	})
}

// TestFillFrame: an editor in a same-origin iframe (TinyMCE's body) is
// filled and read like any other; a frame that is missing, ambiguous, not
// an iframe, or of another origin is refused before anything is typed.
func TestFillFrame(t *testing.T) {
	s := newSite(t)
	other := newSite(t)
	_, tab := newTab(t, s.URL+"/rich?other="+other.URL)
	ctx := ctxT(t)

	v, err := tab.ValueFrame(ctx, "#fr", "body#tinymce")
	require.NoError(t, err)
	require.Equal(t, "draft", v)
	got, err := tab.FillFrame(ctx, "#fr", "body#tinymce", "one\ntwo")
	require.NoError(t, err)
	require.Equal(t, "one\ntwo", got)
	v, err = tab.ValueFrame(ctx, "#fr", "#tinymce")
	require.NoError(t, err)
	require.Equal(t, "one\ntwo", v)

	t.Run("Refused", func(t *testing.T) {
		// Focus sits in #pm: a stray insertion would show there.
		_, err := tab.Fill(ctx, "#pm", "keep")
		require.NoError(t, err)
		require.NoError(t, tab.WaitVisible(ctx, "body[data-xo=loaded]", 10*time.Second))

		_, err = tab.FillFrame(ctx, "#nothing", "body", "x")
		require.ErrorIs(t, err, browser.ErrNotFound)
		_, err = tab.FillFrame(ctx, "iframe", "body", "x")
		require.ErrorIs(t, err, browser.ErrSelectorAmbiguous)
		var se *browser.SelectorError
		require.ErrorAs(t, err, &se)
		require.Equal(t, "iframe", se.Selector)
		_, err = tab.FillFrame(ctx, "#pm", "p", "x")
		require.ErrorIs(t, err, browser.ErrFrameUnreachable, "not an iframe")
		_, err = tab.FillFrame(ctx, "#xo", "body", "x")
		require.ErrorIs(t, err, browser.ErrFrameUnreachable, "another origin")
		_, err = tab.ValueFrame(ctx, "#xo", "body")
		require.ErrorIs(t, err, browser.ErrFrameUnreachable)
		_, err = tab.FillFrame(ctx, "#fr", "#nothing", "x")
		require.ErrorIs(t, err, browser.ErrNotFound)
		_, err = tab.FillFrame(ctx, "", "#pm", "x")
		require.ErrorIs(t, err, browser.ErrSelectorAmbiguous)

		v, err := tab.Value(ctx, "#pm")
		require.NoError(t, err)
		require.Equal(t, "keep", v, "nothing was typed")
		v, err = tab.ValueFrame(ctx, "#fr", "#tinymce")
		require.NoError(t, err)
		require.Equal(t, "one\ntwo", v)
	})
}

// TestWaitClickable: it waits while the element slides in, is disabled or
// aria-disabled, or is covered, and sends no input; it ends when the
// element can be clicked, or times out naming the last reason.
func TestWaitClickable(t *testing.T) {
	s := newSite(t)
	_, tab := newTab(t, s.URL+"/sliding")
	ctx := ctxT(t)
	require.NoError(t, tab.WaitClickable(ctx, "#sliding", 5*time.Second))
	_, err := tab.Attr(ctx, "#sliding", "aria-disabled")
	require.ErrorIs(t, err, browser.ErrNotFound, "not while aria-disabled")
	arrived, err := tab.Attr(ctx, "#sliding", "data-arrived")
	require.NoError(t, err, "not while it slides")
	require.Equal(t, "yes", arrived)
	_, err = tab.Attr(ctx, "#sliding", "data-clicked")
	require.ErrorIs(t, err, browser.ErrNotFound, "waiting clicks nothing")
	require.NoError(t, tab.ClickOnce(ctx, "#sliding"))
	clicked, err := tab.Attr(ctx, "#sliding", "data-clicked")
	require.NoError(t, err)
	require.Equal(t, "yes", clicked, "the click after the wait reaches it")

	// Each wait below runs out: long enough that a loaded machine reads
	// the page at least once, so the error names what it saw.
	for _, sel := range []string{"#off", "#aria-off"} {
		err = tab.WaitClickable(ctx, sel, 2*time.Second)
		require.ErrorIs(t, err, browser.ErrNotClickable, sel)
		require.ErrorIs(t, err, browser.ErrTimeout, sel)
		require.ErrorContains(t, err, "disabled", sel)
	}
	_, err = tab.Navigate(ctx, s.URL+"/page")
	require.NoError(t, err)
	err = tab.WaitClickable(ctx, "button.dup", 2*time.Second)
	require.ErrorIs(t, err, browser.ErrSelectorAmbiguous)
	_, err = tab.Navigate(ctx, s.URL+"/page?covered")
	require.NoError(t, err)
	err = tab.WaitClickable(ctx, "#go", 2*time.Second)
	require.ErrorIs(t, err, browser.ErrNotClickable)
	require.ErrorContains(t, err, "covers it")

	// A move in jumps stands still between them: the running transition
	// still says it moves.
	_, err = tab.Navigate(ctx, s.URL+"/stepping")
	require.NoError(t, err)
	require.NoError(t, tab.WaitVisible(ctx, "#stepping[data-started]", 5*time.Second))
	require.NoError(t, tab.WaitClickable(ctx, "#stepping", 10*time.Second))
	arrived, err = tab.Attr(ctx, "#stepping", "data-arrived")
	require.NoError(t, err, "not between its jumps")
	require.Equal(t, "yes", arrived)
}

// A selector may end in :text("…") or :name("…"): the elements its CSS
// matches whose visible text, or accessible name, is that (white space
// collapsed), for controls a page tells apart by their words only.
func TestTextAndNameSelectors(t *testing.T) {
	s := newSite(t)
	_, tab := newTab(t, s.URL+"/named")
	ctx := ctxT(t)
	for sel, want := range map[string]int{
		`button.t:text("Categories")`:   1,
		`button:text("Tags & labels")`:  1,
		`:text("Categories")`:           1, // the button only: the panel's text is more
		`button:text("categories")`:     0, // exact, case included
		`button:name("Close panel")`:    1,
		`button:name("Publish now")`:    1,
		`input:name("Title")`:           1,
		`input:name("Save draft")`:      1,
		`button:name("Settings")`:       1,
		`.panel :text("Categories")`:    1, // a descendant of the panel, not the panel
		`.panel > :name("Close panel")`: 1,
		`button.t:text("Nope")`:         0,
		`button:text("say \"hi\"")`:     0,
	} {
		n, err := tab.Count(ctx, sel)
		require.NoError(t, err, sel)
		require.Equal(t, want, n, sel)
	}
	require.NoError(t, tab.ClickOnce(ctx, `button:name("Close panel")`))
	v, err := tab.Attr(ctx, "body", "data-clicked")
	require.NoError(t, err)
	require.Equal(t, "×", v)
	for _, bad := range []string{`button[:text("x")`, `.panel button:name("Close panel") x`} {
		_, err = tab.Count(ctx, bad)
		require.Error(t, err, "not CSS (a :text or :name not at the end is not either): %s", bad)
	}
}
