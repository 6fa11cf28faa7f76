package demosite_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/browser/browsertest"
	"github.com/browserop/browserop/demosite"
	"github.com/stretchr/testify/require"
)

// The composers are driven by hand in real headless Chromium, with the
// browser package's primitives, as a site adapter will drive them. The
// browser starts with the first test that needs it. These tests do not run
// in parallel: the sites of one browser all live on 127.0.0.1, and cookies
// do not tell ports apart.

var (
	chromeOnce sync.Once
	chrome     *browsertest.Shared
)

func TestMain(m *testing.M) {
	code := m.Run()
	if chrome != nil {
		if err := chrome.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "close shared browser:", err)
		}
	}
	os.Exit(code)
}

// signedInTab opens an owned tab signed in as handle through the login form,
// on page (a path), and closes it after the test.
func signedInTab(t *testing.T, st *site, handle, page string) (context.Context, *browser.Tab) {
	t.Helper()
	chromeOnce.Do(func() { chrome = browsertest.Start() })
	b := chrome.Browser(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	tab, err := b.NewTab(ctx, st.URL+"/login?next="+page)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = b.CloseTab(context.Background(), tab) })
	_, err = tab.Fill(ctx, "#login-handle", handle)
	require.NoError(t, err)
	_, err = tab.Fill(ctx, "#login-password", demosite.Password)
	require.NoError(t, err)
	status, err := tab.ClickOnceAndWait(ctx, "#login-submit")
	require.NoError(t, err)
	require.Equal(t, 200, status)
	u, err := tab.URL(ctx)
	require.NoError(t, err)
	require.Equal(t, st.URL+page, u)
	return ctx, tab
}

var apiPosts = &browser.ResponseMatch{Method: "POST", URL: regexp.MustCompile(`/api/posts$`)}

// landing is what the adapter declares for the final Publish.
var landing = browser.LandingSigns{Selector: "#rich-toast", Response: apiPosts}

// writeRich fills the title, adds a block and fills it, as a person would.
func writeRich(t *testing.T, ctx context.Context, tab *browser.Tab, title, body string) {
	t.Helper()
	got, err := tab.Fill(ctx, "#rich-title", title)
	require.NoError(t, err)
	require.Equal(t, title, got)
	_, err = tab.Fill(ctx, "#rich-body", "x")
	require.ErrorIs(t, err, browser.ErrNotClickable, "the body is not editable before a block is added")
	require.NoError(t, tab.ClickOnce(ctx, "#rich-add-block"))
	got, err = tab.Fill(ctx, "#rich-body p[contenteditable]", body)
	require.NoError(t, err)
	require.Equal(t, body, got)
	v, err := tab.Value(ctx, "#rich-body p[contenteditable]")
	require.NoError(t, err)
	require.Equal(t, body, v)
}

// openPanel opens the confirmation panel with the first click.
func openPanel(t *testing.T, ctx context.Context, tab *browser.Tab) {
	t.Helper()
	require.NoError(t, tab.ClickOnce(ctx, "#rich-publish-toggle"))
	require.NoError(t, tab.WaitVisible(ctx, "#rich-panel", 0))
}

