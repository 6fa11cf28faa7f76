package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/browserop/browserop/intent"
	"github.com/browserop/browserop/ledger"
)

// DefaultMaxAttempts is how often a definitively failed intent is
// attempted when Config.MaxAttempts is not set; the task service judges a
// task's outcome by the same number.
const DefaultMaxAttempts = 3

// Intent outcomes: what became of one intent, from its actions.
const (
	OutcomePending       = "pending"        // not performed yet (or a thread part way)
	OutcomeExecuting     = "executing"      // an action is being performed
	OutcomeKnownComplete = "known_complete" // every effect is verified
	OutcomeNotDone       = "not_done"       // settled without (all of) its effect
	OutcomeUncertain     = "uncertain"      // an effect is ambiguous: a person resolves it
	// OutcomeModerated: an effect is held by the site's moderators: made,
	// not public yet. Not settled: it becomes known_complete once a pass
	// finds it public, or not_done when a person says it was rejected.
	OutcomeModerated = "moderated"
)

// IntentOutcome is one intent of a task and what became of it.
type IntentOutcome struct {
	// ID is the intent's id: the one task_submit and POST .../actions
	// answered (submitted_intent) for an agent's intent, the calendar
	// entry ("calendar:ID") or the planner candidate ("planner:HASH").
	ID      string `json:"id"`
	Type    string `json:"type"`
	Outcome string `json:"outcome"`
	// Permalink is the published item's URL (a thread's first part).
	Permalink string `json:"permalink,omitempty"`
	// Permalinks are a thread's published parts, in order.
	Permalinks []string `json:"permalinks,omitempty"`
	// Failure says why an intent is not done.
	Failure string `json:"failure,omitempty"`
	// Reason says, for an intent not done, why its effect is definitely
	// absent (ReasonProvenAbsent, ReasonDeclined...): its failed action's
	// (ActionState.EffectReason).
	Reason string `json:"reason,omitempty"`
	// Actions are the ids of the intent's actions (a thread's one per part).
	Actions []string `json:"actions"`
	// failed is the action whose failure settled the intent, if one did.
	failed ledger.Action
}

// Settled reports whether nothing more will happen to the intent.
func (o IntentOutcome) Settled() bool {
	return o.Outcome == OutcomeKnownComplete || o.Outcome == OutcomeNotDone
}

// Result is a terminal task's result: each intent with its outcome
// and permalink.
type Result struct {
	Intents []IntentOutcome `json:"intents"`
}

// intentRef is what an outcome needs to know of an intent.
type intentRef struct {
	// id names the intent as outcomes show it (int_…, calendar:ID,
	// planner:HASH) and as its actions record it (ledger.Action.IntentID).
	id    string
	typ   intent.Type
	parts int // a thread's parts; 1 otherwise
}

// refOf is the intent a submitted task intent is; a request the ledger
// holds that does not decode is an error.
func refOf(ti ledger.TaskIntent) (intentRef, error) {
	in, err := RequestOf(ti)
	if err != nil {
		return intentRef{}, err
	}
	return intentRef{id: ti.ID, typ: in.Type, parts: in.Effects()}, nil
}

// entryRef is the one intent of a calendar or planner task: its entry, as
// recorded in the task's input, under the task's key.
func entryRef(t ledger.Task) (intentRef, error) {
	var e intent.Request
	if err := json.Unmarshal(t.Request.Input, &e); err != nil {
		return intentRef{}, fmt.Errorf("%w: task %s: its entry: %v", ErrUnreadable, t.ID, err)
	}
	return intentRef{id: t.IdempotencyKey, typ: e.Type, parts: e.Effects()}, nil
}

// byIntent groups a task's actions by the intent they perform.
func byIntent(acts []ledger.Action) map[string][]ledger.Action {
	out := map[string][]ledger.Action{}
	for _, a := range acts {
		out[a.IntentID] = append(out[a.IntentID], a)
	}
	return out
}

// outcomeOf is what became of intent ref given its actions (in reservation
// order). A failure is settled when it is not replanned: abandoned, or
// definitive after maxAttempts. A thread halts at a settled failure of a
// part, so that settles it too.
func outcomeOf(ref intentRef, acts []ledger.Action, maxAttempts int) IntentOutcome {
	o := IntentOutcome{ID: ref.id, Type: ref.typ.String(), Outcome: OutcomePending, Actions: []string{}}
	verified := 0
	for _, a := range acts {
		o.Actions = append(o.Actions, a.ID)
		if a.Status == ledger.Verified {
			verified++
			o.Permalinks = append(o.Permalinks, a.CanonicalResult)
		}
	}
	if len(o.Permalinks) > 0 {
		o.Permalink = o.Permalinks[0]
	}
	if !ref.typ.IsThread() {
		o.Permalinks = nil
	}
	moderated := false
	for _, a := range acts {
		switch {
		case a.Status == ledger.Ambiguous:
			o.Outcome = OutcomeUncertain
			return o
		case a.Status == ledger.Executing:
			o.Outcome = OutcomeExecuting
		case a.Status == ledger.Moderated:
			moderated = true
		}
	}
	if o.Outcome == OutcomeExecuting {
		return o
	}
	if moderated {
		o.Outcome = OutcomeModerated
		return o
	}
	if verified >= ref.parts {
		o.Outcome = OutcomeKnownComplete
		return o
	}
	for _, a := range acts {
		if a.Status == ledger.Failed && !a.Replannable(maxAttempts) {
			o.Outcome, o.Failure, o.failed = OutcomeNotDone, a.FailureReason, a
			if verified > 0 {
				o.Failure += " (published before it: " + itoa(verified) + " of " + itoa(ref.parts) + " parts)"
			}
			return o
		}
	}
	return o
}

