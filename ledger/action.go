package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/browserop/browserop/budgets"
	"github.com/browserop/browserop/kind"
)

// Status is where an action is in its lifecycle.
type Status string

// The action lifecycle of docs/design.md.
const (
	Planned   Status = "planned"
	Executing Status = "executing"
	Verified  Status = "verified"
	Failed    Status = "failed"
	Ambiguous Status = "ambiguous"
	// Moderated: the site holds the effect for moderation: it exists, it
	// is not public yet. It is never performed again; reconciliation
	// verifies it once a search finds it public, and only a person ends it
	// failed (the moderators rejected it).
	Moderated Status = "moderated"
)

// Statuses lists every status in lifecycle order. The schema's
// action_statuses table (migration 0008) lists the same ones, and refuses
// any other; TestEnumerationTablesAgreeWithGo holds the two together.
var Statuses = []Status{Planned, Executing, Verified, Failed, Ambiguous, Moderated}

// Valid reports whether s is a known status.
func (s Status) Valid() bool {
	for _, k := range Statuses {
		if s == k {
			return true
		}
	}
	return false
}

// FailureClass says what a failure means for the intent.
type FailureClass string

const (
	// Definitive: the effect did not occur; the intent may be replanned.
	Definitive FailureClass = "definitive"
	// Abandoned: the effect did not occur and the intent must not be
	// replanned (declined by a person, cancelled, missed, in conflict).
	Abandoned FailureClass = "abandoned"
)

// Who made a transition.
const (
	ByOperator = "operator"
	ByPerson   = "person"
)

// Intent is what an action is to do. Its Type, Actor, TargetURL and Payload
// make the idempotency key. The operator writes Payload from a Payload
// value (see Payload.JSON).
type Intent struct {
	TaskID string // optional
	// IntentID names the intent the action performs, as outcomes name it
	// (an agent's intent id, a calendar or planner task's key); "" for
	// none. It is not part of the key: the payload names the intent too.
	IntentID  string
	RunID     string    // optional
	Type      kind.Kind // required; the ledger records any kind, the operator only kind.All
	Format    string    // budget format (budgets.Formats), "" when no budget counts it
	Site      string
	Actor     string
	TargetURL string
	Payload   json.RawMessage // exact intended payload: text, media hashes, alt text, expected parent
	// Thread links a thread part to its thread; nil for other actions.
	Thread *ThreadRef
}

// ThreadRef places an action in a thread.
type ThreadRef struct {
	ThreadID       string
	Position       int
	ExpectedParent string
}

// Action is one external mutation as recorded.
type Action struct {
	ID              string
	IdempotencyKey  string
	TaskID          string
	IntentID        string // the intent it performs (Intent.IntentID)
	RunID           string
	Type            kind.Kind
	Format          string
	Site            string
	Actor           string
	TargetURL       string
	Payload         json.RawMessage
	Status          Status
	Attempt         int
	CanonicalResult string
	FailureReason   string
	FailureClass    FailureClass
	// FailureSiteWords is what the site or the adapter said of a failure
	// (a refusal's message, a failed step's or upload's detail), kept
	// apart from FailureReason, which never holds page text: the person's
	// only (actions show, the person's API), never an agent's or a log's.
	FailureSiteWords string
	// MaySurface: the effect may surface later than a search can see (the
	// site answered the submission, or it timed out with its request
	// possibly pending); a search that misses it never proves it absent.
	MaySurface bool
	// Baseline, when HaveBaseline, lists the URLs of items identical to the
	// intent found on the site just before the click: never its result.
	Baseline     []string
	HaveBaseline bool
	// Seen, when HaveSeen, lists in page order (newest first) the URLs of
	// every item by the actor that a complete search showed just before the
	// click: an item by the actor outside it (and outside other actions'
	// results) appeared since, and is unexplained.
	Seen     []string
	HaveSeen bool
	// LandedURL is the result link the page the submission landed on named
	// ("" for none); a search that does not show it proves no absence.
	LandedURL string
	// OtherAccounts lists the accounts other than Actor that were seen
	// signed in on the site while the action was unsettled (executing or
	// ambiguous). Its effect may have landed on one of them, so a view read
	// as the actor never proves it absent.
	OtherAccounts []string
	// LastStop is the last hard stop that held the action while planned
	// (nil: none since it was reserved or last replanned). Leaving
	// planned clears it.
	LastStop    *Stop
	Generation  int64
	CreatedAt   time.Time
	UpdatedAt   time.Time
	ExecutingAt time.Time
	SettledAt   time.Time
}

