package sites_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/demosite"
	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/sites"
	"github.com/browserop/browserop/sites/sitetest"
)

// richSite is the rich composer's test adapter on this demosite.
func richSite(t *testing.T) *sites.Declarative {
	t.Helper()
	d, err := sites.Load("testdata/rich.yaml")
	require.NoError(t, err)
	d, err = d.WithOrigins(base)
	require.NoError(t, err)
	return d
}

// TestRichConformance runs the conformance suite for a UI that publishes
// by fetch behind a confirmation panel: title and body in contenteditable
// editors, a block added by a step, the landing recognised by the toast or
// the API's answer (never by a timeout), refusals from the API's status.
func TestRichConformance(t *testing.T) {
	e := setup(t, demosite.Faults{})
	d := richSite(t)
	sitetest.Run(t, sitetest.Harness{
		Adapter: d,
		Actor:   "alice",
		Tab:     e.newTab,
		Count: func(t *testing.T, k kind.Kind, text string) int {
			n := 0
			for _, ef := range demo.Effects() {
				if ef.Kind == demosite.EffectPost && ef.Author == "alice" && strings.TrimSpace(ef.Text) == strings.TrimSpace(text) {
					n++
				}
			}
			return n // seeded posts are not effects
		},
		Refusals: map[sites.RefusalKind]func(*testing.T, sites.Intent) func(){
			sites.RefusedDuplicate: func(t *testing.T, in sites.Intent) func() {
				require.NoError(t, demo.SetFaults(demosite.Faults{RefuseDuplicates: true}))
				expected := d.Expected(in.Kind, in.Actor, in.Text, time.Now())
				demo.SeedPost("alice", expected, time.Now())
				return func() { require.NoError(t, demo.SetFaults(demosite.Faults{})) }
			},
			sites.RefusedRateLimit: func(t *testing.T, _ sites.Intent) func() {
				require.NoError(t, demo.SetFaults(demosite.Faults{RateLimit: true}))
				return func() { require.NoError(t, demo.SetFaults(demosite.Faults{})) }
			},
			sites.RefusedLogin: func(t *testing.T, _ sites.Intent) func() {
				require.NoError(t, demo.SetFaults(demosite.Faults{SessionExpired: true}))
				return func() { require.NoError(t, demo.SetFaults(demosite.Faults{})) }
			},
		},
	})
}

// TestRichPanelOffAndMessage: with the confirmation panel off the toggle
// itself publishes (the panel step does not run), and a refusal carries the
// site's own message.
func TestRichPanelOffAndMessage(t *testing.T) {
	e := setup(t, demosite.Faults{})
	d := richSite(t)
	in := sites.Intent{Kind: kind.Post, Actor: "alice", Text: "Panel off\n\nthe toggle publishes"}
	// The adapter opens /compose/rich; panel=off is the page's own switch,
	// so open it by hand, as a site setting would show it.
	_, err := e.tab.Navigate(e.ctx, base+"/compose/rich?panel=off")
	require.NoError(t, err)
	_, err = d.Fill(e.ctx, e.tab, in)
	require.NoError(t, err)
	n, err := e.tab.Count(e.ctx, "#rich-panel:not([hidden])")
	require.NoError(t, err)
	require.Zero(t, n, "the panel step did not run")
	require.NoError(t, d.Submit(e.ctx, e.tab, in))
	obs, err := d.Result(e.ctx, e.tab, in)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(obs.URL, base+"/p/"), obs.URL)

	// The same text again, duplicates refused: the site's message is kept.
	require.NoError(t, demo.SetFaults(demosite.Faults{RefuseDuplicates: true}))
	_, err = e.tab.Navigate(e.ctx, base+"/compose/rich?panel=off")
	require.NoError(t, err)
	_, err = d.Fill(e.ctx, e.tab, in)
	require.NoError(t, err)
	err = d.Submit(e.ctx, e.tab, in)
	ref := sites.AsRefusal(err)
	require.NotNil(t, ref, "%v", err)
	require.Equal(t, sites.RefusedDuplicate, ref.Kind)
	require.Equal(t, 409, ref.Status)
	require.NotEmpty(t, ref.Message, "the site's message")
	require.ErrorIs(t, err, sites.ErrOutcomeUnknown, "the site says it holds the text: verification decides, never a definitive failure")
	require.Equal(t, "the site says it already holds the item", ref.Doubt)
}

