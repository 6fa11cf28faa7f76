package verify_test

import (
	"testing"
	"time"

	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/verify"
)

func TestClassifyState(t *testing.T) {
	t.Parallel()
	const target = "https://site.test/bob/status/1"
	like := verify.Intent{Kind: kind.Like, Actor: "alice", Target: target, NotBefore: t0}
	follow := verify.Intent{Kind: kind.Follow, Actor: "alice", Target: "https://site.test/bob", NotBefore: t0}
	liked := verify.State{Value: "liked", Done: "liked", NotDone: "like", Fresh: true, ObservedAt: t0.Add(5 * time.Minute), URL: target}
	st := func(f func(*verify.State)) verify.State { s := liked; f(&s); return s }
	surfacing := like
	surfacing.MaySurface = true

	tests := []struct {
		name    string
		in      verify.Intent
		st      verify.State
		want    verify.Outcome
		wantURL string
	}{
		{"VerifiedLiked", like, liked, verify.Verified, target},
		{"VerifiedInsideSettle", like, st(func(s *verify.State) { s.ObservedAt = t0 }), verify.Verified, target},
		{"VerifiedTargetNormalized", like, st(func(s *verify.State) { s.URL = "HTTPS://site.test:443/bob/status/1" }), verify.Verified, target},
		{"VerifiedFollowing", follow, verify.State{Value: " following ", Done: "following", NotDone: "follow", Fresh: true, ObservedAt: t0, URL: "https://site.test/bob"}, verify.Verified, "https://site.test/bob"},
		{"AbsentNotDoneAfterSettle", like, st(func(s *verify.State) { s.Value = "like" }), verify.Absent, ""},
		{"AmbiguousNotDoneInsideSettle", like, st(func(s *verify.State) { s.Value = "like"; s.ObservedAt = t0.Add(time.Minute) }), verify.Ambiguous, ""},
		{"AmbiguousStaleDone", like, st(func(s *verify.State) { s.Fresh = false }), verify.Ambiguous, ""},
		{"AmbiguousStaleNotDone", like, st(func(s *verify.State) { s.Fresh = false; s.Value = "like" }), verify.Ambiguous, ""},
		{"AmbiguousUnknownValue", like, st(func(s *verify.State) { s.Value = "Liked" }), verify.Ambiguous, ""},
		{"AmbiguousEmptyValue", like, st(func(s *verify.State) { s.Value = "" }), verify.Ambiguous, ""},
		{"AmbiguousLabelsMissing", like, st(func(s *verify.State) { s.Done = "" }), verify.Ambiguous, ""},
		{"AmbiguousLabelsEqual", like, st(func(s *verify.State) { s.NotDone = "liked" }), verify.Ambiguous, ""},
		{"AmbiguousOtherPage", like, st(func(s *verify.State) { s.URL = "https://site.test/bob/status/2" }), verify.Ambiguous, ""},
		{"AmbiguousOtherFragment", like, st(func(s *verify.State) { s.URL = target + "#comment-1" }), verify.Ambiguous, ""},
		{"AmbiguousNoPage", like, st(func(s *verify.State) { s.URL = "" }), verify.Ambiguous, ""},
		{"AmbiguousPostIntent", postIntent(), liked, verify.Ambiguous, ""},
		{"AmbiguousNoTarget", verify.Intent{Kind: kind.Like, Actor: "alice", NotBefore: t0}, st(func(s *verify.State) { s.URL = "" }), verify.Ambiguous, ""},
		{"AmbiguousNoNotBefore", verify.Intent{Kind: kind.Like, Actor: "alice", Target: target}, st(func(s *verify.State) { s.Value = "like" }), verify.Ambiguous, ""},
		{"AmbiguousNotDoneMaySurface", surfacing, st(func(s *verify.State) { s.Value = "like"; s.ObservedAt = t0.Add(48 * time.Hour) }), verify.Ambiguous, ""},
		{"VerifiedMaySurface", surfacing, liked, verify.Verified, target},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v := verify.ClassifyState(tt.in, tt.st, opts)
			if v.Outcome != tt.want {
				t.Fatalf("got %v (%s), want %v", v.Outcome, v.Reason, tt.want)
			}
			if v.URL != tt.wantURL {
				t.Errorf("URL: got %q, want %q", v.URL, tt.wantURL)
			}
			if v.Reason == "" {
				t.Error("empty reason")
			}
		})
	}
}

// A like or follow whose click may surface late is proven absent only
// after the site's bound.
func TestClassifyStateSurfaceBound(t *testing.T) {
	t.Parallel()
	const target = "https://site.test/bob/status/1"
	in := verify.Intent{Kind: kind.Like, Actor: "alice", Target: target, NotBefore: t0, MaySurface: true}
	notDone := func(d time.Duration) verify.State {
		return verify.State{Value: "like", Done: "liked", NotDone: "like", Fresh: true, ObservedAt: t0.Add(d), URL: target}
	}
	o := verify.Options{Settle: time.Minute, SurfaceWithin: time.Hour}
	if v := verify.ClassifyState(in, notDone(30*time.Minute), o); v.Outcome != verify.Ambiguous {
		t.Fatalf("inside the bound: got %v (%s), want ambiguous", v.Outcome, v.Reason)
	}
	if v := verify.ClassifyState(in, notDone(time.Hour), o); v.Outcome != verify.Absent {
		t.Fatalf("after the bound: got %v (%s), want absent", v.Outcome, v.Reason)
	}
}
