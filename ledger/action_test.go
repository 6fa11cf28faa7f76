package ledger_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"testing"
	"time"

	"github.com/browserop/browserop/budgets"
	"github.com/browserop/browserop/ledger"
	"github.com/stretchr/testify/require"
)

func TestReserve(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := MustOpen(t)
	l := mustLease(t, db, "op")

	t.Run("OK", func(t *testing.T) {
		a := mustReserve(t, db, l.Fence(), postIntent("hello"))
		require.Equal(t, ledger.Planned, a.Status)
		require.Equal(t, 1, a.Attempt)
		key, err := postIntent("hello").Key()
		require.NoError(t, err)
		require.Equal(t, key, a.IdempotencyKey)
		evs, err := db.Events(ctx, a.ID)
		require.NoError(t, err)
		require.Len(t, evs, 1)
		require.Equal(t, ledger.Status(""), evs[0].From)
		require.Equal(t, ledger.Planned, evs[0].To)
		require.Equal(t, l.Generation, evs[0].Generation)
	})
	t.Run("IntentID", func(t *testing.T) {
		in := postIntent("named")
		in.IntentID = "int_1"
		a := mustReserve(t, db, l.Fence(), in)
		require.Equal(t, "int_1", a.IntentID)
		got, err := db.GetAction(ctx, a.ID)
		require.NoError(t, err)
		require.Equal(t, "int_1", got.IntentID, "the ledger keeps the intent an action performs")
		key, err := postIntent("named").Key()
		require.NoError(t, err)
		require.Equal(t, key, a.IdempotencyKey, "the intent id is not part of the key")
	})
	t.Run("ExistingKey", func(t *testing.T) {
		first := mustReserve(t, db, l.Fence(), postIntent("twice"))
		_, err := db.Transition(ctx, l.Fence(), first.ID, ledger.Change{To: ledger.Executing, Reason: "go"})
		require.NoError(t, err)
		// The same intent with the payload spelled differently is the same key.
		in := postIntent("twice")
		in.Payload = json.RawMessage(` { "text" : "twice" } `)
		again, reserved, err := db.Reserve(ctx, l.Fence(), in)
		require.NoError(t, err)
		require.False(t, reserved)
		require.Equal(t, first.ID, again.ID)
		require.Equal(t, ledger.Executing, again.Status, "the existing action is returned as it is")
	})
	t.Run("Invalid", func(t *testing.T) {
		for name, in := range map[string]ledger.Intent{
			"no type":        {Actor: "a", Payload: json.RawMessage(`{}`)},
			"no actor":       {Type: "post", Payload: json.RawMessage(`{}`)},
			"bad payload":    {Type: "post", Actor: "a", Payload: json.RawMessage(`{`)},
			"unknown format": {Type: "post", Actor: "a", Format: "posts", Payload: json.RawMessage(`{}`)},
		} {
			_, _, err := db.Reserve(ctx, l.Fence(), in)
			require.ErrorContains(t, err, "invalid intent", name)
		}
	})
	t.Run("ErrStaleGeneration", func(t *testing.T) {
		l2, err := db.AcquireLease(ctx, "browser-operator", "op", 60e9)
		require.NoError(t, err)
		_, _, err = db.Reserve(ctx, l.Fence(), postIntent("stale"))
		require.ErrorIs(t, err, ledger.ErrStaleGeneration)
		_, err = db.ActionByKey(ctx, mustKey(t, postIntent("stale")))
		require.ErrorIs(t, err, ledger.ErrNotFound, "a stale reserve writes nothing")
		l = l2
	})
}

func mustKey(t *testing.T, in ledger.Intent) string {
	t.Helper()
	k, err := in.Key()
	require.NoError(t, err)
	return k
}

// walk reserves an action and moves it through the given statuses.
func walk(t *testing.T, db *ledger.DB, f ledger.Fence, text string, path ...ledger.Status) ledger.Action {
	t.Helper()
	a := mustReserve(t, db, f, postIntent(text))
	for _, s := range path {
		var err error
		a, err = db.Transition(context.Background(), f, a.ID, changeTo(s))
		require.NoError(t, err, "to %s", s)
	}
	return a
}