func itoa(n int) string { return strconv.Itoa(n) }

// cancelledOutcome is an intent's outcome once its task is cancelled:
// what was not performed never will be.
func cancelledOutcome(o IntentOutcome) IntentOutcome {
	if o.Outcome == OutcomePending {
		o.Outcome, o.Reason = OutcomeNotDone, ReasonAbandoned
		o.Failure = "the task was cancelled before it was performed"
		if len(o.Permalinks) > 0 {
			o.Failure = "the task was cancelled part way: " + itoa(len(o.Permalinks)) + " parts were published"
		}
	}
	return o
}

// Due is an intent submitted to an open task that is not settled yet: a
// pass performs it.
type Due struct {
	Task   ledger.Task
	Intent ledger.TaskIntent
	// Request is the intent's request, as the ledger holds it.
	Request intent.Request
	// Err is why the request the ledger holds does not decode
	// (ErrUnreadable): the intent is not performed, and the pass says so.
	Err error
}

// Origin names an agent's intent in the payloads of its actions: part of
// their idempotency keys, so it never changes.
func (d Due) Origin() string { return "task:" + d.Intent.ID }

// DueIntents lists, in submission order, the intents of every open task
// that are not settled given their actions (a definitive failure counts as
// settled after maxAttempts). Each task's actions are read once.
func DueIntents(ctx context.Context, db *ledger.DB, maxAttempts int) ([]Due, error) {
	intents, err := db.TaskIntents(ctx, "")
	if err != nil {
		return nil, err
	}
	tasks := map[string]ledger.Task{}
	groups := map[string]map[string][]ledger.Action{}
	var due []Due
	for _, ti := range intents {
		task, ok := tasks[ti.TaskID]
		if !ok {
			if task, err = db.GetTask(ctx, ti.TaskID); err != nil {
				return nil, err
			}
			acts, err := db.ListActions(ctx, ledger.ActionFilter{TaskID: ti.TaskID})
			if err != nil {
				return nil, err
			}
			tasks[ti.TaskID], groups[ti.TaskID] = task, byIntent(acts)
		}
		ref, err := refOf(ti)
		if err != nil {
			due = append(due, Due{Task: task, Intent: ti, Err: err})
			continue
		}
		if outcomeOf(ref, groups[ti.TaskID][ref.id], maxAttempts).Settled() {
			continue
		}
		in, _ := RequestOf(ti) // decoded by refOf
		due = append(due, Due{Task: task, Intent: ti, Request: in})
	}
	return due, nil
}

// Why an effect is definitely absent (effect_state not_done, outcome
// not_done): the seed's "definitely absent", told apart by what the
// action's history shows.
const (
	// ReasonProvenAbsent: the action went executing and the operator
	// proved the effect absent: the site refused the click, the click sent
	// nothing, or a complete, settled view showed no such item.
	ReasonProvenAbsent = "proven_absent"
	// ReasonAbsentByPerson: the effect was uncertain and a person said it
	// is not there.
	ReasonAbsentByPerson = "absent_by_person"
	// ReasonRejectedByModerators: the site held the effect for
	// moderation, and a person said the moderators rejected it.
	ReasonRejectedByModerators = "rejected_by_moderators"
	// ReasonDeclined: the person declined the action its confirmation
	// asked for; nothing was clicked.
	ReasonDeclined = "declined"
	// ReasonAbandoned: its task was cancelled (or its calendar entry
	// edited) before it was performed; nothing was clicked.
	ReasonAbandoned = "abandoned"
	// ReasonNeverPerformed: the operator ended it before the click for a
	// reason of its own (a step or a read-back failed, outside the
	// authority, missed its time); nothing was clicked.
	ReasonNeverPerformed = "never_performed"
)

// absentReason is why failed action a is definitely absent, from its
// history (the event that failed it: from which status, by whom, when),
// its failure class, its confirmation and its task's history (cancelled
// or superseded before or as it failed). "" for an action that is not
// failed.
func absentReason(ctx context.Context, db *ledger.DB, a ledger.Action) (string, error) {
	if a.Status != ledger.Failed {
		return "", nil
	}
	evs, err := db.Events(ctx, a.ID)
	if err != nil {
		return "", err
	}
	var last ledger.Event
	for _, e := range evs {
		if e.To == ledger.Failed {
			last = e
		}
	}
	switch {
	case last.From == ledger.Moderated:
		return ReasonRejectedByModerators, nil
	case last.From == ledger.Ambiguous && last.By == ledger.ByPerson:
		return ReasonAbsentByPerson, nil
	}
	clicked := last.From == ledger.Executing || last.From == ledger.Ambiguous
	if a.FailureClass == ledger.Abandoned {
		// Given up on, not failed: declined (before the click, or after
		// the prepared tab was handed to the person, who did not click),
		// or its task cancelled right before the click.
		if c, err := db.GetConfirmation(ctx, a.ID); err == nil && c.State == ledger.ConfirmDeclined {
			return ReasonDeclined, nil
		} else if err != nil && !errors.Is(err, ledger.ErrNotFound) {
			return "", err
		}
		if a.TaskID != "" {
			evs, err := db.TaskEvents(ctx, a.TaskID)
			if err != nil {
				return "", err
			}
			for _, e := range evs {
				// Cancelled before it failed, or superseded by the pass
				// that failed it (in the same transaction, after it).
				if e.Kind == ledger.TaskCancelled && !e.At.After(last.At) ||
					e.Kind == "superseded" && e.Generation == last.Generation && !e.At.Before(last.At) {
					return ReasonAbandoned, nil
				}
			}
		}
	}
	if clicked {
		return ReasonProvenAbsent, nil
	}
	return ReasonNeverPerformed, nil
}
