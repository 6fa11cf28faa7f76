package main

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/ledger"
)

// probeTabs returns the world ledger's tab records for purpose, oldest
// first.
func (w *world) probeTabs(purpose ledger.TabPurpose) []ledger.Tab {
	w.t.Helper()
	db, err := ledger.Open(context.Background(), filepath.Join(w.dir, "state", "browserop", "ledger.db"), ledger.Options{MustExist: true})
	require.NoError(w.t, err)
	defer db.Close()
	all, err := db.ListTabs(context.Background(), "")
	require.NoError(w.t, err)
	var out []ledger.Tab
	for _, t := range all {
		if t.Purpose == purpose {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b ledger.Tab) int { return int(a.ID - b.ID) })
	return out
}

// openInChrome reports whether the attached Chrome of the world still has
// the tab of rec open.
func (w *world) openInChrome(rec ledger.Tab) bool {
	w.t.Helper()
	require.NotNil(w.t, w.chrome, "attach mode")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	others, err := w.chrome.Others(ctx)
	require.NoError(w.t, err)
	return slices.ContainsFunc(others, func(t browser.Target) bool { return t.ID.Raw() == rec.TargetID })
}

func (w *world) setCleanup(p ledger.CleanupPreference) {
	w.t.Helper()
	code, out, errs := w.run(nil, "config", "cleanup", string(p))
	require.Equal(w.t, 0, code, "%s%s", out, errs)
}

// newest is the last of recs, which must have grown by one since n.
func newest(t *testing.T, recs []ledger.Tab, n int) ledger.Tab {
	t.Helper()
	require.Len(t, recs, n+1, "one more tab record: %+v", recs)
	return recs[n]
}

// doctor's sign-in tab in the person's Chrome (attach mode) is a probe
// tab in the tab ledger: kept open and recorded so while no cleanup
// preference is set (doctor says so), and under never; closed with proof
// (closed_verified, and gone from Chrome) under
// submitted_and_probe_blockers.
func TestE2EDoctorRecordsItsTab(t *testing.T) {
	w := newWorld(t, opts{attach: true, noCleanup: true})
	code, out, errs := w.run(nil, "migrate")
	require.Equal(t, 0, code, "%s%s", out, errs)

	_, out, errs = w.run(nil, "doctor")
	require.Contains(t, out, "signed in as @alice", errs)
	require.Contains(t, out, "1 tab(s) left open: "+ledger.KeptNoPreference)
	rec := newest(t, w.probeTabs(ledger.PurposeDoctor), 0)
	require.Equal(t, ledger.TabKept, rec.State)
	require.Equal(t, ledger.KeptNoPreference, rec.KeptReason)
	require.NotEmpty(t, rec.TargetID)
	require.True(t, w.openInChrome(rec), "a kept tab stays open")

	w.setCleanup(ledger.CleanupNever)
	_, out, _ = w.run(nil, "doctor")
	require.Contains(t, out, "left open: "+ledger.KeptNever)
	rec = newest(t, w.probeTabs(ledger.PurposeDoctor), 1)
	require.Equal(t, ledger.TabKept, rec.State)
	require.Equal(t, ledger.KeptNever, rec.KeptReason)
	require.True(t, w.openInChrome(rec))

	w.setCleanup(ledger.CleanupSubmittedAndProbeBlockers)
	_, out, _ = w.run(nil, "doctor")
	require.Contains(t, out, "signed in as @alice")
	require.NotContains(t, out, "left open")
	rec = newest(t, w.probeTabs(ledger.PurposeDoctor), 2)
	require.Equal(t, ledger.TabClosedVerified, rec.State, "closed through the close-proof path")
	require.False(t, w.openInChrome(rec), "closed")
}