func changeTo(s ledger.Status) ledger.Change {
	c := ledger.Change{To: s, Reason: "test"}
	switch s {
	case ledger.Verified:
		c.Result = "http://127.0.0.1/p/1"
	case ledger.Failed:
		c.Class = ledger.Definitive
	}
	return c
}

func TestTransitionsLegal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := MustOpen(t)
	l := mustLease(t, db, "op")
	f := l.Fence()

	for name, path := range map[string][]ledger.Status{
		"verified":            {ledger.Executing, ledger.Verified},
		"failed":              {ledger.Executing, ledger.Failed},
		"ambiguous":           {ledger.Executing, ledger.Ambiguous},
		"ambiguous-verified":  {ledger.Executing, ledger.Ambiguous, ledger.Verified},
		"ambiguous-failed":    {ledger.Executing, ledger.Ambiguous, ledger.Failed},
		"planned-failed":      {ledger.Failed},
		"replanned":           {ledger.Executing, ledger.Failed, ledger.Planned, ledger.Executing, ledger.Verified},
		"replanned-from-plan": {ledger.Failed, ledger.Planned},
		"moderated":           {ledger.Executing, ledger.Moderated},
		"moderated-verified":  {ledger.Executing, ledger.Moderated, ledger.Verified},
		"ambiguous-moderated": {ledger.Executing, ledger.Ambiguous, ledger.Moderated},
	} {
		a := walk(t, db, f, name, path...)
		require.Equal(t, path[len(path)-1], a.Status, name)
		got, err := db.GetAction(ctx, a.ID)
		require.NoError(t, err)
		require.Equal(t, a.Status, got.Status, name)
		evs, err := db.Events(ctx, a.ID)
		require.NoError(t, err)
		require.Len(t, evs, len(path)+1, "one event per transition: %s", name)
		for i, s := range path {
			require.Equal(t, s, evs[i+1].To, name)
			require.Equal(t, f.Generation, evs[i+1].Generation, name)
			require.Equal(t, ledger.ByOperator, evs[i+1].By, name)
			require.NotEmpty(t, evs[i+1].Reason, name)
		}
	}
	a := walk(t, db, f, "attempts", ledger.Executing, ledger.Failed, ledger.Planned)
	require.Equal(t, 2, a.Attempt, "a replan is attempt + 1")
	require.Empty(t, a.FailureClass)
	v := walk(t, db, f, "result", ledger.Executing, ledger.Verified)
	require.Equal(t, "http://127.0.0.1/p/1", v.CanonicalResult)
	require.False(t, v.SettledAt.IsZero())
}

