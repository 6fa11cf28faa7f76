package operator_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/demosite"
	"github.com/browserop/browserop/errcode"
	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/operator"
	"github.com/browserop/browserop/sites"
)

// draftAdapter is the demo adapter on base whose post opens a composer
// that already holds the person's draft (the demosite's ?draft=).
func draftAdapter(t *testing.T, base, draft string) sites.Adapter {
	t.Helper()
	return composeAdapter(t, base, "draft="+url.QueryEscape(draft))
}

// The composer of browserop's own tab holds the person's draft: the pass
// types nothing there and clicks nothing, the action stays planned, held
// by a hard stop (field_not_ours) whose reason names the field and never
// the draft, and the ledger records the field unknown_external_change
// for this action, tab record and epoch. Once the composer starts empty,
// the next pass fills it (agent_filled) and publishes once.
func TestPassKeepsTheDraftItFinds(t *testing.T) {
	const draft = "the person's unsent draft"
	w := newWorld(t, demosite.Faults{})
	w.useRunner(nil, draftAdapter(t, w.base, draft))
	w.calendar("entries:\n" + post("p1", "scheduled post"))
	sum := w.pass()
	require.Equal(t, operator.OutcomeHardStop, sum.Outcome, "%+v", sum.Actions)
	require.ErrorIs(t, sum.Err(), errcode.ErrHardStop)
	require.Empty(t, w.effects(""), "nothing submitted")
	as := w.actions()
	require.Len(t, as, 1)
	a := as[0]
	require.Equal(t, ledger.Planned, a.Status, "held, not failed: the person decides")
	require.True(t, a.ExecutingAt.IsZero())
	require.NotNil(t, a.LastStop)
	require.Equal(t, string(sites.StopFieldNotOurs), a.LastStop.Kind)
	require.Contains(t, a.LastStop.Cause, `field 0 ("textarea#compose-text") holds text browserop did not type there (unknown_external_change)`)
	require.Len(t, sum.Actions, 1)
	for _, said := range []string{a.LastStop.Reason(), sum.Actions[0].Reason, sum.HardStop} {
		require.NotContains(t, said, "unsent", "value-free: %q", said)
	}

	ctx := context.Background()
	recs, err := w.db.ActionFieldProvenance(ctx, a.ID)
	require.NoError(t, err)
	require.Len(t, recs, 1)
	field := sites.FieldFingerprint(kind.Post, 0, sites.FillSpec{Selector: "textarea#compose-text"})
	require.Equal(t, field, recs[0].Field)
	require.Equal(t, ledger.FieldUnknownChange, recs[0].State)
	tab, err := w.db.GetTab(ctx, recs[0].TabID)
	require.NoError(t, err)
	require.Equal(t, sum.RunID, tab.RunID, "the pass's own tab record")
	require.Equal(t, tab.Epoch, recs[0].Epoch)

	// The composer starts empty again: filled, read back, published once.
	w.useRunner(nil, w.site)
	sum = w.pass()
	require.Equal(t, operator.OutcomeOK, sum.Outcome, "%+v", sum.Actions)
	require.Len(t, w.effects(demosite.EffectPost), 1)
	require.Equal(t, "scheduled post", w.effects(demosite.EffectPost)[0].Text)
	recs, err = w.db.ActionFieldProvenance(ctx, a.ID)
	require.NoError(t, err)
	require.Len(t, recs, 2, "one record per tab record and epoch")
	require.Equal(t, ledger.FieldUnknownChange, recs[0].State, "the first pass's record stays")
	require.Equal(t, ledger.FieldAgentFilled, recs[1].State)
	require.Equal(t, field, recs[1].Field)
	require.NotEqual(t, recs[0].TabID, recs[1].TabID)
	w.checkBooks()
}
