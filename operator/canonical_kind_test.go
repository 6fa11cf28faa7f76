package operator_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/demosite"
	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/operator"
	"github.com/browserop/browserop/sites"
)

// perKindCanonical is the demo adapter with a wiki's URL rules: the
// site's canonical rule keeps only title, a reply's own keeps a
// revision's oldid (its search reads the target's page, whose address is
// every reply's parent), and a follow's own keeps its control page's
// action=watch.
func perKindCanonical(t *testing.T, w *world) sites.Adapter {
	return wrongAdapter(t, w,
		"  reply: &reply\n    open: \"{target}\"\n",
		"  reply: &reply\n    open: \"{target}\"\n    canonical: {keep_query: [oldid]}\n"+
			"    search:\n"+
			"      url: \"{target}\"\n"+
			"      item: \"#replies article.post\"\n"+
			"      text: {selector: \".post-text\"}\n"+
			"      author: {attribute: data-author}\n"+
			"      time: {selector: \"time\", attribute: datetime}\n"+
			"      parent: {page: true}\n"+
			"      link: {selector: \"a.permalink\", attribute: href}\n"+
			"      media: *post-media\n"+
			"      complete_marker: \"#replies\"\n"+
			"      max_pages: 1\n"+
			"      lookback: 72h\n"+
			"      settle: 1s\n",
		"  follow:\n    open: \"{target}\"\n",
		"  follow:\n    open: \"{target}\"\n    canonical: {keep_query: [action]}\n",
		"\nrefusals:\n",
		"\ncanonical: {keep_query: [title]}\nrefusals:\n")
}

// A kind's own canonical rule replaces the site's for that kind, in what
// the operator compares: a follow whose control page is ?action=watch
// reads its state on the page it opened (the site's rule, which drops
// action, would call it another page and leave the follow ambiguous),
// while a reply to a revision (?oldid=1) keeps the revision as its
// parent. Both are published once and verified in one pass.
func TestCanonicalPerKind(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	bob := w.srv.SeedPost("bob", "a revision to answer", time.Now().Add(-time.Hour))
	site := perKindCanonical(t, w)
	reply := fmt.Sprintf("%s/p/%d?oldid=1&action=edit", w.base, bob)
	watch := w.base + "/u/carol?action=watch"
	require.Equal(t, fmt.Sprintf("%s/p/%d?oldid=1", w.base, bob), site.CanonicalFor(kind.Reply, reply), "the reply's rule keeps oldid")
	require.Equal(t, w.base+"/u/carol?action=watch", site.CanonicalFor(kind.Follow, watch), "the follow's rule keeps action")
	require.Equal(t, w.base+"/u/carol", site.Canonical(watch), "the site's rule keeps title only")
	require.Equal(t, w.base+"/u/carol", site.CanonicalFor(kind.Post, watch), "a kind without a rule has the site's")

	w.useRunner(nil, site)
	w.calendar("entries:\n" +
		fmt.Sprintf("  - {id: answer, site: demo, actor: alice, type: reply, at: \"{at}\", target: %q, text: \"an answer to the revision\"}\n", reply) +
		fmt.Sprintf("  - {id: watch, site: demo, actor: alice, type: follow, at: \"{at}\", target: %q}\n", watch))
	sum := w.pass()
	require.Equal(t, operator.OutcomeOK, sum.Outcome, "%+v", sum)
	require.Equal(t, 2, sum.Counts["verified"], "%+v", sum.Actions)
	require.Len(t, w.effects(demosite.EffectReply), 1)
	require.Len(t, w.effects(demosite.EffectFollow), 1)
	for _, a := range w.actions() {
		require.Equal(t, ledger.Verified, a.Status, "%s: %s", a.Type, a.FailureReason)
		if a.Type == kind.Follow {
			require.Equal(t, w.base+"/u/carol?action=watch", a.CanonicalResult, "the follow's result in its own canonical form")
		}
	}
}
