package operator_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/demosite"
	"github.com/browserop/browserop/errcode"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/operator"
	"github.com/browserop/browserop/sites"
	"github.com/browserop/browserop/tasks"
)

// A person's word on an ambiguous or moderated action (tasks.Service.Resolve,
// the route of the CLI and REST).

// A person ends a moderated action: rejected by the moderators (absent),
// or tried again.
func TestModeratedResolvedByPerson(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	ctx := context.Background()
	const text = "held, then rejected"
	var hidden atomic.Bool
	hidden.Store(true)
	site := &siteAnswers{Adapter: w.site,
		result: func(in sites.Intent, o sites.Observed) sites.Observed { o.Moderated = true; return o },
		search: hideText(text, &hidden)}
	w.useRunner(nil, site)
	w.calendar("entries:\n" + post("held", text))
	w.pass()
	a := w.actionWithText(text)
	require.Equal(t, ledger.Moderated, a.Status)
	st, err := w.tasks().Resolve(ctx, a.ID, tasks.Resolution{Reason: "the moderators rejected it"})
	require.NoError(t, err)
	require.Equal(t, "not_done", st.Effect)
	a = w.actionWithText(text)
	require.Equal(t, ledger.Abandoned, a.FailureClass)
	sum := w.pass()
	require.Equal(t, operator.OutcomeOK, sum.Outcome, "%+v", sum)
	require.Len(t, w.postsWithText(text), 1, "not published again")
}

// A person who finds an ambiguous effect absent may ask for it to be tried
// again: the next pass performs the intent afresh (a new attempt), once.
// An action that has had every attempt is not offered a retry that no
// pass would make.
func TestResolveAbsentRetryIsTriedAgain(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	ctx := context.Background()
	const text = "timed out, then tried again"
	site := &siteAnswers{Adapter: w.site, submit: timeoutOnce(text)}
	w.useRunner(nil, site)
	w.calendar("entries:\n" + post("again", text))
	sum := w.pass()
	require.Equal(t, operator.OutcomeNeedsPerson, sum.Outcome, "%+v", sum)
	a := w.actionWithText(text)
	require.Equal(t, ledger.Ambiguous, a.Status)

	svc := w.tasks()
	_, err := svc.Resolve(ctx, a.ID, tasks.Resolution{Retry: true, Reason: " "})
	require.ErrorIs(t, err, errcode.ErrUsage, "a reason is required")
	_, err = svc.Resolve(ctx, a.ID, tasks.Resolution{Retry: true, VerifiedURL: w.base + "/p/1", Reason: "x"})
	require.ErrorIs(t, err, errcode.ErrUsage, "a retry is for an absent effect")
	st, err := svc.Resolve(ctx, a.ID, tasks.Resolution{Retry: true, Reason: "not on the profile"})
	require.NoError(t, err)
	require.Equal(t, "failed", st.Status)
	a = w.actionWithText(text)
	require.Equal(t, ledger.Definitive, a.FailureClass)

	sum = w.pass()
	require.Equal(t, operator.OutcomeOK, sum.Outcome, "%+v", sum)
	w.republishedOnce(text)

	// An action at its last attempt: a retry would never be made.
	l, err := w.db.AcquireLease(ctx, "browser-operator", "test", time.Minute)
	require.NoError(t, err)
	last, _, err := w.db.Reserve(ctx, l.Fence(), calendarIntent("worn", "three attempts"))
	require.NoError(t, err)
	for _, to := range []ledger.Status{ledger.Executing, ledger.Failed, ledger.Planned, ledger.Executing, ledger.Failed, ledger.Planned, ledger.Executing, ledger.Ambiguous} {
		last, err = w.db.Transition(ctx, l.Fence(), last.ID, ledger.Change{To: to, Class: ledger.Definitive, Reason: "test"})
		require.NoError(t, err)
	}
	require.Equal(t, operator.DefaultMaxAttempts, last.Attempt)
	_, err = svc.Resolve(ctx, last.ID, tasks.Resolution{Retry: true, Reason: "not there"})
	require.ErrorIs(t, err, errcode.ErrUsage)
	require.Equal(t, ledger.Ambiguous, w.action(last.ID).Status, "nothing changed")
}