// TestRichComposer: title, a block added and filled, Publish… then Publish
// lands (the answer to POST /api/posts, or the toast), the URL is replaced,
// the toast links the permalink, and the post exists once, on the author's
// timeline and its permalink, as title + "\n" + body.
func TestRichComposer(t *testing.T) {
	st := newSite(t, demosite.Faults{})
	ctx, tab := signedInTab(t, st, "alice", "/compose/rich")
	title, body := "Release notes", "line one – ünïcödé 🙂\n\nline  three"
	writeRich(t, ctx, tab, title, body)
	require.Empty(t, st.Effects(), "writing commits nothing")
	openPanel(t, ctx, tab)
	require.Empty(t, st.Effects(), "Publish… only opens the panel")

	got, err := tab.ClickOnceAndLand(ctx, "#rich-publish", landing)
	require.NoError(t, err)
	require.Contains(t, []string{browser.LandedResponse, browser.LandedElement}, got.By)
	if got.By == browser.LandedResponse {
		require.Equal(t, 201, got.Status)
		require.Equal(t, st.URL+"/api/posts", got.ResponseURL)
	}

	effects := st.Effects()
	require.Len(t, effects, 1, "published once")
	e := effects[0]
	require.Equal(t, demosite.EffectPost, e.Kind)
	require.Equal(t, "alice", e.Author)
	require.Equal(t, title+"\n"+body, e.Text)
	id := strconv.FormatInt(e.PostID, 10)

	require.NoError(t, tab.WaitVisible(ctx, "#rich-toast", 0))
	href, err := tab.Attr(ctx, "#rich-toast-link", "href")
	require.NoError(t, err)
	require.Equal(t, "/p/"+id, href)
	u, err := tab.URL(ctx)
	require.NoError(t, err)
	require.Equal(t, st.URL+"/compose/rich?published="+id, u, "replaced, not loaded")
	n, err := tab.Count(ctx, "#rich-publish:disabled")
	require.NoError(t, err)
	require.Equal(t, 1, n, "no second publish from this page")

	status, err := tab.Navigate(ctx, st.URL+"/p/"+id)
	require.NoError(t, err)
	require.Equal(t, 200, status)
	txt, err := tab.Text(ctx, "#post .post-text")
	require.NoError(t, err)
	require.Equal(t, title+"\n"+body, txt)
	_, err = tab.Navigate(ctx, st.URL+"/u/alice")
	require.NoError(t, err)
	texts, err := tab.Texts(ctx, "#timeline article.post .post-text")
	require.NoError(t, err)
	require.Equal(t, []string{title + "\n" + body}, texts)
}

// TestRichComposerPanelOff: with ?panel=off the toggle itself publishes, as
// WordPress does with its pre-publish checks off.
func TestRichComposerPanelOff(t *testing.T) {
	st := newSite(t, demosite.Faults{})
	ctx, tab := signedInTab(t, st, "bob", "/compose/rich?panel=off")
	writeRich(t, ctx, tab, "Quick", "no panel")
	got, err := tab.ClickOnceAndLand(ctx, "#rich-publish-toggle", landing)
	require.NoError(t, err)
	require.Contains(t, []string{browser.LandedResponse, browser.LandedElement}, got.By)
	require.NoError(t, tab.WaitVisible(ctx, "#rich-toast", 0))
	effects := st.Effects()
	require.Len(t, effects, 1)
	require.Equal(t, "Quick\nno panel", effects[0].Text)
	require.Equal(t, "bob", effects[0].Author)
}

// TestRichComposerRefusals: a refusal of the site lands, with its status,
// and the page shows the site's message in #rich-error; nothing is
// committed. The same holds for the blockers switched on after the page
// loaded.
func TestRichComposerRefusals(t *testing.T) {
	for _, c := range []struct {
		name   string
		faults demosite.Faults
		status int
		says   string
	}{
		{"Duplicate", demosite.Faults{RefuseDuplicates: true}, 409, "already posted"},
		{"RateLimit", demosite.Faults{RateLimit: true}, 429, "too fast"},
		{"SessionExpired", demosite.Faults{SessionExpired: true}, 401, "signed out"},
		{"Restricted", demosite.Faults{Restricted: true}, 403, "restricted"},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := newSite(t, demosite.Faults{})
			st.SeedPost("alice", "Same\nagain", time.Time{})
			ctx, tab := signedInTab(t, st, "alice", "/compose/rich")
			writeRich(t, ctx, tab, "Same", "again")
			openPanel(t, ctx, tab)
			require.NoError(t, st.SetFaults(c.faults))

			got, err := tab.ClickOnceAndLand(ctx, "#rich-publish", landing)
			require.NoError(t, err)
			require.Equal(t, browser.LandedResponse, got.By, "a refusal shows no toast")
			require.Equal(t, c.status, got.Status)
			require.NoError(t, tab.WaitVisible(ctx, "#rich-error", 0))
			s, err := tab.Attr(ctx, "#rich-error", "data-status")
			require.NoError(t, err)
			require.Equal(t, strconv.Itoa(c.status), s)
			msg, err := tab.Text(ctx, "#rich-error")
			require.NoError(t, err)
			require.Contains(t, msg, c.says)
			require.Empty(t, st.Effects(), "nothing committed")

			// The page stays usable: once the site lets it, the same
			// click publishes, and the new toast is a new element.
			require.NoError(t, st.SetFaults(demosite.Faults{}))
			_, err = tab.Fill(ctx, "#rich-body p[contenteditable]", "again, changed")
			require.NoError(t, err)
			got, err = tab.ClickOnceAndLand(ctx, "#rich-publish", landing)
			require.NoError(t, err)
			if got.By == browser.LandedResponse {
				require.Equal(t, 201, got.Status)
			}
			require.Len(t, st.Effects(), 1)
		})
	}
}