// Stop is a hard stop that held a planned action: the pass stopped its
// site (or every site) before the action's click.
type Stop struct {
	// Kind is the stop as the pass names it: a site's stop kind ("login",
	// "identity_mismatch", "rate_limit"...) or a pass-wide stop's reason.
	Kind string
	// Cause is what the pass said of the stop's cause, as it printed it
	// (who is signed in, which selector matched nothing); "" for nothing
	// more than Kind.
	Cause string
	RunID string // the pass's run
	At    time.Time
}

// Reason is the stop as a pass reports a held action: "hard stop: KIND",
// and its cause in parentheses when there is one.
func (s Stop) Reason() string {
	r := "hard stop: " + s.Kind
	if s.Cause != "" {
		r += " (" + s.Cause + ")"
	}
	return r
}

// Performed reports whether the action may have had an effect: it is
// executing, verified, ambiguous or moderated, or it went executing in
// this attempt. (ledger.SupersedeTask asks the same in SQL.)
func (a Action) Performed() bool {
	return !a.ExecutingAt.IsZero() || a.Status == Executing || a.Status == Verified || a.Status == Ambiguous || a.Status == Moderated
}

// Event is one recorded transition of an action.
type Event struct {
	ID         int64
	ActionID   string
	From, To   Status
	Generation int64
	By         string
	Reason     string
	At         time.Time
}

func (in Intent) validate() error {
	var problems []string
	if in.Type == "" {
		problems = append(problems, "type is required")
	}
	if in.Actor == "" {
		problems = append(problems, "actor is required")
	}
	if in.Format != "" && !budgets.KnownFormat(in.Format) {
		problems = append(problems, fmt.Sprintf("format %q is unknown", in.Format))
	}
	for name, s := range map[string]string{"type": string(in.Type), "actor": in.Actor, "target_url": in.TargetURL, "site": in.Site} {
		if !utf8.ValidString(s) {
			problems = append(problems, name+" is not valid UTF-8")
		}
	}
	if len(in.Payload) == 0 {
		problems = append(problems, "payload is required")
	} else if !json.Valid(in.Payload) || !utf8.Valid(in.Payload) {
		problems = append(problems, "payload is not valid UTF-8 JSON")
	}
	if in.Thread != nil && (in.Thread.ThreadID == "" || in.Thread.Position < 0) {
		problems = append(problems, "thread needs an id and a position >= 0")
	}
	if len(problems) > 0 {
		return fmt.Errorf("invalid intent: %s", strings.Join(problems, "; "))
	}
	return nil
}

// Key returns the intent's idempotency key (see IdempotencyKey).
func (in Intent) Key() (string, error) {
	return IdempotencyKey(string(in.Type), in.Actor, in.TargetURL, in.Payload)
}

