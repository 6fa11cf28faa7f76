package sites_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/demosite"
	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/media"
	"github.com/browserop/browserop/sites"
	"github.com/browserop/browserop/sites/sitetest"
)

// TestDemoConformance runs the adapter conformance suite for the bundled
// demo adapter against demosite.
func TestDemoConformance(t *testing.T) {
	e := setup(t, demosite.Faults{})
	effects := func(k kind.Kind) []demosite.Effect {
		want := map[kind.Kind]string{kind.Post: demosite.EffectPost, kind.Reply: demosite.EffectReply, kind.ThreadPart: demosite.EffectReply,
			kind.Like: demosite.EffectLike, kind.Follow: demosite.EffectFollow}[k]
		var out []demosite.Effect
		for _, ef := range demo.Effects() {
			if ef.Kind == want && ef.Author == "alice" {
				out = append(out, ef)
			}
		}
		return out
	}
	sitetest.Run(t, sitetest.Harness{
		Adapter: e.site,
		Actor:   "alice",
		Tab:     e.newTab,
		Target: func(t *testing.T, k kind.Kind) string {
			if k == kind.Follow {
				return base + "/u/bob"
			}
			return permalink(demo.SeedPost("bob", "a post to act on "+time.Now().Format(time.RFC3339Nano), time.Now().Add(-time.Minute)))
		},
		Count: func(t *testing.T, k kind.Kind, text string) int {
			n := 0
			for _, ef := range effects(k) {
				if ef.Text == text {
					n++
				}
			}
			return n
		},
		Done: func(t *testing.T, k kind.Kind, target string) bool {
			for _, ef := range effects(k) {
				if k == kind.Like && permalink(ef.PostID) == target || k == kind.Follow && base+"/u/"+ef.Target == target {
					return true
				}
			}
			return false
		},
		Media: func(t *testing.T) []media.Item { return images(t, "A described image", "") },
		Refusals: map[sites.RefusalKind]func(*testing.T, sites.Intent) func(){
			sites.RefusedRateLimit: func(t *testing.T, _ sites.Intent) func() {
				require.NoError(t, demo.SetFaults(demosite.Faults{RateLimit: true}))
				return func() { require.NoError(t, demo.SetFaults(demosite.Faults{})) }
			},
		},
	})
}

// newTab opens another tab of e's browser for a subtest, closed when it
// ends: the conformance suite's Harness.Tab.
func (e *env) newTab(t *testing.T) *browser.Tab {
	t.Helper()
	tab, err := e.b.NewTab(e.ctx, "")
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = e.b.CloseTab(context.Background(), tab) })
	tab.SetActionTimeout(10 * time.Second)
	return tab
}
