package operator_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/demosite"
	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/operator"
)

// TestPassRefusesEntryOutsideAuthorityAtLoad: an entry whose target is
// outside its site's domains, or that names an unknown site, is refused
// when the calendar is read, named by file and line; it never hard-stops
// the pass, and the entries after it are published.
func TestPassRefusesEntryOutsideAuthorityAtLoad(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	at := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	later := time.Now().Add(-time.Second).UTC().Format(time.RFC3339)
	cal := fmt.Sprintf(`entries:
  - {id: evil, site: demo, actor: alice, type: like, at: %q, target: "https://evil.example/p/1"}
  - {id: nowhere, site: mastodon, actor: alice, type: post, at: %q, text: "no such site"}
  - {id: fine, site: demo, actor: alice, type: post, at: %q, text: "published although an entry before it is bad"}
`, at, at, later)
	require.NoError(t, os.WriteFile(filepath.Join(w.calDir, "cal.yaml"), []byte(cal), 0o600))
	file := filepath.Join(w.calDir, "cal.yaml")

	sum := w.pass()
	require.Equal(t, operator.OutcomeOK, sum.Outcome, "no hard stop: %+v", sum)
	require.Empty(t, sum.HardStop)
	require.Equal(t, 1, sum.Counts["verified"], "%+v", sum.Actions)
	require.Len(t, w.effects(demosite.EffectPost), 1)
	require.Empty(t, w.effects(demosite.EffectLike))
	problems := strings.Join(sum.Problems, "\n")
	require.Contains(t, problems, fmt.Sprintf(`%s:2: entry "evil": target "https://evil.example/p/1" is outside the authority of site "demo"`, file))
	require.Contains(t, problems, fmt.Sprintf(`%s:3: entry "nowhere": site "mastodon" has no adapter`, file))
	for _, a := range w.actions() {
		require.NotEqual(t, kind.Like, a.Type, "the refused entry was never reserved")
	}
	// Refused before it is due too: the problem is there in every pass.
	sum = w.pass()
	require.Equal(t, operator.OutcomeOK, sum.Outcome)
	require.Contains(t, strings.Join(sum.Problems, "\n"), `entry "evil"`)
}

// TestPassHardStopStopsOnlyItsSite: a blocker screen on one site stops
// that site; the entries of another site are still published.
func TestPassHardStopStopsOnlyItsSite(t *testing.T) {
	w := newWorld(t, demosite.Faults{Captcha: true})
	other := newSecondSite(t, w, "other")

	w.calendar(`entries:
  - {id: a1, site: demo, actor: alice, type: post, at: "{at}", text: "demo first"}
  - {id: b1, site: other, actor: alice, type: post, at: "{at}", text: "other first"}
  - {id: a2, site: demo, actor: alice, type: post, at: "{at}", text: "demo second"}
  - {id: b2, site: other, actor: alice, type: post, at: "{at}", text: "other second"}
`)
	sum := w.pass()
	require.Equal(t, operator.OutcomeHardStop, sum.Outcome, "%+v", sum)
	require.Equal(t, map[string]string{"demo": "captcha"}, sum.StoppedSites, "only the demo site stopped")
	require.Equal(t, "captcha", sum.HardStop)
	require.Empty(t, w.effects(""), "nothing on the stopped site")
	var posted []string
	for _, e := range other.srv.Effects() {
		posted = append(posted, e.Text)
	}
	require.ElementsMatch(t, []string{"other first", "other second"}, posted, "the other site went on: %+v", sum.Actions)
	for _, a := range w.actions() {
		if a.Site == "demo" {
			require.NotEqual(t, ledger.Verified, a.Status)
			require.True(t, a.ExecutingAt.IsZero(), "nothing performed on the stopped site")
		}
	}
	// With the screen gone, the next pass publishes the stopped site's.
	require.NoError(t, w.srv.SetFaults(demosite.Faults{}))
	sum = w.pass()
	require.Equal(t, operator.OutcomeOK, sum.Outcome, "%+v", sum.Actions)
	require.Len(t, w.effects(demosite.EffectPost), 2)
	require.Len(t, other.srv.Effects(), 2, "nothing twice")
}

// TestPassAmbiguousStopsEverySite: an unresolved ambiguous action on one
// site stops mutations on every site, not only its own.
func TestPassAmbiguousStopsEverySite(t *testing.T) {
	w := newWorld(t, demosite.Faults{VisibilityDelay: 30 * time.Second})
	other := newSecondSite(t, w, "other")
	w.calendar(`entries:
  - {id: a1, site: demo, actor: alice, type: post, at: "{at}", text: "demo, not visible yet"}
  - {id: b1, site: other, actor: alice, type: post, at: "{at}", text: "other, held"}
`)
	sum := w.pass()
	require.Equal(t, operator.OutcomeNeedsPerson, sum.Outcome, "%+v", sum)
	require.Empty(t, sum.StoppedSites, "a pass-wide stop, not a site's")
	require.Equal(t, "an unresolved ambiguous action", sum.HardStop)
	require.Len(t, w.effects(demosite.EffectPost), 1)
	require.Empty(t, other.srv.Effects(), "the other site waits too: %+v", sum.Actions)
}

// secondSite is another demosite under another adapter name.
type secondSite struct {
	srv  *demosite.Server
	base string
}

// newSecondSite starts a second demosite, signs the shared browser in to it
// as alice and rebuilds w's runner with both adapters.
func newSecondSite(t *testing.T, w *world, name string) *secondSite {
	t.Helper()
	host := fmt.Sprintf("127.0.0.%d", 2+hosts.Add(1))
	srv := demosite.New(demosite.Options{Oracle: true})
	base, err := srv.Start(host + ":0")
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	adapter := demoAdapterNamed(t, base, name)
	sw := &world{t: t, srv: srv, base: base, b: w.b}
	sw.login("alice")
	w.useRunner(nil, w.site, adapter)
	return &secondSite{srv: srv, base: base}
}