// TestRichStepFailsBeforeTheClick: a step that does not work is
// ErrStepFailed, and nothing is published.
func TestRichStepFailsBeforeTheClick(t *testing.T) {
	e := setup(t, demosite.Faults{})
	d := richSite(t)
	spec := d.Spec()
	spec.Actions.Post.Steps[0].Wait = "#never-there"
	y := strings.Replace(string(mustRead(t, "testdata/rich.yaml")), `wait: "button#rich-publish"`, `wait: "#never-there"`, 1)
	broken, err := sites.Parse("rich.yaml", []byte(y))
	require.NoError(t, err)
	broken, err = broken.WithOrigins(base)
	require.NoError(t, err)
	in := sites.Intent{Kind: kind.Post, Actor: "alice", Text: "Never\n\npublished"}
	_, err = broken.Open(e.ctx, e.tab, in)
	require.NoError(t, err)
	e.tab.SetActionTimeout(2 * time.Second)
	_, err = broken.Fill(e.ctx, e.tab, in)
	require.ErrorIs(t, err, sites.ErrStepFailed)
	require.NotErrorIs(t, err, sites.ErrOutcomeUnknown)
	require.Empty(t, demo.Effects())
}

// TestFrameEditorAndTextSearch: an editor inside a same-origin iframe
// (TinyMCE's shape) is filled and read back through the adapter, and the
// published text is found by a search whose URL carries it ({text}).
func TestFrameEditorAndTextSearch(t *testing.T) {
	e := setup(t, demosite.Faults{})
	d, err := sites.Load("testdata/frame.yaml")
	require.NoError(t, err)
	d, err = d.WithOrigins(base)
	require.NoError(t, err)
	text := "In a frame & found by its text?"
	in := sites.Intent{Kind: kind.Post, Actor: "alice", Text: text}
	_, err = d.Open(e.ctx, e.tab, in)
	require.NoError(t, err)
	got, err := d.Fill(e.ctx, e.tab, in)
	require.NoError(t, err)
	require.Equal(t, text, got)
	require.NoError(t, d.Submit(e.ctx, e.tab, in))
	obs, err := d.Result(e.ctx, e.tab, in)
	require.NoError(t, err)
	require.Equal(t, text, obs.Text)
	require.Len(t, demo.Effects(), 1)

	res, err := d.Search(e.ctx, e.tab, sites.Query{Kind: kind.Post, Actor: "alice", Text: text})
	require.NoError(t, err)
	require.Len(t, withText(res.Items, text), 1)
	u, err := e.tab.URL(e.ctx)
	require.NoError(t, err)
	require.Equal(t, base+"/u/alice?q=In+a+frame+%26+found+by+its+text%3F", u, "the text is query-escaped into the search URL")
}

// TestRefusalScreenOnAServerErrorProvesNothing: a refusal rule without a
// status does not match an answer of 500 or more (the site may have
// written before it failed), so a committed post answered by a 500 page
// that the rule's selector matches stays an unknown outcome.
func TestRefusalScreenOnAServerErrorProvesNothing(t *testing.T) {
	e := setup(t, demosite.Faults{})
	y := string(mustRead(t, demoPath)) + "\n  - kind: validation\n    selector: \"h1#server-error\"\n"
	d, err := sites.Parse("demo.yaml", []byte(y))
	require.NoError(t, err)
	d, err = d.WithOrigins(base)
	require.NoError(t, err)
	require.NoError(t, demo.SetFaults(demosite.Faults{Error500AfterCommit: true}))
	in := sites.Intent{Kind: kind.Post, Actor: "alice", Text: "committed, then a 500"}
	_, err = d.Open(e.ctx, e.tab, in)
	require.NoError(t, err)
	_, err = d.Fill(e.ctx, e.tab, in)
	require.NoError(t, err)
	err = d.Submit(e.ctx, e.tab, in)
	require.Nil(t, sites.AsRefusal(err), "not a refusal: %v", err)
	require.ErrorIs(t, err, sites.ErrOutcomeUnknown)
	require.Len(t, demo.Effects(), 1, "the post was committed")
}