// TestRichComposerAfterCommit: the site commits and then fails the answer.
// A 500 lands with its status (the caller must look: it may be there); a
// dropped connection is an unknown outcome. Either way the post exists
// once.
func TestRichComposerAfterCommit(t *testing.T) {
	t.Run("Error500", func(t *testing.T) {
		st := newSite(t, demosite.Faults{})
		ctx, tab := signedInTab(t, st, "alice", "/compose/rich")
		writeRich(t, ctx, tab, "T", "b")
		openPanel(t, ctx, tab)
		require.NoError(t, st.SetFaults(demosite.Faults{Error500AfterCommit: true}))
		got, err := tab.ClickOnceAndLand(ctx, "#rich-publish", landing)
		require.NoError(t, err)
		require.Equal(t, browser.Landing{By: browser.LandedResponse, Status: 500, URL: st.URL + "/compose/rich", ResponseURL: st.URL + "/api/posts"},
			browser.Landing{By: got.By, Status: got.Status, URL: got.URL, ResponseURL: got.ResponseURL})
		require.Equal(t, 1, got.Requests, "the one request of the submission, counted")
		require.NoError(t, tab.WaitVisible(ctx, "#rich-error[data-status='500']", 0))
		require.Len(t, st.Effects(), 1)
	})
	t.Run("Drop", func(t *testing.T) {
		st := newSite(t, demosite.Faults{})
		ctx, tab := signedInTab(t, st, "alice", "/compose/rich")
		writeRich(t, ctx, tab, "T", "b")
		openPanel(t, ctx, tab)
		require.NoError(t, st.SetFaults(demosite.Faults{DropAfterCommit: true}))
		_, err := tab.ClickOnceAndLand(ctx, "#rich-publish", landing)
		require.ErrorIs(t, err, browser.ErrOutcomeUnknown)
		require.NoError(t, tab.WaitVisible(ctx, "#rich-error[data-status='0']", 0))
		require.Len(t, st.Effects(), 1, "committed once, never resent")
	})
}

// TestFrameComposer: the editor is the body of a same-origin iframe
// (TinyMCE); FillFrame fills it, the form post navigates to the permalink.
func TestFrameComposer(t *testing.T) {
	st := newSite(t, demosite.Faults{})
	ctx, tab := signedInTab(t, st, "carol", "/compose/frame")
	text := "framed first\nframed  second"
	got, err := tab.FillFrame(ctx, "#frame-editor", "body#tinymce", text)
	require.NoError(t, err)
	require.Equal(t, text, got)
	v, err := tab.ValueFrame(ctx, "#frame-editor", "#tinymce")
	require.NoError(t, err)
	require.Equal(t, text, v)

	got2, err := tab.ClickOnceAndLand(ctx, "#frame-submit", browser.LandingSigns{Navigation: true})
	require.NoError(t, err)
	require.Equal(t, browser.LandedNavigation, got2.By)
	require.Equal(t, 200, got2.Status)
	effects := st.Effects()
	require.Len(t, effects, 1)
	require.Equal(t, text, effects[0].Text)
	require.Equal(t, "carol", effects[0].Author)
	require.Equal(t, st.URL+"/p/"+strconv.FormatInt(effects[0].PostID, 10), got2.URL)
	txt, err := tab.Text(ctx, "#post .post-text")
	require.NoError(t, err)
	require.Equal(t, text, txt)
	require.False(t, strings.Contains(txt, "\r"))
}