func TestTransitionsIllegal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := MustOpen(t)
	l := mustLease(t, db, "op")
	f := l.Fence()
	reach := map[ledger.Status][]ledger.Status{
		ledger.Planned:   nil,
		ledger.Executing: {ledger.Executing},
		ledger.Verified:  {ledger.Executing, ledger.Verified},
		ledger.Failed:    {ledger.Executing, ledger.Failed},
		ledger.Ambiguous: {ledger.Executing, ledger.Ambiguous},
		ledger.Moderated: {ledger.Executing, ledger.Moderated},
	}
	// moderated -> failed is a person's (Resolve), never the operator's.
	legal := map[[2]ledger.Status]bool{
		{ledger.Planned, ledger.Executing}: true, {ledger.Planned, ledger.Failed}: true,
		{ledger.Executing, ledger.Verified}: true, {ledger.Executing, ledger.Failed}: true, {ledger.Executing, ledger.Ambiguous}: true,
		{ledger.Executing, ledger.Moderated}: true,
		{ledger.Ambiguous, ledger.Verified}:  true, {ledger.Ambiguous, ledger.Failed}: true, {ledger.Ambiguous, ledger.Moderated}: true,
		{ledger.Moderated, ledger.Verified}: true,
		{ledger.Failed, ledger.Planned}:     true,
	}
	n := 0
	for from, path := range reach {
		for _, to := range ledger.Statuses {
			if legal[[2]ledger.Status{from, to}] {
				continue
			}
			n++
			a := walk(t, db, f, "illegal "+string(from)+" "+string(to), path...)
			before, err := db.Events(ctx, a.ID)
			require.NoError(t, err)
			_, err = db.Transition(ctx, f, a.ID, changeTo(to))
			require.ErrorIs(t, err, ledger.ErrIllegalTransition, "%s -> %s", from, to)
			got, err := db.GetAction(ctx, a.ID)
			require.NoError(t, err)
			require.Equal(t, a, got, "an illegal transition changes nothing (%s -> %s)", from, to)
			after, err := db.Events(ctx, a.ID)
			require.NoError(t, err)
			require.Equal(t, before, after)
		}
	}
	require.Equal(t, 36-11, n, "every illegal pair was tried")

	t.Run("AbandonedIsNotReplanned", func(t *testing.T) {
		a := walk(t, db, f, "abandoned")
		_, err := db.Transition(ctx, f, a.ID, ledger.Change{To: ledger.Failed, Class: ledger.Abandoned, Reason: "declined"})
		require.NoError(t, err)
		_, err = db.Transition(ctx, f, a.ID, ledger.Change{To: ledger.Planned, Reason: "again"})
		require.ErrorIs(t, err, ledger.ErrIllegalTransition)
	})
	t.Run("VerifiedNeedsResult", func(t *testing.T) {
		a := walk(t, db, f, "noresult", ledger.Executing)
		_, err := db.Transition(ctx, f, a.ID, ledger.Change{To: ledger.Verified, Reason: "seen"})
		require.ErrorIs(t, err, ledger.ErrIllegalTransition)
	})
	t.Run("FailedNeedsClass", func(t *testing.T) {
		a := walk(t, db, f, "noclass", ledger.Executing)
		_, err := db.Transition(ctx, f, a.ID, ledger.Change{To: ledger.Failed, Reason: "gone"})
		require.ErrorIs(t, err, ledger.ErrIllegalTransition)
	})
	t.Run("ReasonRequired", func(t *testing.T) {
		a := walk(t, db, f, "noreason")
		_, err := db.Transition(ctx, f, a.ID, ledger.Change{To: ledger.Executing})
		require.ErrorIs(t, err, ledger.ErrIllegalTransition)
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		_, err := db.Transition(ctx, f, "act_nope", changeTo(ledger.Executing))
		require.ErrorIs(t, err, ledger.ErrNotFound)
	})
}

func TestTransitionStaleGeneration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, c := MustOpen(t)
	old := mustLease(t, db, "old")
	a := walk(t, db, old.Fence(), "stale", ledger.Executing)
	b := walk(t, db, old.Fence(), "stale2")

	c.Advance(2 * 60e9) // the old lease expires; a new operator takes over
	cur, err := db.AcquireLease(ctx, "browser-operator", "new", 60e9)
	require.NoError(t, err)
	require.Greater(t, cur.Generation, old.Generation)

	for _, ch := range []ledger.Change{changeTo(ledger.Verified), changeTo(ledger.Failed), changeTo(ledger.Ambiguous)} {
		_, err := db.Transition(ctx, old.Fence(), a.ID, ch)
		require.ErrorIs(t, err, ledger.ErrStaleGeneration)
	}
	_, err = db.Transition(ctx, old.Fence(), b.ID, changeTo(ledger.Executing))
	require.ErrorIs(t, err, ledger.ErrStaleGeneration)
	got, err := db.GetAction(ctx, a.ID)
	require.NoError(t, err)
	require.Equal(t, a, got, "a stale write changes nothing")
	_, err = db.Heartbeat(ctx, old, 60e9)
	require.ErrorIs(t, err, ledger.ErrStaleGeneration)
	require.ErrorIs(t, db.ReleaseLease(ctx, old), ledger.ErrStaleGeneration)
	_, err = db.StartRun(ctx, old)
	require.ErrorIs(t, err, ledger.ErrStaleGeneration)
	_, err = db.RecordTab(ctx, old.Fence(), ledger.Tab{TargetID: "T", URL: "http://x/", BindingHash: "h"})
	require.ErrorIs(t, err, ledger.ErrStaleGeneration)
	_, err = db.Transition(ctx, ledger.Fence{}, a.ID, changeTo(ledger.Ambiguous))
	require.ErrorIs(t, err, ledger.ErrStaleGeneration, "a write without a fence is refused")

	// The new holder may not settle an action another generation left
	// executing: it may have happened, so it is ambiguous first.
	for _, ch := range []ledger.Change{changeTo(ledger.Verified), changeTo(ledger.Failed)} {
		_, err = db.Transition(ctx, cur.Fence(), a.ID, ch)
		require.ErrorIs(t, err, ledger.ErrIllegalTransition, "to %s", ch.To)
	}
	_, err = db.Transition(ctx, cur.Fence(), a.ID, ledger.Change{To: ledger.Ambiguous, Reason: "found executing after a crash"})
	require.NoError(t, err)
	_, err = db.Transition(ctx, cur.Fence(), a.ID, changeTo(ledger.Verified))
	require.NoError(t, err, "reconciled once ambiguous")

	// A released lease fences too.
	require.NoError(t, db.ReleaseLease(ctx, cur))
	_, err = db.Transition(ctx, cur.Fence(), b.ID, changeTo(ledger.Executing))
	require.ErrorIs(t, err, ledger.ErrStaleGeneration, "a write after release")
}

