package operator_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/demosite"
	"github.com/browserop/browserop/ledger"
)

// withProfile points w's runner at another profile: its cleanup
// preference is set only when pref is not unknown.
func (w *world) withProfile(profile string, pref ledger.CleanupPreference) {
	w.t.Helper()
	w.cfg.Profile = profile
	w.runner = nil
	if pref != ledger.CleanupUnknown {
		_, err := w.db.SetCleanupPreference(context.Background(), profile, pref, "test")
		require.NoError(w.t, err)
	}
}

// passTabs returns the tab records of pass purpose, oldest first.
func (w *world) passTabs() []ledger.Tab {
	w.t.Helper()
	recs, err := w.db.ListTabs(context.Background(), "")
	require.NoError(w.t, err)
	return recs
}

// open reports whether a complete inventory lists the record's tab.
func (w *world) open(rec ledger.Tab) bool {
	w.t.Helper()
	inv, err := w.b.Targets(context.Background())
	require.NoError(w.t, err)
	require.True(w.t, inv.Complete)
	return inv.Has(browser.TargetID(rec.TargetID))
}

// A tab that met a CAPTCHA before anything was filled: closed, with proof
// and its blocker recorded, only under submitted_and_probe_blockers;
// every other preference, and none, leaves it open, recorded kept with
// why. (Before, it ended closed_verified with no preference asked.)
func TestCaptchaProbeTabFollowsThePreference(t *testing.T) {
	for _, tc := range []struct {
		pref   ledger.CleanupPreference
		state  ledger.TabState
		reason string
	}{
		{ledger.CleanupUnknown, ledger.TabKept, ledger.KeptNoPreference},
		{ledger.CleanupNever, ledger.TabKept, ledger.KeptNever},
		{ledger.CleanupSubmittedOnly, ledger.TabKept, ledger.KeptProbe},
		{ledger.CleanupSubmittedAndProbeBlockers, ledger.TabClosedVerified, ""},
	} {
		t.Run(string(tc.pref)+"_", func(t *testing.T) {
			w := newWorld(t, demosite.Faults{Captcha: true})
			w.withProfile("/profile/"+string(tc.pref), tc.pref)
			w.calendar("entries:\n" + post("p1", "behind a captcha"))
			sum := w.pass()
			require.Equal(t, "captcha", sum.HardStop, "%+v", sum)
			recs := w.passTabs()
			require.Len(t, recs, 1)
			rec := recs[0]
			require.Equal(t, "captcha", rec.Blocker, "the blocker is recorded")
			require.Equal(t, tc.state, rec.State)
			require.Equal(t, tc.reason, rec.KeptReason)
			d, err := w.db.TabDispositionOf(context.Background(), rec)
			require.NoError(t, err)
			require.Empty(t, d.Uses, "nothing was filled")
			require.Equal(t, tc.state == ledger.TabKept, w.open(rec), "open exactly when kept")
			if tc.state == ledger.TabKept {
				require.Equal(t, 1, sum.Counts["tabs_kept"])
				require.Contains(t, sum.TabsLeftOpen, tc.reason, "the summary says why")
			} else {
				require.Empty(t, sum.TabsLeftOpen)
			}
			if tc.pref == ledger.CleanupUnknown {
				require.Contains(t, sum.TabsLeftOpen, "browserop config cleanup", "and how to choose")
			}
		})
	}
}

// Under never, a tab whose post was verified stays open, kept; the next
// pass neither takes it for lost nor reuses it (it opens its own tab);
// once the person chooses submitted_only, a pass closes it with proof.
// Its closure proves nothing about the post, which was verified before.
func TestKeptTabLaterClosedWhenThePreferenceCoversIt(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, demosite.Faults{})
	w.withProfile("/profile/never", ledger.CleanupNever)
	w.calendar("entries:\n" + post("p1", "kept open"))
	sum := w.pass()
	require.Equal(t, 1, sum.Counts["verified"], "%+v", sum)
	recs := w.passTabs()
	require.Len(t, recs, 1)
	kept := recs[0]
	require.Equal(t, ledger.TabKept, kept.State)
	require.Equal(t, ledger.KeptNever, kept.KeptReason)
	require.True(t, w.open(kept))

	w.calendar("entries:\n" + post("p1", "kept open") + post("p2", "second"))
	sum = w.pass()
	require.Equal(t, 1, sum.Counts["verified"], "%+v", sum)
	got, err := w.db.GetTab(ctx, kept.ID)
	require.NoError(t, err)
	require.Equal(t, ledger.TabKept, got.State, "not lost, not closed")
	require.Equal(t, kept.Epoch, got.Epoch, "not taken up again")
	require.Len(t, w.passTabs(), 2, "the second pass opened its own tab")
	require.True(t, w.open(kept))
	d, err := w.db.TabDispositionOf(ctx, got)
	require.NoError(t, err)
	require.Len(t, d.Uses, 1, "the kept tab holds only the first post's use")

	_, err = w.db.SetCleanupPreference(ctx, "/profile/never", ledger.CleanupSubmittedOnly, "test")
	require.NoError(t, err)
	w.runner = nil
	w.calendar("entries:\n" + post("p1", "kept open") + post("p2", "second") + post("p3", "third"))
	sum = w.pass()
	require.Equal(t, 1, sum.Counts["verified"], "%+v", sum)
	got, err = w.db.GetTab(ctx, kept.ID)
	require.NoError(t, err)
	require.Equal(t, ledger.TabClosedVerified, got.State, "closed with proof once the preference covers it")
	require.False(t, w.open(kept))
	for _, a := range w.actions() {
		require.Equal(t, ledger.Verified, a.Status, "closing tabs changed no action")
	}
}

// A kept tab the person closes is recorded missing by the next pass that
// looks (absent from complete inventories of both surfaces), never
// reopened.
func TestKeptTabClosedByThePerson(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, demosite.Faults{})
	w.withProfile("/profile/unknown", ledger.CleanupUnknown)
	w.calendar("entries:\n" + post("p1", "left open"))
	sum := w.pass()
	require.Contains(t, sum.TabsLeftOpen, "no cleanup preference", "%+v", sum)
	kept := w.passTabs()[0]
	require.Equal(t, ledger.TabKept, kept.State)
	// The person closes it (as the test's browser may: it adopts it first).
	require.NoError(t, w.b.Adopt(ctx, browser.TargetID(kept.TargetID)))
	_, err := w.b.CloseTarget(ctx, browser.TargetID(kept.TargetID))
	require.NoError(t, err)
	require.False(t, w.open(kept))
	w.calendar("entries:\n" + post("p1", "left open") + post("p2", "next"))
	sum = w.pass()
	require.Equal(t, 1, sum.Counts["verified"], "%+v", sum)
	got, err := w.db.GetTab(ctx, kept.ID)
	require.NoError(t, err)
	require.Equal(t, ledger.TabMissing, got.State, "gone from both surfaces: the person closed it")
	require.Equal(t, kept.TargetID, got.TargetID, "never reopened")
}
