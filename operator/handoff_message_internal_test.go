package operator

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/browser"
)

// TestHandoffMessage: the message says the tab is in front only when it
// was proven visible; headless and unproven say so, and each says how to
// answer.
func TestHandoffMessage(t *testing.T) {
	visible := handoffMessage("act_1", browser.Visibility{Visible: true, WindowState: "normal"})
	require.Contains(t, visible, "in the tab in front (proven visible, its window normal)")
	headless := handoffMessage("act_1", browser.Visibility{Headless: true, Unverified: "the browser runs headless"})
	require.Contains(t, headless, "headless Chrome, which no window shows")
	require.Contains(t, headless, "browserop actions show act_1")
	unproven := handoffMessage("act_1", browser.Visibility{Unverified: "the tab's window is still minimized"})
	require.Contains(t, unproven, "could not prove visible (the tab's window is still minimized)")
	for _, m := range []string{visible, headless, unproven} {
		require.Contains(t, m, "browserop confirm act_1")
	}
	require.NotContains(t, headless, "in front")
	require.NotContains(t, unproven, "in front")
}