func TestResolveByPerson(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := MustOpen(t)
	l := mustLease(t, db, "op")
	amb := walk(t, db, l.Fence(), "amb", ledger.Executing, ledger.Ambiguous)
	got, err := db.Resolve(ctx, amb.ID, ledger.Change{To: ledger.Verified, Result: "http://127.0.0.1/p/9", Reason: "seen by the person"})
	require.NoError(t, err)
	require.Equal(t, ledger.Verified, got.Status)
	evs, err := db.Events(ctx, amb.ID)
	require.NoError(t, err)
	require.Equal(t, ledger.ByPerson, evs[len(evs)-1].By)

	amb2 := walk(t, db, l.Fence(), "amb2", ledger.Executing, ledger.Ambiguous)
	got, err = db.Resolve(ctx, amb2.ID, ledger.Change{To: ledger.Failed, Class: ledger.Abandoned, Reason: "absent"})
	require.NoError(t, err)
	require.Equal(t, ledger.Failed, got.Status)

	// Absent and to be tried again: a definitive failure, which a pass
	// replans.
	amb3 := walk(t, db, l.Fence(), "amb3", ledger.Executing, ledger.Ambiguous)
	got, err = db.Resolve(ctx, amb3.ID, ledger.Change{To: ledger.Failed, Class: ledger.Definitive, Reason: "absent: try again"})
	require.NoError(t, err)
	require.Equal(t, ledger.Definitive, got.FailureClass)
	got, err = db.Transition(ctx, l.Fence(), amb3.ID, ledger.Change{To: ledger.Planned, Reason: "replanned"})
	require.NoError(t, err)
	require.Equal(t, 2, got.Attempt)

	// A submission that could surface late, found absent by the person
	// and tried again: the new attempt starts with nothing left open.
	may := walk(t, db, l.Fence(), "may", ledger.Executing)
	may, err = db.Transition(ctx, l.Fence(), may.ID, ledger.Change{To: ledger.Ambiguous, Reason: "timed out", MaySurface: true})
	require.NoError(t, err)
	require.True(t, may.MaySurface)
	_, err = db.Resolve(ctx, may.ID, ledger.Change{To: ledger.Failed, Class: ledger.Definitive, Reason: "absent: try again"})
	require.NoError(t, err)
	got, err = db.Transition(ctx, l.Fence(), may.ID, ledger.Change{To: ledger.Planned, Reason: "replanned"})
	require.NoError(t, err)
	require.False(t, got.MaySurface, "the replanned attempt does not inherit may_surface")
	got, err = db.GetAction(ctx, may.ID)
	require.NoError(t, err)
	require.False(t, got.MaySurface, "as stored")

	// A moderated action: rejected by the moderators (a person's word),
	// or found public.
	mod := walk(t, db, l.Fence(), "mod", ledger.Executing, ledger.Moderated)
	_, err = db.Transition(ctx, l.Fence(), mod.ID, ledger.Change{To: ledger.Failed, Class: ledger.Abandoned, Reason: "not found"})
	require.ErrorIs(t, err, ledger.ErrIllegalTransition, "the operator never ends a moderated action failed")
	got, err = db.Resolve(ctx, mod.ID, ledger.Change{To: ledger.Failed, Class: ledger.Abandoned, Reason: "rejected by the moderators"})
	require.NoError(t, err)
	require.Equal(t, ledger.Failed, got.Status)
	mod2 := walk(t, db, l.Fence(), "mod2", ledger.Executing, ledger.Moderated)
	got, err = db.Resolve(ctx, mod2.ID, ledger.Change{To: ledger.Verified, Result: "http://127.0.0.1/p/9#comment-3", Reason: "public now"})
	require.NoError(t, err)
	require.Equal(t, ledger.Verified, got.Status)

	exec := walk(t, db, l.Fence(), "exec", ledger.Executing)
	_, err = db.Resolve(ctx, exec.ID, ledger.Change{To: ledger.Verified, Result: "x", Reason: "r"})
	require.ErrorIs(t, err, ledger.ErrIllegalTransition, "only ambiguous or moderated actions are resolved by a person")
	amb4 := walk(t, db, l.Fence(), "amb4", ledger.Executing, ledger.Ambiguous)
	_, err = db.Resolve(ctx, amb4.ID, ledger.Change{To: ledger.Moderated, Reason: "r"})
	require.ErrorIs(t, err, ledger.ErrIllegalTransition, "a person resolves as verified or failed")
}

