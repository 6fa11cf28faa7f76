package sites_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/demosite"
	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/sites"
	"github.com/browserop/browserop/verify"
)

// TestCanonicalThatMergesItemsIsUnusable: a canonical rule that drops
// what identifies an item gives two different items one link. Such a
// link cannot tell this action's result from an older item (the baseline
// would take the new one for the old, and a complete view would prove it
// absent; verification would take two for one): the items are read with
// the problem "link unusable", never a match, and the view is not
// complete.
func TestCanonicalThatMergesItemsIsUnusable(t *testing.T) {
	e := setup(t, demosite.Faults{})
	y := string(mustRead(t, demoPath)) + "canonical:\n  rewrite: [{match: '/p/\\d+$', replace: '/p/1'}]\n"
	d, err := sites.Parse("demo.yaml", []byte(y))
	require.NoError(t, err)
	d, err = d.WithOrigins(base)
	require.NoError(t, err)
	start := time.Now().Add(-time.Second)
	older := demo.SeedPost("alice", "an older post", time.Now().Add(-time.Hour))
	newer := demo.SeedPost("alice", "the action's post", time.Now())
	require.NotEqual(t, older, newer)

	res, err := d.Search(e.ctx, e.tab, sites.Query{Kind: kind.Post, Actor: "alice"})
	require.NoError(t, err)
	require.Len(t, res.Items, 2)
	for _, it := range res.Items {
		require.Equal(t, base+"/p/1", it.Link)
		require.Contains(t, it.Problems, "link: its canonical form is another item's too: the site's canonical rule drops what tells them apart")
	}
	vin := verify.Intent{Kind: kind.Post, Actor: "alice", Text: "the action's post", NotBefore: start}
	v := verify.Classify(vin, res.View(time.Now().Add(time.Hour)), verify.Options{Settle: res.Settle, Skew: time.Minute})
	require.Equal(t, verify.Ambiguous, v.Outcome, v.Reason)
	require.Contains(t, v.Reason, "link unusable")
	_, ok := verify.BaselineOf(vin, res.View(time.Now()))
	require.False(t, ok, "no baseline from a view whose links cannot tell items apart")

	// The bundled adapter tells them apart.
	res = e.search(sites.Query{Kind: kind.Post, Actor: "alice"})
	for _, it := range res.Items {
		require.True(t, it.OK(), "%v", it.Problems)
	}
}

// TestCompleteMarkerWithANextPage: a complete marker that matches on a
// page linking a next one (a marker that is on every page) does not make
// the first page the whole list.
func TestCompleteMarkerWithANextPage(t *testing.T) {
	e := setup(t, demosite.Faults{})
	now := time.Now()
	for i := range 25 {
		demo.SeedPost("alice", fmt.Sprintf("p%02d", i), now.Add(-time.Duration(25-i)*time.Minute))
	}
	d, err := sites.Parse("demo.yaml", demoWith(t, `complete_marker: '#timeline[data-complete="true"]'`, `complete_marker: '#timeline'`))
	require.NoError(t, err)
	d, err = d.WithOrigins(base)
	require.NoError(t, err)
	res, err := d.Search(e.ctx, e.tab, sites.Query{Kind: kind.Post, Actor: "alice"})
	require.NoError(t, err)
	require.Equal(t, 1, res.Pages)
	require.Len(t, res.Items, 20)
	require.False(t, res.Complete, "the page links an older one: the list goes on")

	res = e.search(sites.Query{Kind: kind.Post, Actor: "alice"})
	require.True(t, res.Complete)
	require.Equal(t, 2, res.Pages)
}

// TestStateUnknownIsNeverNotDone: a like control whose state is neither
// the done nor the not-done value is an unknown state: no click before
// (it might undo a like in place), no "not done" after.
func TestStateUnknownIsNeverNotDone(t *testing.T) {
	e := setup(t, demosite.Faults{})
	id := demo.SeedPost("bob", "like me", time.Now().Add(-time.Minute))
	d, err := sites.Parse("demo.yaml", demoWith(t, "      not_done_value: like\n", "      not_done_value: unliked\n"))
	require.NoError(t, err)
	d, err = d.WithOrigins(base)
	require.NoError(t, err)
	_, err = d.Search(e.ctx, e.tab, sites.Query{Kind: kind.Like, Actor: "alice", Target: permalink(id)})
	require.Equal(t, sites.StopStateUnknown, sites.AsHardStop(err).Kind, "%v", err)
	_, err = perform(e.ctx, d, e.tab, sites.Intent{Kind: kind.Like, Actor: "alice", Target: permalink(id)})
	require.Equal(t, sites.StopStateUnknown, sites.AsHardStop(err).Kind, "%v", err)
	require.Empty(t, demo.Effects(), "nothing was clicked")
}
