package browser_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/browser/browsertest"
)

// TestWindowsInventory: the person's inventory places each tab, the
// person's and browserop's, in its window; a closed tab asked for by id
// is in no window, and the inventory is still complete; an inventory
// built on an incomplete controller inventory, or from a browser that is
// gone, is not.
func TestWindowsInventory(t *testing.T) {
	s := newSite(t)
	b := shared.Browser(t)
	ctx := ctxT(t)
	userID, err := browser.RawCreate(b, s.URL+"/page?mine")
	require.NoError(t, err)
	t.Cleanup(func() { _ = browser.RawCloseTarget(b, userID) })
	tab, err := b.NewTab(ctx, s.URL+"/page")
	require.NoError(t, err)

	ctl, err := b.Targets(ctx)
	require.NoError(t, err)
	require.Equal(t, browser.SurfaceController, ctl.Surface)
	person, err := b.Windows(ctx, ctl, tab.ID())
	require.NoError(t, err)
	require.True(t, person.Complete)
	require.Equal(t, browser.SurfacePerson, person.Surface)
	for _, id := range []browser.TargetID{userID, tab.ID()} {
		w, ok := findTarget(person, id)
		require.True(t, ok, "the tab is in a window")
		require.NotZero(t, w.WindowID)
		require.NotEmpty(t, w.WindowState)
	}

	closed := tab.ID()
	_, err = b.CloseTab(ctx, tab)
	require.NoError(t, err)
	ctl, err = b.Targets(ctx)
	require.NoError(t, err)
	require.False(t, ctl.Has(closed))
	person, err = b.Windows(ctx, ctl, closed)
	require.NoError(t, err)
	require.True(t, person.Complete, "asked for by id, the closed tab is answered: no such target")
	require.False(t, person.Has(closed), "the closed tab is in no window")
	require.True(t, person.Has(userID), "the person's tab still is")

	person, err = b.Windows(ctx, browser.Inventory{Surface: browser.SurfaceController, Targets: ctl.Targets}, closed)
	require.ErrorContains(t, err, "controller inventory is not complete")
	require.False(t, person.Complete, "built on an incomplete controller inventory")
	_, err = b.Windows(ctx, person, closed)
	require.ErrorContains(t, err, `of the "person" surface`)

	gone := browsertest.Launch(t)
	goneCtl, err := gone.Targets(ctx)
	require.NoError(t, err)
	require.NoError(t, gone.Close())
	person, err = gone.Windows(ctx, goneCtl, closed)
	require.ErrorIs(t, err, browser.ErrBrowserGone)
	require.False(t, person.Complete, "no answer from a browser that is gone")
}