// A moderated action records the landed URL, is rechecked (moderated to
// moderated) while it is not found public, and counts as performed.
func TestModerated(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := MustOpen(t)
	l := mustLease(t, db, "op")
	a := walk(t, db, l.Fence(), "held", ledger.Executing)
	a, err := db.Transition(ctx, l.Fence(), a.ID, ledger.Change{To: ledger.Moderated, Result: "http://127.0.0.1/p/2#comment-7", Reason: "held for moderation"})
	require.NoError(t, err)
	require.Equal(t, "http://127.0.0.1/p/2#comment-7", a.CanonicalResult)
	require.True(t, a.Performed())
	got, err := db.Recheck(ctx, l.Fence(), a.ID, "still held: not in the public view")
	require.NoError(t, err)
	require.Equal(t, ledger.Moderated, got.Status)
	evs, err := db.Events(ctx, a.ID)
	require.NoError(t, err)
	last := evs[len(evs)-1]
	require.Equal(t, [2]ledger.Status{ledger.Moderated, ledger.Moderated}, [2]ledger.Status{last.From, last.To})
	list, err := db.ListActions(ctx, ledger.ActionFilter{Statuses: []ledger.Status{ledger.Moderated}})
	require.NoError(t, err)
	require.Len(t, list, 1)
	_, err = db.Transition(ctx, l.Fence(), a.ID, ledger.Change{To: ledger.Verified, Result: "http://127.0.0.1/p/2#comment-7", Reason: "public"})
	require.NoError(t, err)
}

func TestRecordsAreProtectedBySchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := MustOpen(t)
	l := mustLease(t, db, "op")
	v := walk(t, db, l.Fence(), "final", ledger.Executing, ledger.Verified)
	fl := walk(t, db, l.Fence(), "failed", ledger.Executing)
	_, err := db.Transition(ctx, l.Fence(), fl.ID, ledger.Change{To: ledger.Failed, Class: ledger.Abandoned, Reason: "declined"})
	require.NoError(t, err)
	mod := walk(t, db, l.Fence(), "held", ledger.Executing, ledger.Moderated)
	task, _, err := db.CreateTask(ctx, "agent:k1", taskRequest("post"))
	require.NoError(t, err)
	require.NoError(t, db.Close())

	raw, err := sql.Open("sqlite3", "file:"+db.Path()+"?_foreign_keys=1")
	require.NoError(t, err)
	defer raw.Close()
	for _, q := range []string{
		`UPDATE actions SET status = 'planned' WHERE id = '` + v.ID + `'`,
		`UPDATE actions SET canonical_result = 'x' WHERE id = '` + v.ID + `'`,
		`UPDATE actions SET status = 'executing' WHERE id = '` + fl.ID + `'`,
		`UPDATE actions SET payload_json = '{}' WHERE id = '` + fl.ID + `'`,
		`UPDATE actions SET status = 'planned' WHERE id = '` + mod.ID + `'`,
		`UPDATE actions SET status = 'ambiguous' WHERE id = '` + mod.ID + `'`,
		`UPDATE actions SET status = 'unheard_of' WHERE id = '` + mod.ID + `'`,
		`DELETE FROM actions`,
		`UPDATE action_events SET reason = 'x'`,
		`DELETE FROM action_events`,
		`UPDATE tasks SET contract_json = '{}' WHERE id = '` + task.ID + `'`,
		`DELETE FROM tasks`,
		`UPDATE leases SET generation = 0`,
	} {
		_, err := raw.Exec(q)
		require.ErrorContains(t, err, "browserop: ", q)
	}
}

func TestConcurrentReserveSameKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, c := MustOpen(t)
	other := MustOpenAt(t, db.Path(), c)
	l := mustLease(t, db, "op")
	in := postIntent("race")
	in.Format = budgets.PostText
	results := make(chan bool, 16)
	ids := make(chan string, 16)
	for i := range 16 {
		go func() {
			d := db
			if i%2 == 1 {
				d = other
			}
			a, reserved, err := d.Reserve(ctx, l.Fence(), in)
			if err != nil {
				t.Error(err)
			}
			results <- reserved
			ids <- a.ID
		}()
	}
	n := 0
	first := ""
	for range 16 {
		if <-results {
			n++
		}
		id := <-ids
		if first == "" {
			first = id
		}
		require.Equal(t, first, id, "every caller sees the one action")
	}
	require.Equal(t, 1, n, "exactly one caller reserves")
}

func TestMaySurfaceIsSticky(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := MustOpen(t)
	l := mustLease(t, db, "op")
	a := walk(t, db, l.Fence(), "ack", ledger.Executing)
	a, err := db.Transition(ctx, l.Fence(), a.ID, ledger.Change{To: ledger.Ambiguous, Reason: "not visible yet", MaySurface: true})
	require.NoError(t, err)
	require.True(t, a.MaySurface)
	got, err := db.GetAction(ctx, a.ID)
	require.NoError(t, err)
	require.True(t, got.MaySurface, "stored")
	b := walk(t, db, l.Fence(), "noack")
	b, err = db.Transition(ctx, l.Fence(), b.ID, ledger.Change{To: ledger.Failed, Class: ledger.Definitive, Reason: "mismatch", MaySurface: true})
	require.NoError(t, err)
	require.False(t, b.MaySurface, "only a transition from executing records it")
}

// Another account seen while an action is unsettled is noted once, only on
// an executing or ambiguous action, under the fence; an ambiguous action's
// reason says what the person checks.
func TestNoteOtherAccount(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, c := MustOpen(t)
	l := mustLease(t, db, "op")
	a := walk(t, db, l.Fence(), "seen", ledger.Executing)

	got, err := db.NoteOtherAccount(ctx, l.Fence(), a.ID, "carol", "may be on @carol")
	require.NoError(t, err)
	require.Equal(t, []string{"carol"}, got.OtherAccounts)
	require.Empty(t, got.FailureReason, "an executing action has no reason yet")
	_, err = db.NoteOtherAccount(ctx, l.Fence(), a.ID, "carol", "again")
	require.NoError(t, err)
	_, err = db.NoteOtherAccount(ctx, l.Fence(), a.ID, a.Actor, "the actor itself")
	require.NoError(t, err)
	a, err = db.Transition(ctx, l.Fence(), a.ID, ledger.Change{To: ledger.Ambiguous, Reason: "cannot tell"})
	require.NoError(t, err)
	got, err = db.NoteOtherAccount(ctx, l.Fence(), a.ID, "bob", "may be on @bob, @carol")
	require.NoError(t, err)
	require.Equal(t, []string{"bob", "carol"}, got.OtherAccounts, "sorted, each once, never the actor")
	require.Equal(t, "may be on @bob, @carol", got.FailureReason)
	stored, err := db.GetAction(ctx, a.ID)
	require.NoError(t, err)
	require.Equal(t, got.OtherAccounts, stored.OtherAccounts)
	require.Equal(t, got.FailureReason, stored.FailureReason)

	// A settled action takes no note.
	v := walk(t, db, l.Fence(), "settled", ledger.Executing)
	v, err = db.Transition(ctx, l.Fence(), v.ID, changeTo(ledger.Verified))
	require.NoError(t, err)
	got, err = db.NoteOtherAccount(ctx, l.Fence(), v.ID, "carol", "x")
	require.NoError(t, err)
	require.Empty(t, got.OtherAccounts)

	// A stale generation writes nothing.
	c.Advance(2 * time.Minute)
	_, err = db.AcquireLease(ctx, "browser-operator", "new", time.Minute)
	require.NoError(t, err)
	_, err = db.NoteOtherAccount(ctx, l.Fence(), a.ID, "mallory", "x")
	require.ErrorIs(t, err, ledger.ErrStaleGeneration)
	stored, err = db.GetAction(ctx, a.ID)
	require.NoError(t, err)
	require.Equal(t, []string{"bob", "carol"}, stored.OtherAccounts)
}