// Reserve records the intent as a planned action under its idempotency key.
// When an action with that key exists it returns that action and
// reserved=false, changing nothing: the caller must look at its status, not
// force a new key. It returns ErrStaleGeneration for a stale fence.
func (db *DB) Reserve(ctx context.Context, f Fence, in Intent) (a Action, reserved bool, err error) {
	if err := in.validate(); err != nil {
		return Action{}, false, fmt.Errorf("reserve action: %w", err)
	}
	key, err := in.Key()
	if err != nil {
		return Action{}, false, fmt.Errorf("reserve action: %w", err)
	}
	payload, err := CanonicalJSON(in.Payload)
	if err != nil {
		return Action{}, false, fmt.Errorf("reserve action: %w", err)
	}
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		if err := checkFence(ctx, tx, f); err != nil {
			return err
		}
		existing, err := getActionBy(ctx, tx, "idempotency_key", key)
		if err == nil {
			a = existing
			return nil
		}
		if !errors.Is(err, ErrNotFound) {
			return err
		}
		now := nanos(db.now())
		a = Action{ID: newID("act"), IdempotencyKey: key, TaskID: in.TaskID, IntentID: in.IntentID, RunID: in.RunID,
			Type: in.Type, Format: in.Format, Site: in.Site, Actor: in.Actor, TargetURL: in.TargetURL,
			Payload: payload, Status: Planned, Attempt: 1, Generation: f.Generation,
			CreatedAt: fromNanos(now), UpdatedAt: fromNanos(now)}
		_, err = tx.ExecContext(ctx, `INSERT INTO actions (id, idempotency_key, task_id, intent_id, run_id, type, format, site, actor,
			target_url, payload_json, status, attempt, generation, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'planned', 1, ?, ?, ?)`,
			a.ID, key, nullString(in.TaskID), in.IntentID, in.RunID, in.Type, in.Format, in.Site, in.Actor, in.TargetURL,
			string(payload), f.Generation, now, now)
		if err != nil {
			return fmt.Errorf("insert action: %w", err)
		}
		if in.Thread != nil {
			_, err = tx.ExecContext(ctx, `INSERT INTO thread_parts (thread_id, position, action_id, expected_parent_url)
				VALUES (?, ?, ?, ?)`, in.Thread.ThreadID, in.Thread.Position, a.ID, in.Thread.ExpectedParent)
			if isUnique(err) {
				return fmt.Errorf("thread %q already has a part at position %d: %w", in.Thread.ThreadID, in.Thread.Position, ErrConflict)
			}
			if err != nil {
				return fmt.Errorf("insert thread part: %w", err)
			}
		}
		reserved = true
		return insertEvent(ctx, tx, a.ID, "", Planned, f.Generation, ByOperator, "reserved", now)
	})
	if err != nil {
		return Action{}, false, fmt.Errorf("reserve action: %w", err)
	}
	return a, reserved, nil
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// Change is a requested transition of one action.
type Change struct {
	To     Status
	Reason string // required: why, in words a person reads (no page text, no secrets)
	// SiteWords, for Failed, is what the site or the adapter said (page
	// text: a refusal's message, a step's detail), recorded apart from
	// Reason (Action.FailureSiteWords) and never in the action's events.
	SiteWords string
	// Result is the canonical result (e.g. the permalink); required for
	// Verified. For Moderated it is the URL the landed page named, if any.
	Result string
	// Class is required for Failed: Definitive or Abandoned.
	Class FailureClass
	// Budget is the policy in force. For planned -> executing the action must
	// fit under it (counting verified usage and actions in flight) or the
	// change fails with budgets.ErrExhausted; for -> verified the usage is
	// recorded in the same transaction.
	Budget budgets.Policy
	// MaySurface records, on a transition from executing, that the effect
	// may surface later than a search can see. It is never cleared.
	MaySurface bool
	// Baseline, with HaveBaseline, is recorded on the transition to
	// executing (see Action.Baseline).
	Baseline     []string
	HaveBaseline bool
	// Seen, with HaveSeen, is recorded on the transition to executing (see
	// Action.Seen).
	Seen     []string
	HaveSeen bool
}

// transitions is the lifecycle: from -> allowed destinations.
var transitions = map[Status][]Status{
	Planned:   {Executing, Failed},
	Executing: {Verified, Failed, Ambiguous, Moderated},
	Ambiguous: {Verified, Failed, Moderated},
	Moderated: {Verified, Failed}, // failed only by a person (Resolve)
	Failed:    {Planned},
	Verified:  {},
}

func allowed(from, to Status) bool {
	for _, s := range transitions[from] {
		if s == to {
			return true
		}
	}
	return false
}

// Transition moves an action along the lifecycle under the run's fence and
// appends an event. It returns ErrStaleGeneration for a stale fence,
// ErrIllegalTransition for a change the lifecycle forbids (terminal states
// never change; failed -> planned only after a definitive failure),
// ErrNotFound, or budgets.ErrExhausted; on any error nothing changed.
//
// failed -> planned replans the same intent as attempt + 1.
func (db *DB) Transition(ctx context.Context, f Fence, id string, c Change) (Action, error) {
	var out Action
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		if err := checkFence(ctx, tx, f); err != nil {
			return err
		}
		var err error
		out, err = db.transition(ctx, tx, id, c, f.Generation, ByOperator)
		return err
	})
	if err != nil {
		return Action{}, fmt.Errorf("transition action %s to %s: %w", id, c.To, err)
	}
	return out, nil
}