// A ledger doctor may not write to (not created yet) means no sign-in
// check at all: never a tab without a record.
func TestE2EDoctorWithoutLedgerOpensNoTab(t *testing.T) {
	w := newWorld(t, opts{attach: true, noCleanup: true})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	before, err := w.chrome.Others(ctx)
	require.NoError(t, err)
	_, out, _ := w.run(nil, "doctor")
	require.Contains(t, out, "not checked: the ledger, which records every tab browserop opens, is not created yet")
	after, err := w.chrome.Others(ctx)
	require.NoError(t, err)
	require.Len(t, after, len(before), "doctor left a tab")
}

// sites check's tab is a probe tab: kept while no preference is set,
// closed with proof under submitted_and_probe_blockers, kept under
// submitted_only (a probe tab); with --text typed into it, it is no probe
// and is kept even under submitted_and_probe_blockers.
func TestE2ESitesCheckRecordsItsTab(t *testing.T) {
	w := newWorld(t, opts{attach: true, noCleanup: true})
	code, out, errs := w.run(nil, "sites", "check", "demo")
	require.Equal(t, 0, code, "%s%s", out, errs)
	require.Contains(t, errs, "1 tab(s) left open: "+ledger.KeptNoPreference)
	rec := newest(t, w.probeTabs(ledger.PurposeSitesCheck), 0)
	require.Equal(t, ledger.TabKept, rec.State)
	require.Equal(t, ledger.KeptNoPreference, rec.KeptReason)
	require.True(t, w.openInChrome(rec))

	w.setCleanup(ledger.CleanupSubmittedOnly)
	code, _, errs = w.run(nil, "sites", "check", "demo")
	require.Equal(t, 0, code, errs)
	rec = newest(t, w.probeTabs(ledger.PurposeSitesCheck), 1)
	require.Equal(t, ledger.TabKept, rec.State)
	require.Equal(t, ledger.KeptProbe, rec.KeptReason)
	require.True(t, w.openInChrome(rec))

	w.setCleanup(ledger.CleanupSubmittedAndProbeBlockers)
	code, _, errs = w.run(nil, "sites", "check", "demo")
	require.Equal(t, 0, code, errs)
	require.NotContains(t, errs, "left open")
	rec = newest(t, w.probeTabs(ledger.PurposeSitesCheck), 2)
	require.Equal(t, ledger.TabClosedVerified, rec.State)
	require.False(t, w.openInChrome(rec))

	code, _, errs = w.run(nil, "sites", "check", "demo", "--text", "typed by sites check")
	require.Equal(t, 0, code, errs)
	rec = newest(t, w.probeTabs(ledger.PurposeSitesCheck), 3)
	require.True(t, rec.Typed)
	require.Equal(t, ledger.TabKept, rec.State, "text was typed in it: not a probe")
	require.Equal(t, ledger.KeptUnverified, rec.KeptReason)
	require.True(t, w.openInChrome(rec))
	require.Empty(t, w.effects(), "sites check publishes nothing")
}

// login records its tabs. Headless (no display here), its sign-in tab is
// seen only through DevTools while the sign-in lasts: a probe tab like the
// one login opens to ask the site who signed in, each closed with proof
// under submitted_and_probe_blockers, none of them marked shown. (In a
// window the sign-in tab is the person's and kept: that needs a display,
// which this machine has not.)
func TestE2ELoginRecordsItsTabs(t *testing.T) {
	w := newWorld(t, opts{browser: true}) // the person chose submitted_and_probe_blockers
	code, out, errs := w.run([]string{"DISPLAY=", "WAYLAND_DISPLAY="}, "login", "--site", "demo", "--timeout", "1m")
	require.Equal(t, 0, code, "%s%s", out, errs)
	require.Contains(t, out, "signed in to demo as @alice")
	recs := w.probeTabs(ledger.PurposeLogin)
	require.NotEmpty(t, recs)
	for _, r := range recs {
		require.False(t, r.Shown, "headless: no window showed it")
		require.Equal(t, ledger.TabClosedVerified, r.State, "a probe tab of login's, closed with proof")
	}
	require.NotContains(t, out, ledger.KeptShown)
}
