package browser_test

import (
	"testing"

	"github.com/browserop/browserop/browser"
	"github.com/stretchr/testify/require"
)

// TestFillOver: with Over, Fill replaces only what the caller read; a
// field holding anything else (an input the page autofilled, an editor's
// paragraphs) is left as it is and nothing is typed.
func TestFillOver(t *testing.T) {
	s := newSite(t)
	_, tab := newTab(t, s.URL+"/rich?other="+s.URL)
	ctx := ctxT(t)

	for _, tc := range []struct{ sel, holds, read string }{
		{"#user", "alice", "al"},
		{"#user", "alice", ""},
		{"#pm", "old one\nold two", "old one"},
		{"#pm", "old one\nold two", "old one\nold two\n"},
	} {
		_, err := tab.Fill(ctx, tc.sel, "typed", browser.Over(tc.read))
		require.ErrorIs(t, err, browser.ErrFieldChanged, "%s read as %q", tc.sel, tc.read)
		v, err := tab.Value(ctx, tc.sel)
		require.NoError(t, err)
		require.Equal(t, tc.holds, v, "%s: nothing typed", tc.sel)
	}
	for sel, holds := range map[string]string{"#user": "alice", "#pm": "old one\nold two"} {
		got, err := tab.Fill(ctx, sel, "typed", browser.Over(holds))
		require.NoError(t, err, sel)
		require.Equal(t, "typed", got, "%s: what was read is replaced", sel)
	}
	got, err := tab.Fill(ctx, "#user", "again", browser.Over("typed"))
	require.NoError(t, err)
	require.Equal(t, "again", got)
	got, err = tab.Fill(ctx, "#user", "", browser.Over("again"))
	require.NoError(t, err)
	require.Equal(t, "", got)
	got, err = tab.Fill(ctx, "#user", "into an empty field", browser.Over(""))
	require.NoError(t, err, "an empty field read as empty")
	require.Equal(t, "into an empty field", got)
	_, err = tab.Fill(ctx, "#user", "x", browser.Over(""))
	require.ErrorIs(t, err, browser.ErrFieldChanged, "no longer empty")
	require.Zero(t, s.posts.Load(), "filling never submits")
}