// Resolve settles an ambiguous or moderated action on a person's word:
// verified with the canonical result they found, or failed because they
// found it absent (for a moderated one: the moderators rejected it),
// Abandoned to settle the intent, or Definitive for a later pass to try it
// again (within the attempts the operator allows). It needs no lease: a
// person's decision is recorded as theirs. Any other action, or change, is
// ErrIllegalTransition.
func (db *DB) Resolve(ctx context.Context, id string, c Change) (Action, error) {
	var out Action
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		cur, err := getActionBy(ctx, tx, "id", id)
		if err != nil {
			return err
		}
		if cur.Status != Ambiguous && cur.Status != Moderated {
			return fmt.Errorf("%w: only an ambiguous or moderated action is resolved by a person; this one is %s", ErrIllegalTransition, cur.Status)
		}
		if c.To != Verified && c.To != Failed {
			return fmt.Errorf("%w: a person resolves an action as verified or failed, not %s", ErrIllegalTransition, c.To)
		}
		out, err = db.transition(ctx, tx, id, c, 0, ByPerson)
		return err
	})
	if err != nil {
		return Action{}, fmt.Errorf("resolve action %s: %w", id, err)
	}
	return out, nil
}

func (db *DB) transition(ctx context.Context, tx *sql.Tx, id string, c Change, gen int64, by string) (Action, error) {
	a, err := getActionBy(ctx, tx, "id", id)
	if err != nil {
		return Action{}, err
	}
	if !allowed(a.Status, c.To) {
		return Action{}, fmt.Errorf("%w: %s -> %s", ErrIllegalTransition, a.Status, c.To)
	}
	// An action left executing by another generation (a crashed or fenced
	// out pass) may have happened: it becomes ambiguous and is reconciled,
	// never settled or replanned directly.
	if a.Status == Executing && c.To != Ambiguous && gen != a.Generation {
		return Action{}, fmt.Errorf("%w: executing under generation %d, so only ambiguous until reconciled", ErrIllegalTransition, a.Generation)
	}
	// The operator never concludes that a held effect was rejected: a
	// moderated action missing from a search may still be held.
	if a.Status == Moderated && c.To == Failed && by != ByPerson {
		return Action{}, fmt.Errorf("%w: a moderated action ends failed only by a person", ErrIllegalTransition)
	}
	if strings.TrimSpace(c.Reason) == "" {
		return Action{}, fmt.Errorf("%w: a reason is required", ErrIllegalTransition)
	}
	now := db.now()
	from := a.Status
	a.Status, a.UpdatedAt = c.To, now
	a.LastStop = nil
	// A stop held the action while planned; going on (or being replanned)
	// ends it.
	if c.MaySurface && from == Executing {
		a.MaySurface = true
	}
	if gen > 0 {
		a.Generation = gen
	}
	switch c.To {
	case Executing:
		if err := checkBudget(ctx, tx, c.Budget, a.Format, now); err != nil {
			return Action{}, err
		}
		if err := checkTaskBound(ctx, tx, a.TaskID); err != nil {
			return Action{}, err
		}
		a.ExecutingAt = now
		a.Baseline, a.HaveBaseline = nil, false
		if c.HaveBaseline {
			a.Baseline, a.HaveBaseline = append([]string{}, c.Baseline...), true
		}
		a.Seen, a.HaveSeen, a.LandedURL = nil, false, ""
		if c.HaveSeen {
			a.Seen, a.HaveSeen = append([]string{}, c.Seen...), true
		}
	case Verified:
		if strings.TrimSpace(c.Result) == "" {
			return Action{}, fmt.Errorf("%w: verified needs its canonical result", ErrIllegalTransition)
		}
		a.CanonicalResult, a.SettledAt = c.Result, now
		a.FailureReason, a.FailureClass, a.FailureSiteWords = "", "", ""
		if err := commitBudget(ctx, tx, c.Budget, a, a.Generation); err != nil {
			return Action{}, err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE thread_parts SET published_url = ?, verified = 1 WHERE action_id = ?`, c.Result, a.ID); err != nil {
			return Action{}, fmt.Errorf("update thread part: %w", err)
		}
	case Failed:
		if c.Class != Definitive && c.Class != Abandoned {
			return Action{}, fmt.Errorf("%w: failed needs a class (definitive or abandoned)", ErrIllegalTransition)
		}
		a.FailureReason, a.FailureClass, a.SettledAt, a.FailureSiteWords = c.Reason, c.Class, now, c.SiteWords
	case Ambiguous:
		a.FailureReason, a.FailureClass, a.FailureSiteWords = c.Reason, "", ""
	case Moderated:
		a.CanonicalResult = strings.TrimSpace(c.Result)
		a.FailureReason, a.FailureClass, a.FailureSiteWords = c.Reason, "", ""
	case Planned:
		if a.FailureClass != Definitive {
			return Action{}, fmt.Errorf("%w: only a definitive failure may be replanned; this one is %q", ErrIllegalTransition, a.FailureClass)
		}
		a.Attempt++
		// What the last attempt's submission left open is settled (a
		// complete view after the site's bound, or a person's word): the
		// new attempt's own submission says whether it may surface late.
		a.OtherAccounts, a.MaySurface = nil, false
		a.FailureReason, a.FailureClass, a.CanonicalResult, a.FailureSiteWords = "", "", "", ""
		a.ExecutingAt, a.SettledAt = time.Time{}, time.Time{}
	}
	_, err = tx.ExecContext(ctx, `UPDATE actions SET status = ?, attempt = ?, canonical_result = ?, failure_reason = ?, failure_site_words = ?,
		failure_class = ?, may_surface = ?, baseline_json = ?, seen_json = ?, landed_url = ?, other_accounts_json = ?, generation = ?, updated_at = ?, executing_at = ?, settled_at = ?,
		last_stop_kind = '', last_stop_cause = '', last_stop_run_id = '', last_stop_at = NULL
		WHERE id = ? AND status = ?`,
		a.Status, a.Attempt, a.CanonicalResult, a.FailureReason, a.FailureSiteWords, a.FailureClass, a.MaySurface, baselineJSON(a), seenJSON(a), a.LandedURL, othersJSON(a.OtherAccounts), a.Generation, nanos(now),
		nullTime(a.ExecutingAt), nullTime(a.SettledAt), a.ID, from)
	if err != nil {
		return Action{}, fmt.Errorf("update action: %w", err)
	}
	reason := c.Reason
	if c.To == Verified {
		reason = c.Reason + " (" + c.Result + ")"
	}
	if err := insertEvent(ctx, tx, a.ID, from, c.To, gen, by, reason, nanos(now)); err != nil {
		return Action{}, err
	}
	return a, nil
}

// checkTaskBound refuses (ErrSideEffectBound) one more action of a task
// whose contract bounds its side effects when its verified, executing,
// ambiguous and moderated actions (each one effect, a thread part
// included; a held effect exists) already reach the bound. It runs in the planned -> executing transaction, so no
// interleaving of passes and submissions passes the bound.
func checkTaskBound(ctx context.Context, tx *sql.Tx, taskID string) error {
	if taskID == "" {
		return nil
	}
	var contractJSON string
	if err := tx.QueryRowContext(ctx, `SELECT contract_json FROM tasks WHERE id = ?`, taskID).Scan(&contractJSON); err != nil {
		return fmt.Errorf("task %s: %w", taskID, err)
	}
	var c Contract
	if err := json.Unmarshal([]byte(contractJSON), &c); err != nil {
		return fmt.Errorf("task %s: contract: %w", taskID, err)
	}
	if c.MaxSideEffects <= 0 {
		return nil
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM actions WHERE task_id = ? AND status IN ('verified', 'executing', 'ambiguous', 'moderated')`,
		taskID).Scan(&n); err != nil {
		return err
	}
	if n >= c.MaxSideEffects {
		return fmt.Errorf("%w: the contract bounds task %s to %d side effects and %d are done or in flight", ErrSideEffectBound, taskID, c.MaxSideEffects, n)
	}
	return nil
}

func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return nanos(t)
}

