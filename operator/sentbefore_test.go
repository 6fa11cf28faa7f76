package operator_test

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/bundled"
	"github.com/browserop/browserop/demosite"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/operator"
	"github.com/browserop/browserop/sites"
)

// sendingStepAdapter is the demo adapter on base whose post declares,
// before its committing click, a step that clicks the composer's own
// Post button (a wrong adapter: it took it for a "next" button) and then
// waits, in vain, for what it expected.
func sendingStepAdapter(t *testing.T, base string) sites.Adapter {
	t.Helper()
	raw, err := fs.ReadFile(bundled.Sites, "sites/demo.yaml")
	require.NoError(t, err)
	spec := strings.Replace(string(raw), "settle: 15s", "settle: "+settle.String(), 1)
	spec = strings.Replace(spec, "http://127.0.0.1:8787", base, 1)
	const fill = "    fill:\n      selector: \"textarea#compose-text\"\n"
	require.Equal(t, 1, strings.Count(spec, fill), "the demo adapter's post fills the composer")
	spec = strings.Replace(spec, fill, fill+"    steps:\n      - click: \"button#compose-submit\"\n        wait: \"#next-page-of-the-composer\"\n        timeout: 2s\n", 1)
	d, err := sites.Parse("demo.yaml", []byte(spec))
	require.NoError(t, err)
	return d
}

// TestStepThatSentIsNeverRetried: a step before the committing click that
// sent the submission and then failed (the adapter took the Post button
// for something else) is no "nothing was submitted" failure, retried by
// the next pass: the form it posted is seen, the committing click is not
// sent, and the action is verified from the live site, published once.
// Later passes publish nothing more.
func TestStepThatSentIsNeverRetried(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	w.useRunner(nil, sendingStepAdapter(t, w.base))
	w.calendar("entries:\n" + post("early", "sent by a step of a wrong adapter"))

	sum := w.pass()
	require.Equal(t, map[ledger.Status]int{ledger.Verified: 1}, w.statuses(), "%+v", sum.Actions)
	require.Zero(t, sum.Counts[string(operator.NoteStepFailed)], "%+v", sum.Actions)
	require.Len(t, w.effects(demosite.EffectPost), 1)
	a := w.actions()[0]
	require.NotZero(t, a.ExecutingAt, "executing was recorded: the effect may exist")

	for range 2 {
		w.pass()
	}
	require.Len(t, w.effects(demosite.EffectPost), 1, "exactly once")
	require.Equal(t, map[ledger.Status]int{ledger.Verified: 1}, w.statuses())
}