// Recheck records why an ambiguous action is still ambiguous, as an event,
// and only for an ambiguous action.
func TestRecheck(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := MustOpen(t)
	l := mustLease(t, db, "op")
	a := walk(t, db, l.Fence(), "look", ledger.Executing)
	_, err := db.Recheck(ctx, l.Fence(), a.ID, "still unsure")
	require.ErrorIs(t, err, ledger.ErrIllegalTransition, "an executing action is not rechecked")
	a, err = db.Transition(ctx, l.Fence(), a.ID, ledger.Change{To: ledger.Ambiguous, Reason: "first look"})
	require.NoError(t, err)
	_, err = db.Recheck(ctx, l.Fence(), a.ID, " ")
	require.ErrorIs(t, err, ledger.ErrIllegalTransition, "a reason is required")
	got, err := db.Recheck(ctx, l.Fence(), a.ID, "second look: the tab may still live")
	require.NoError(t, err)
	require.Equal(t, ledger.Ambiguous, got.Status)
	require.Equal(t, "second look: the tab may still live", got.FailureReason)
	_, err = db.Recheck(ctx, l.Fence(), a.ID, "second look: the tab may still live")
	require.NoError(t, err)
	evs, err := db.Events(ctx, a.ID)
	require.NoError(t, err)
	last := evs[len(evs)-1]
	require.Equal(t, ledger.Ambiguous, last.From)
	require.Equal(t, ledger.Ambiguous, last.To)
	require.Equal(t, "second look: the tab may still live", last.Reason)
	require.Equal(t, ledger.Ambiguous, evs[len(evs)-2].To)
	require.NotEqual(t, ledger.Ambiguous, evs[len(evs)-2].From, "the same reason twice is one event")
}

// ClickTabs finds the run whose pass moved the action to executing (the
// last time) and that run's tab records.
func TestClickTabs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, c := MustOpen(t)
	first := mustLease(t, db, "first")
	run1, err := db.StartRun(ctx, first)
	require.NoError(t, err)
	tab1, err := db.RecordTab(ctx, first.Fence(), ledger.Tab{RunID: run1.ID, TargetID: "T1", URL: "http://demo.test/", BindingHash: "b1"})
	require.NoError(t, err)
	a := walk(t, db, first.Fence(), "clicked")
	runID, tabs, err := db.ClickTabs(ctx, a.ID)
	require.NoError(t, err)
	require.Empty(t, runID, "never executing: no run clicked")
	require.Empty(t, tabs)

	_, err = db.Transition(ctx, first.Fence(), a.ID, ledger.Change{To: ledger.Executing, Reason: "go"})
	require.NoError(t, err)
	runID, tabs, err = db.ClickTabs(ctx, a.ID)
	require.NoError(t, err)
	require.Equal(t, run1.ID, runID)
	require.Len(t, tabs, 1)
	require.Equal(t, tab1.ID, tabs[0].ID)

	// A later run settles it, it is replanned and performed again: the
	// later run is the one that clicked.
	c.Advance(2 * time.Minute)
	second, err := db.AcquireLease(ctx, "browser-operator", "second", time.Minute)
	require.NoError(t, err)
	run2, err := db.StartRun(ctx, second)
	require.NoError(t, err)
	for _, to := range []ledger.Status{ledger.Ambiguous, ledger.Failed, ledger.Planned, ledger.Executing} {
		ch := changeTo(to)
		_, err = db.Transition(ctx, second.Fence(), a.ID, ch)
		require.NoError(t, err, "to %s", to)
	}
	runID, tabs, err = db.ClickTabs(ctx, a.ID)
	require.NoError(t, err)
	require.Equal(t, run2.ID, runID)
	require.Empty(t, tabs, "the second run opened no tab")
}
