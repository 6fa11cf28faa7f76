package demosite_test

import (
	"testing"
	"time"

	"github.com/browserop/browserop/demosite"
	"github.com/stretchr/testify/require"
)

// The site behaviours a browser acts out, in real Chromium (not in
// parallel: see composer_test.go).

// resend_after_commit in a browser: one click on Post commits, the browser
// follows the 307 with the same submission, and the page it shows is the
// 409 edit conflict; the site holds one post.
func TestBrowserResendAfterCommit(t *testing.T) {
	st := newSite(t, demosite.Faults{ResendAfterCommit: true})
	ctx, tab := signedInTab(t, st, "alice", "/compose")
	_, err := tab.Fill(ctx, "#compose-text", "sent once, answered twice")
	require.NoError(t, err)
	status, err := tab.ClickOnceAndWait(ctx, "#compose-submit")
	require.NoError(t, err)
	require.Equal(t, 409, status, "the page shown answers the resend")
	require.NoError(t, tab.WaitVisible(ctx, `#form-error[data-kind="conflict"]`, 0))
	msg, err := tab.Text(ctx, "#form-error")
	require.NoError(t, err)
	require.Contains(t, msg, "Edit conflict")
	effects := st.Effects()
	require.Len(t, effects, 1, "the resend committed nothing")
	require.Equal(t, "sent once, answered twice", effects[0].Text)
}

// late_list in a browser: right after the load the page shows an empty,
// complete list and is not ready; once drawn, the list holds the posts and
// the body says ready.
func TestBrowserLateList(t *testing.T) {
	st := newSite(t, demosite.Faults{LateList: 2 * time.Second})
	st.SeedPost("alice", "drawn late", t0.Add(-time.Minute))
	ctx, tab := signedInTab(t, st, "alice", "/home")
	_, err := tab.Navigate(ctx, st.URL+"/u/alice")
	require.NoError(t, err)
	n, err := tab.Count(ctx, "#timeline article.post")
	require.NoError(t, err)
	require.Zero(t, n, "not drawn yet")
	n, err = tab.Count(ctx, `#timeline[data-complete="true"] #timeline-empty`)
	require.NoError(t, err)
	require.Equal(t, 1, n, "an empty list that looks complete")
	ready, err := tab.Attr(ctx, "body", "data-ready")
	require.NoError(t, err)
	require.Equal(t, "false", ready)

	require.NoError(t, tab.WaitVisible(ctx, `body[data-ready="true"]`, 5*time.Second))
	texts, err := tab.Texts(ctx, "#timeline article.post .post-text")
	require.NoError(t, err)
	require.Equal(t, []string{"drawn late"}, texts)
}

// late_panel in a browser: the category panel is not there at first; once
// drawn, choosing a category sends it with the post.
func TestBrowserLatePanel(t *testing.T) {
	st := newSite(t, demosite.Faults{LatePanel: 1500 * time.Millisecond})
	ctx, tab := signedInTab(t, st, "alice", "/compose")
	n, err := tab.Count(ctx, "#category-panel")
	require.NoError(t, err)
	require.Zero(t, n, "drawn late")
	_, err = tab.Fill(ctx, "#compose-text", "filed under news")
	require.NoError(t, err)
	require.NoError(t, tab.WaitVisible(ctx, "#category-news", 5*time.Second))
	require.NoError(t, tab.ClickOnce(ctx, "#category-news"))
	require.NoError(t, tab.WaitVisible(ctx, `#category-panel[data-chosen="news"]`, 0))
	status, err := tab.ClickOnceAndWait(ctx, "#compose-submit")
	require.NoError(t, err)
	require.Equal(t, 200, status)
	effects := st.Effects()
	require.Len(t, effects, 1)
	require.Equal(t, "news", effects[0].Category)
}
