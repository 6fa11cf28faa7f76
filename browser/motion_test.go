package browser_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/browser"
)

// TestOwnedTabsAskForReducedMotion: an owned tab tells the page the person
// prefers reduced motion (its smooth scrolls and animations are skipped),
// and only through browserop's session: another session on the same tab,
// the person's DevTools, sees the browser's own preference, as the person
// does once the tab is released.
func TestOwnedTabsAskForReducedMotion(t *testing.T) {
	s := newSite(t)
	b := shared.Browser(t)
	ctx := ctxT(t)
	tab, err := b.NewTab(ctx, s.URL+"/page")
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = b.CloseTab(ctx, tab) })
	got, err := browser.TabEval(ctx, tab, `function(){return matchMedia('(prefers-reduced-motion: reduce)').matches}`)
	require.NoError(t, err)
	require.Equal(t, true, got)

	tab.Release()
	reduced, err := browser.PersonEval(b, tab.ID(), `matchMedia('(prefers-reduced-motion: reduce)').matches`)
	require.NoError(t, err)
	require.False(t, reduced, "released: the page moves as the browser says")
}