func insertEvent(ctx context.Context, tx *sql.Tx, actionID string, from, to Status, gen int64, by, reason string, at int64) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO action_events (action_id, from_status, to_status, generation, by, reason, at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, actionID, string(from), string(to), gen, by, reason, at)
	if err != nil {
		return fmt.Errorf("append action event: %w", err)
	}
	return nil
}

const actionColumns = `id, idempotency_key, COALESCE(task_id, ''), intent_id, COALESCE(run_id, ''), type, format, site, actor, target_url, payload_json,
	status, attempt, canonical_result, failure_reason, failure_class, may_surface, baseline_json, seen_json, landed_url, other_accounts_json, generation, created_at, updated_at, executing_at, settled_at,
	last_stop_kind, last_stop_cause, last_stop_run_id, last_stop_at, failure_site_words`

type scanner interface{ Scan(dest ...any) error }

func scanAction(s scanner) (Action, error) {
	var a Action
	var payload string
	var created, updated int64
	var executing, settled, stopAt sql.NullInt64
	var baseline, seen, others sql.NullString
	var stop Stop
	err := s.Scan(&a.ID, &a.IdempotencyKey, &a.TaskID, &a.IntentID, &a.RunID, &a.Type, &a.Format, &a.Site, &a.Actor, &a.TargetURL,
		&payload, &a.Status, &a.Attempt, &a.CanonicalResult, &a.FailureReason, &a.FailureClass, &a.MaySurface, &baseline, &seen, &a.LandedURL, &others, &a.Generation,
		&created, &updated, &executing, &settled, &stop.Kind, &stop.Cause, &stop.RunID, &stopAt, &a.FailureSiteWords)
	if err != nil {
		return Action{}, err
	}
	if stopAt.Valid {
		stop.At = fromNanos(stopAt.Int64)
		a.LastStop = &stop
	}
	a.Payload = json.RawMessage(payload)
	if baseline.Valid {
		a.HaveBaseline = true
		if err := json.Unmarshal([]byte(baseline.String), &a.Baseline); err != nil {
			return Action{}, fmt.Errorf("baseline: %w", err)
		}
	}
	if seen.Valid {
		a.HaveSeen = true
		if err := json.Unmarshal([]byte(seen.String), &a.Seen); err != nil {
			return Action{}, fmt.Errorf("seen: %w", err)
		}
	}
	if others.Valid {
		if err := json.Unmarshal([]byte(others.String), &a.OtherAccounts); err != nil {
			return Action{}, fmt.Errorf("other accounts: %w", err)
		}
	}
	a.CreatedAt, a.UpdatedAt = fromNanos(created), fromNanos(updated)
	a.ExecutingAt, a.SettledAt = fromNullNanos(executing), fromNullNanos(settled)
	return a, nil
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func getActionBy(ctx context.Context, q querier, column, value string) (Action, error) {
	a, err := scanAction(q.QueryRowContext(ctx, `SELECT `+actionColumns+` FROM actions WHERE `+column+` = ?`, value))
	if errors.Is(err, sql.ErrNoRows) {
		return Action{}, fmt.Errorf("action %s: %w", value, ErrNotFound)
	}
	if err != nil {
		return Action{}, fmt.Errorf("read action: %w", err)
	}
	return a, nil
}

// GetAction returns the action with id, or ErrNotFound.
func (db *DB) GetAction(ctx context.Context, id string) (Action, error) {
	return getActionBy(ctx, db.read, "id", id)
}

// ActionByKey returns the action reserved under an idempotency key, or
// ErrNotFound.
func (db *DB) ActionByKey(ctx context.Context, key string) (Action, error) {
	return getActionBy(ctx, db.read, "idempotency_key", key)
}

// ActionFilter selects actions for ListActions. Empty fields match all.
type ActionFilter struct {
	Statuses []Status
	TaskID   string
	Limit    int // 0: no limit
}

// ListActions returns the actions that match, oldest first.
func (db *DB) ListActions(ctx context.Context, fl ActionFilter) ([]Action, error) {
	return listActions(ctx, db.read, fl)
}

func listActions(ctx context.Context, qr querier, fl ActionFilter) ([]Action, error) {
	q := `SELECT ` + actionColumns + ` FROM actions`
	var where []string
	var args []any
	if len(fl.Statuses) > 0 {
		marks := make([]string, len(fl.Statuses))
		for i, s := range fl.Statuses {
			if !s.Valid() {
				return nil, fmt.Errorf("list actions: unknown status %q (known: %v)", s, Statuses)
			}
			marks[i] = "?"
			args = append(args, string(s))
		}
		where = append(where, "status IN ("+strings.Join(marks, ",")+")")
	}
	if fl.TaskID != "" {
		where = append(where, "task_id = ?")
		args = append(args, fl.TaskID)
	}
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY created_at, id"
	if fl.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", fl.Limit)
	}
	rows, err := qr.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list actions: %w", err)
	}
	defer rows.Close()
	var out []Action
	for rows.Next() {
		a, err := scanAction(rows)
		if err != nil {
			return nil, fmt.Errorf("list actions: %w", err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// Events returns an action's history, oldest first.
func (db *DB) Events(ctx context.Context, actionID string) ([]Event, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT id, action_id, from_status, to_status, generation, by, reason, at
		FROM action_events WHERE action_id = ? ORDER BY id`, actionID)
	if err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var e Event
		var at int64
		if err := rows.Scan(&e.ID, &e.ActionID, &e.From, &e.To, &e.Generation, &e.By, &e.Reason, &at); err != nil {
			return nil, fmt.Errorf("read events: %w", err)
		}
		e.At = fromNanos(at)
		out = append(out, e)
	}
	return out, rows.Err()
}

func baselineJSON(a Action) any {
	if !a.HaveBaseline {
		return nil
	}
	b, _ := json.Marshal(append([]string{}, a.Baseline...))
	return string(b)
}

func seenJSON(a Action) any {
	if !a.HaveSeen {
		return nil
	}
	b, _ := json.Marshal(append([]string{}, a.Seen...))
	return string(b)
}

func othersJSON(accounts []string) any {
	if len(accounts) == 0 {
		return nil
	}
	b, _ := json.Marshal(accounts)
	return string(b)
}

// NoteOtherAccount records, under the run's fence, that account (not the
// action's actor) was seen signed in on the action's site while the action
// is unsettled (executing or ambiguous). An ambiguous action's reason
// becomes reason (when not empty), so that a person reads what to check.
// An action in any other state, an account already noted, or the actor
// itself change nothing. It returns the action as it is now.
func (db *DB) NoteOtherAccount(ctx context.Context, f Fence, id, account, reason string) (Action, error) {
	out, err := db.inFencedAction(ctx, f, id, func(tx *sql.Tx, a Action) (Action, error) {
		if account == "" || account == a.Actor || slices.Contains(a.OtherAccounts, account) ||
			a.Status != Executing && a.Status != Ambiguous {
			return a, nil
		}
		a.OtherAccounts = append(slices.Clone(a.OtherAccounts), account)
		slices.Sort(a.OtherAccounts)
		if a.Status == Ambiguous && strings.TrimSpace(reason) != "" {
			a.FailureReason = reason
		}
		_, err := tx.ExecContext(ctx, `UPDATE actions SET other_accounts_json = ?, failure_reason = ?, updated_at = ? WHERE id = ? AND status = ?`,
			othersJSON(a.OtherAccounts), a.FailureReason, nanos(db.now()), a.ID, a.Status)
		if err != nil {
			return a, fmt.Errorf("update action: %w", err)
		}
		return a, nil
	})
	if err != nil {
		return Action{}, fmt.Errorf("note another account on action %s: %w", id, err)
	}
	return out, nil
}

// ClickTabs returns the run whose pass last moved the action to executing
// (the one that may have clicked) and that run's tab records, oldest first.
// The run is "" when the action never went executing, or when the run is
// not recorded. Runs are matched by generation alone: every pass competes
// for one lease (operator.Config.LeaseName), whose generations are unique.
func (db *DB) ClickTabs(ctx context.Context, id string) (string, []Tab, error) {
	var runID string
	err := db.read.QueryRowContext(ctx, `SELECT r.id FROM action_events e JOIN runs r ON r.generation = e.generation
		WHERE e.action_id = ? AND e.to_status = 'executing' ORDER BY e.id DESC, r.started_at DESC LIMIT 1`, id).Scan(&runID)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil, nil
	}
	if err != nil {
		return "", nil, fmt.Errorf("the run that clicked action %s: %w", id, err)
	}
	rows, err := db.read.QueryContext(ctx, `SELECT `+tabColumns+` FROM tabs WHERE run_id = ? ORDER BY id`, runID)
	if err != nil {
		return "", nil, fmt.Errorf("the tabs of run %s: %w", runID, err)
	}
	defer rows.Close()
	var tabs []Tab
	for rows.Next() {
		t, err := scanTab(rows)
		if err != nil {
			return "", nil, fmt.Errorf("the tabs of run %s: %w", runID, err)
		}
		tabs = append(tabs, t)
	}
	return runID, tabs, rows.Err()
}

// Recheck records, under the run's fence, why an ambiguous (or moderated)
// action is still so after another look: its reason becomes reason, and an
// event (ambiguous to ambiguous, moderated to moderated) keeps the look in
// its history. Any other state is ErrIllegalTransition; a reason equal to
// the current one changes nothing.
func (db *DB) Recheck(ctx context.Context, f Fence, id, reason string) (Action, error) {
	out, err := db.inFencedAction(ctx, f, id, func(tx *sql.Tx, a Action) (Action, error) {
		if a.Status != Ambiguous && a.Status != Moderated {
			return a, fmt.Errorf("%w: only an ambiguous or moderated action is rechecked; this one is %s", ErrIllegalTransition, a.Status)
		}
		if strings.TrimSpace(reason) == "" {
			return a, fmt.Errorf("%w: a reason is required", ErrIllegalTransition)
		}
		if reason == a.FailureReason {
			return a, nil
		}
		now := db.now()
		a.FailureReason, a.UpdatedAt, a.Generation = reason, now, f.Generation
		if _, err := tx.ExecContext(ctx, `UPDATE actions SET failure_reason = ?, generation = ?, updated_at = ? WHERE id = ? AND status = ?`,
			reason, a.Generation, nanos(now), a.ID, a.Status); err != nil {
			return a, fmt.Errorf("update action: %w", err)
		}
		return a, insertEvent(ctx, tx, a.ID, a.Status, a.Status, f.Generation, ByOperator, reason, nanos(now))
	})
	if err != nil {
		return Action{}, fmt.Errorf("recheck action %s: %w", id, err)
	}
	return out, nil
}

// maxStopCause bounds, in bytes, the cause RecordStop keeps.
const maxStopCause = 4096

// RecordStop records, under the run's fence, that the hard stop s held the
// planned action id in the pass of run s.RunID: it becomes the action's
// LastStop, at the ledger's now (s.At is ignored), replacing the one
// before. It needs a kind, and a kind and cause in UTF-8 (the cause at
// most 4096 bytes). Any action but a planned one is ErrIllegalTransition:
// a stop holds only what did not go ahead. It appends no event: a stop is
// no transition, and a stop on every pass would bury the history.
func (db *DB) RecordStop(ctx context.Context, f Fence, id string, s Stop) (Action, error) {
	switch {
	case strings.TrimSpace(s.Kind) == "":
		return Action{}, fmt.Errorf("record stop on action %s: %w: a stop needs its kind", id, ErrIllegalTransition)
	case !utf8.ValidString(s.Kind) || !utf8.ValidString(s.Cause) || !utf8.ValidString(s.RunID):
		return Action{}, fmt.Errorf("record stop on action %s: %w: a stop's kind, cause and run are UTF-8", id, ErrIllegalTransition)
	case len(s.Cause) > maxStopCause:
		return Action{}, fmt.Errorf("record stop on action %s: %w: a stop's cause is at most %d bytes, not %d", id, ErrIllegalTransition, maxStopCause, len(s.Cause))
	}
	out, err := db.inFencedAction(ctx, f, id, func(tx *sql.Tx, a Action) (Action, error) {
		if a.Status != Planned {
			return a, fmt.Errorf("%w: only a planned action is held by a stop; this one is %s", ErrIllegalTransition, a.Status)
		}
		now := db.now()
		s.At = now
		a.LastStop, a.UpdatedAt, a.Generation = &s, now, f.Generation
		_, err := tx.ExecContext(ctx, `UPDATE actions SET last_stop_kind = ?, last_stop_cause = ?, last_stop_run_id = ?, last_stop_at = ?,
			generation = ?, updated_at = ? WHERE id = ? AND status = 'planned'`,
			s.Kind, s.Cause, s.RunID, nanos(now), a.Generation, nanos(now), a.ID)
		if err != nil {
			return a, fmt.Errorf("update action: %w", err)
		}
		return a, nil
	})
	if err != nil {
		return Action{}, fmt.Errorf("record stop on action %s: %w", id, err)
	}
	return out, nil
}

// inFencedAction runs fn on action id in one write transaction under f and
// returns what fn returns; on an error nothing is written.
func (db *DB) inFencedAction(ctx context.Context, f Fence, id string, fn func(tx *sql.Tx, a Action) (Action, error)) (Action, error) {
	var out Action
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		if err := checkFence(ctx, tx, f); err != nil {
			return err
		}
		a, err := getActionBy(ctx, tx, "id", id)
		if err != nil {
			return err
		}
		out, err = fn(tx, a)
		return err
	})
	return out, err
}

// Replannable reports whether a pass plans the action again: it failed
// definitively (not abandoned) and has had fewer than maxAttempts
// attempts. The operator's passes and its outcomes read it the same way.
func (a Action) Replannable(maxAttempts int) bool {
	return a.Status == Failed && a.FailureClass == Definitive && a.Attempt < maxAttempts
}
