package operator_test

import (
	"context"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/bundled"
	"github.com/browserop/browserop/demosite"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/sites"
)

// wrongAdapter is the demo adapter on w's site with the edits a person
// made to it by mistake (old → new, each applied once).
func wrongAdapter(t *testing.T, w *world, edits ...string) sites.Adapter {
	t.Helper()
	raw, err := fs.ReadFile(bundled.Sites, "sites/demo.yaml")
	require.NoError(t, err)
	spec := strings.Replace(string(raw), "settle: 15s", "settle: "+settle.String(), 1)
	spec = strings.Replace(spec, "http://127.0.0.1:8787", w.base, 1)
	for i := 0; i+1 < len(edits); i += 2 {
		require.Contains(t, spec, edits[i], "the edit applies to the demo adapter")
		spec = strings.Replace(spec, edits[i], edits[i+1], 1)
	}
	d, err := sites.Parse("demo.yaml", []byte(spec))
	require.NoError(t, err)
	return d
}

// onceThenAmbiguous runs a pass with the site's answer to the click lost
// (the post is committed), then passes with the fault gone: the post is
// published once, and the action waits for a person, ambiguous, with a
// reason that contains each of want.
func onceThenAmbiguous(t *testing.T, w *world, want ...string) ledger.Action {
	t.Helper()
	require.NoError(t, w.srv.SetFaults(demosite.Faults{DropAfterCommit: true}))
	w.calendar("entries:\n" + post("p1", "a post the adapter misreads"))
	w.pass()
	require.Len(t, w.effects(demosite.EffectPost), 1)
	require.NoError(t, w.srv.SetFaults(demosite.Faults{}))
	for range 2 {
		w.pass()
	}
	require.Len(t, w.effects(demosite.EffectPost), 1, "published once, never again: invariant 12")
	as := w.actions()
	require.Len(t, as, 1)
	require.Equal(t, ledger.Ambiguous, as[0].Status, "%+v", as[0])
	for _, s := range want {
		require.Contains(t, as[0].FailureReason, s)
	}
	return as[0]
}

// Finding 2 of issue 20: the site shows the text otherwise than the
// adapter's transforms predict. No exact match is found; the post it made
// is an item by the actor that appeared after the click and is no other
// action's result, so its absence is never proven, and a person is told
// which item to look at and how to settle it.
func TestWrongTransformNeverPublishesTwice(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	w.useRunner(nil, wrongAdapter(t, w, "search:\n", "transforms: [{match: '$', replace: ' — sent with browserop'}]\nsearch:\n"))
	a := onceThenAmbiguous(t, w, "an item by @alice appeared at "+w.base+"/p/", "does not match the intended item (its text differs",
		"a post the adapter misreads")
	require.Contains(t, a.FailureReason, "browserop actions resolve "+a.ID+" --verified URL")
	// The person settles it in one step, with the URL named.
	e := w.effects(demosite.EffectPost)[0]
	_, err := w.db.Resolve(context.Background(), a.ID, ledger.Change{To: ledger.Verified, Result: fmt.Sprintf("%s/p/%d", w.base, e.PostID), Reason: "resolved by a person: that is the post"})
	require.NoError(t, err)
	w.pass()
	require.Len(t, w.effects(demosite.EffectPost), 1)
}

// Finding 3 of issue 20: a search whose item selector matches nothing
// (a theme renamed the class) reads a complete, empty view. It cannot show
// that it sees, so it proves nothing: the post is published once.
func TestBlindSearchNeverPublishesTwice(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	w.useRunner(nil, wrongAdapter(t, w, `item: "#timeline article.post"`, `item: "#timeline article.entry"`))
	// With the site's count declared, the count disagrees with the items
	// read: the view is not complete. Either way it proves nothing.
	onceThenAmbiguous(t, w)
}

// A search whose author field reads something other than the handle (a
// display name) sees no item of the actor's: blind as well.
func TestSearchReadingNoActorNeverPublishesTwice(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	w.useRunner(nil, wrongAdapter(t, w, "\n  author: {attribute: data-author}", "\n  author: {selector: \".post-text\"}"))
	onceThenAmbiguous(t, w, "cannot show that it sees")
}

// A canonical rule that drops the identifying part of a permalink
// (a rewrite of "/[0-9]+$" meant for page numbers, on /p/N) turns the one
// item a fresh account's list holds into a match at the list's address.
// The rewritten link is opened before it is recorded: /p shows no post, so
// the action waits for a person, named with the link the page gave, and
// is never published again.
func TestCanonicalDroppingTheIDNeverVerifies(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	w.useRunner(nil, wrongAdapter(t, w, "search:\n", "canonical:\n  rewrite: [{match: '/[0-9]+$', replace: ''}]\nsearch:\n"))
	w.calendar("entries:\n" + post("p1", "a post whose link the adapter cuts"))
	for range 2 {
		w.pass()
	}
	effects := w.effects(demosite.EffectPost)
	require.Len(t, effects, 1, "published once, never again: invariant 12")
	as := w.actions()
	require.Len(t, as, 1)
	require.Equal(t, ledger.Ambiguous, as[0].Status, "never verified at the list's address: %+v", as[0])
	require.Contains(t, as[0].FailureReason, fmt.Sprintf("the result link %s/p is the adapter's canonical form of %s/p/%d", w.base, w.base, effects[0].PostID))
	require.Contains(t, as[0].FailureReason, "which answers 404")
	require.Contains(t, as[0].FailureReason, "browserop actions resolve "+as[0].ID+" --verified URL")
}

// A canonical rule that changes a link into another address of the same
// item is proven by opening it: demosite shows the post at /post?id=N too,
// and the result there links itself the same way, so the action verifies
// at the rewritten address.
func TestCanonicalRewriteToAnotherAddressOfTheItemVerifies(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	w.useRunner(nil, wrongAdapter(t, w, "search:\n", "canonical:\n  rewrite: [{match: '/p/([0-9]+)$', replace: '/post?id=${1}'}]\nsearch:\n"))
	w.calendar("entries:\n" + post("p1", "a post under its other address"))
	w.pass()
	effects := w.effects(demosite.EffectPost)
	require.Len(t, effects, 1)
	as := w.actions()
	require.Len(t, as, 1)
	require.Equal(t, ledger.Verified, as[0].Status, "%+v", as[0])
	require.Equal(t, fmt.Sprintf("%s/post?id=%d", w.base, effects[0].PostID), as[0].CanonicalResult)
}
