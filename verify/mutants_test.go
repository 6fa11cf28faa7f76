package verify_test

import (
	"testing"
	"time"

	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/verify"
)

// These tests guard the rules added last (issue 20, "Tests that guard the
// newest rules"): each fails on a one-line bug that a mutation run of the
// package's other tests left alive.

// A like whose clicking tab outlived the click (SettleFrom later than
// NotBefore) reads "not done" after the click's own settle time but
// inside the settle time counted from the proof that the tab is gone: the
// click may still land, so nothing is proven. Counting the settle from
// NotBefore instead of SettleStart() would call it absent, and like again.
func TestClassifyStateSettleCountsFromSettleStart(t *testing.T) {
	t.Parallel()
	const target = "https://site.test/bob/status/1"
	o := verify.Options{Settle: 2 * time.Minute}
	closed := t0.Add(10 * time.Minute) // the clicking tab proven gone
	in := verify.Intent{Kind: kind.Like, Actor: "alice", Target: target, NotBefore: t0, SettleFrom: closed}
	notDone := func(at time.Time) verify.State {
		return verify.State{Value: "like", Done: "liked", NotDone: "like", Fresh: true, ObservedAt: at, URL: target}
	}
	for _, tc := range []struct {
		name string
		at   time.Time
		want verify.Outcome
	}{
		{"AfterTheClicksSettleInsideTheTabsSettle", closed.Add(time.Minute), verify.Ambiguous},
		{"RightAtTheTabsClose", closed, verify.Ambiguous},
		{"AfterTheTabsSettle", closed.Add(o.Settle), verify.Absent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if v := verify.ClassifyState(in, notDone(tc.at), o); v.Outcome != tc.want {
				t.Fatalf("observed %s after the click, %s after the tab's close: got %v (%s), want %v",
					tc.at.Sub(t0), tc.at.Sub(closed), v.Outcome, v.Reason, tc.want)
			}
		})
	}
}

// With a baseline taken before the click, an item with the intended text
// and other media that is not in the baseline may be this action's result
// as the site changed it (a re-encoded image), whatever its time says: a
// site whose clock is hours behind dates it long before the action. It is
// never proof of absence. Judging it by its time alone (ignoring
// HaveBaseline) would take it for an older post and prove the action
// absent: a second post.
func TestClassifyBaselineOtherMediaIgnoresTime(t *testing.T) {
	t.Parallel()
	const u = "https://site.test/alice/status/10"
	in := imageIntent()
	before := verify.Search{Complete: true, ObservedAt: t0.Add(-time.Second)} // nothing identical before the click
	base, ok := verify.BaselineOf(in, before)
	if !ok || len(base) != 0 {
		t.Fatalf("baseline: got %v %v, want an empty one", base, ok)
	}
	in.Baseline, in.HaveBaseline = base, true
	// The result with its media changed, dated three hours before the
	// action by a site clock far behind ours: older than the suspect
	// window.
	changed := with(item(u), func(i *verify.Item) {
		i.Media = []verify.Media{{Type: "jpeg", Alt: "A red square", AltShown: true}, {Type: "jpeg", AltShown: true}}
		i.At = t0.Add(-3 * time.Hour)
	})
	v := verify.Classify(in, complete(changed), opts)
	if v.Outcome != verify.Ambiguous {
		t.Fatalf("an unexplained item with the text and other media, dated before the action: got %v (%s), want ambiguous", v.Outcome, v.Reason)
	}
	// The same item in the baseline was there before: an older post.
	in.Baseline = []string{u}
	if v := verify.Classify(in, complete(changed), opts); v.Outcome != verify.Absent {
		t.Fatalf("the same item in the baseline: got %v (%s), want absent", v.Outcome, v.Reason)
	}
}
