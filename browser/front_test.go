package browser_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/browser"
)

// TestBringToFront: a headless browser shows nothing, and BringToFront
// says so without trying. The proof itself, on the same browser taken to
// have windows (new headless keeps window states, though its documents
// always read visible): a tab whose window the person minimized is
// brought to the front with its window restored, and reads visible; a
// tab that is gone proves nothing.
func TestBringToFront(t *testing.T) {
	s := newSite(t)
	b := shared.Browser(t)
	ctx := ctxT(t)
	tab, err := b.NewTab(ctx, s.URL+"/page")
	require.NoError(t, err)

	v := b.BringToFront(ctx, tab)
	require.True(t, v.Headless)
	require.False(t, v.Visible)
	require.Contains(t, v.Unverified, "headless")

	require.NoError(t, browser.RawMinimize(b, tab.ID()))
	require.Eventually(t, func() bool { return windowState(t, b, tab.ID()) == "minimized" }, 5*time.Second, 50*time.Millisecond,
		"the person minimized its window")
	v = browser.BringToFrontWindowed(ctx, b, tab)
	require.True(t, v.Visible, "%+v", v)
	require.Empty(t, v.Unverified)
	require.Equal(t, "normal", v.WindowState, "restored")
	require.Equal(t, "normal", windowState(t, b, tab.ID()))
	st, err := browser.VisibilityState(ctx, tab)
	require.NoError(t, err)
	require.Equal(t, "visible", st)

	// A tab that is gone proves nothing.
	_, err = b.CloseTab(ctx, tab)
	require.NoError(t, err)
	v = browser.BringToFrontWindowed(ctx, b, tab)
	require.False(t, v.Visible)
	require.NotEmpty(t, v.Unverified)
}

// windowState is the state of the window holding id, as the person's
// inventory reads it.
func windowState(t *testing.T, b *browser.Browser, id browser.TargetID) string {
	t.Helper()
	ctx := ctxT(t)
	ctl, err := b.Targets(ctx)
	require.NoError(t, err)
	inv, err := b.Windows(ctx, ctl, id)
	require.NoError(t, err)
	w, ok := findTarget(inv, id)
	require.True(t, ok)
	return w.WindowState
}
