package demosite_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/demosite"
)

// ?submit=dead in a browser: Post on the compose form and the rich
// composer's Publish do nothing (no navigation, no answer, nothing
// committed); the same page without the query posts.
func TestBrowserDeadSubmit(t *testing.T) {
	st := newSite(t, demosite.Faults{})
	ctx, tab := signedInTab(t, st, "alice", "/compose?submit=dead")
	_, err := tab.Fill(ctx, "#compose-text", "never sent")
	require.NoError(t, err)
	tab.SetActionTimeout(2 * time.Second) // the landing wait
	_, err = tab.ClickOnceAndWait(ctx, "#compose-submit")
	require.ErrorIs(t, err, browser.ErrTimeout, "no navigation")
	tab.SetActionTimeout(0)
	u, err := tab.URL(ctx)
	require.NoError(t, err)
	require.Equal(t, st.URL+"/compose?submit=dead", u)

	_, err = tab.Navigate(ctx, st.URL+"/compose/rich?panel=off&submit=dead")
	require.NoError(t, err)
	writeRich(t, ctx, tab, "Dead", "never published")
	tab.SetActionTimeout(2 * time.Second)
	_, err = tab.ClickOnceAndLand(ctx, "#rich-publish-toggle", landing)
	require.ErrorIs(t, err, browser.ErrTimeout, "no answer and no notice")
	tab.SetActionTimeout(0)
	require.Empty(t, st.Effects(), "nothing was sent")

	_, err = tab.Navigate(ctx, st.URL+"/compose")
	require.NoError(t, err)
	_, err = tab.Fill(ctx, "#compose-text", "sent")
	require.NoError(t, err)
	status, err := tab.ClickOnceAndWait(ctx, "#compose-submit")
	require.NoError(t, err)
	require.Equal(t, 200, status)
	effects := st.Effects()
	require.Len(t, effects, 1)
	require.Equal(t, "sent", effects[0].Text)
}
