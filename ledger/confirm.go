package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Confirmation states.
const (
	ConfirmPending   = "pending"
	ConfirmConfirmed = "confirmed"
	ConfirmDeclined  = "declined"
)

// Confirmation is a person's answer to an action whose capability the
// task's contract marks as needing confirmation.
type Confirmation struct {
	ActionID  string
	State     string
	By        string
	Reason    string
	CreatedAt time.Time
	UpdatedAt time.Time
	// Handoff is what the pass that prepared the action recorded when it
	// handed its tab to the person (RequestHandoffConfirmation); nil when
	// none was recorded (RequestConfirmation, or a ledger older than
	// migration 0007).
	Handoff *Handoff
	// Held says why a pass holds the answered action instead of going on
	// (HoldConfirmation); "" when it does not.
	Held string
}

// RequestConfirmation records, under the run's fence, that a prepared
// action waits for a person. Asking twice changes nothing.
func (db *DB) RequestConfirmation(ctx context.Context, f Fence, actionID string) (Confirmation, error) {
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		if err := checkFence(ctx, tx, f); err != nil {
			return err
		}
		now := nanos(db.now())
		_, err := tx.ExecContext(ctx, `INSERT INTO confirmations (action_id, state, created_at, updated_at)
			VALUES (?, 'pending', ?, ?) ON CONFLICT (action_id) DO NOTHING`, actionID, now, now)
		return err
	})
	if err != nil {
		return Confirmation{}, fmt.Errorf("request confirmation of %s: %w", actionID, err)
	}
	return db.GetConfirmation(ctx, actionID)
}

// AnswerConfirmation records a person's answer (confirmed or declined). A
// confirmation is answered once: another answer returns
// ErrIllegalTransition; ErrNotFound when none was requested.
func (db *DB) AnswerConfirmation(ctx context.Context, actionID, state, by, reason string) (Confirmation, error) {
	if state != ConfirmConfirmed && state != ConfirmDeclined {
		return Confirmation{}, fmt.Errorf("answer confirmation: %q is not confirmed or declined", state)
	}
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		var cur string
		err := tx.QueryRowContext(ctx, `SELECT state FROM confirmations WHERE action_id = ?`, actionID).Scan(&cur)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("confirmation of %s: %w", actionID, ErrNotFound)
		}
		if err != nil {
			return err
		}
		if cur != ConfirmPending {
			return fmt.Errorf("%w: the action was already %s", ErrIllegalTransition, cur)
		}
		_, err = tx.ExecContext(ctx, `UPDATE confirmations SET state = ?, by = ?, reason = ?, updated_at = ? WHERE action_id = ?`,
			state, by, reason, nanos(db.now()), actionID)
		return err
	})
	if err != nil {
		return Confirmation{}, fmt.Errorf("answer confirmation of %s: %w", actionID, err)
	}
	return db.GetConfirmation(ctx, actionID)
}

// GetConfirmation returns an action's confirmation, or ErrNotFound.
func (db *DB) GetConfirmation(ctx context.Context, actionID string) (Confirmation, error) {
	var c Confirmation
	var created, updated int64
	var h handoffRow
	err := db.read.QueryRowContext(ctx, `SELECT action_id, state, by, reason, created_at, updated_at, held_reason,
		handoff_tab_id, handoff_url, handoff_at, handoff_baseline_json, handoff_seen_json FROM confirmations
		WHERE action_id = ?`, actionID).Scan(&c.ActionID, &c.State, &c.By, &c.Reason, &created, &updated, &c.Held,
		&h.tabID, &h.url, &h.at, &h.baseline, &h.seen)
	if errors.Is(err, sql.ErrNoRows) {
		return Confirmation{}, fmt.Errorf("confirmation of %s: %w", actionID, ErrNotFound)
	}
	if err != nil {
		return Confirmation{}, err
	}
	c.CreatedAt, c.UpdatedAt = fromNanos(created), fromNanos(updated)
	if c.Handoff, err = h.handoff(); err != nil {
		return Confirmation{}, fmt.Errorf("confirmation of %s: %w", actionID, err)
	}
	return c, nil
}

// TaskIntent is one intent an agent submitted to a task.
type TaskIntent struct {
	ID        string
	TaskID    string
	Request   json.RawMessage
	Effects   int // side effects it makes: a thread one per part
	CreatedAt time.Time
}

// AddTaskIntent records an intent for a task (canonical JSON request)
// that makes effects side effects (a thread one per part). The same
// request twice returns the first and created=false. In the same
// transaction it checks that the task is open and not finished
// (ErrIllegalTransition otherwise) and that the contract's bound holds for
// the effects of every intent accepted so far plus this one
// (ErrSideEffectBound otherwise), so that parallel submissions can never
// pass the bound together.
func (db *DB) AddTaskIntent(ctx context.Context, taskID string, request any, effects int) (ti TaskIntent, created bool, err error) {
	raw, err := Canonicalize(request)
	if err != nil {
		return TaskIntent{}, false, fmt.Errorf("add task intent: %w", err)
	}
	if effects < 1 {
		return TaskIntent{}, false, fmt.Errorf("add task intent: effects %d, want at least 1", effects)
	}
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		var status, contractJSON string
		var finished sql.NullInt64
		err := tx.QueryRowContext(ctx, `SELECT status, contract_json, finished_at FROM tasks WHERE id = ?`, taskID).Scan(&status, &contractJSON, &finished)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("task %s: %w", taskID, ErrNotFound)
		} else if err != nil {
			return err
		}
		var id string
		var at int64
		err = tx.QueryRowContext(ctx, `SELECT id, created_at FROM task_intents WHERE task_id = ? AND request_json = ?`, taskID, string(raw)).Scan(&id, &at)
		if err == nil {
			ti = TaskIntent{ID: id, TaskID: taskID, Request: raw, Effects: effects, CreatedAt: fromNanos(at)}
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if status != TaskOpen {
			return fmt.Errorf("%w: the task is %s", ErrIllegalTransition, status)
		}
		if finished.Valid {
			return fmt.Errorf("%w: the task is finished and accepts no more intents", ErrIllegalTransition)
		}
		var c Contract
		if err := json.Unmarshal([]byte(contractJSON), &c); err != nil {
			return fmt.Errorf("task %s: contract: %w", taskID, err)
		}
		if c.MaxSideEffects > 0 {
			var used int
			if err := tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(effects), 0) FROM task_intents WHERE task_id = ?`, taskID).Scan(&used); err != nil {
				return err
			}
			if used+effects > c.MaxSideEffects {
				return fmt.Errorf("%w: the contract bounds the task to %d side effects; %d are submitted and this intent makes %d",
					ErrSideEffectBound, c.MaxSideEffects, used, effects)
			}
		}
		now := db.now()
		ti = TaskIntent{ID: newID("int"), TaskID: taskID, Request: raw, Effects: effects, CreatedAt: now}
		if _, err := tx.ExecContext(ctx, `INSERT INTO task_intents (id, task_id, request_json, effects, created_at) VALUES (?, ?, ?, ?, ?)`,
			ti.ID, taskID, string(raw), effects, nanos(now)); err != nil {
			return err
		}
		created = true
		return insertTaskEvent(ctx, tx, taskID, 0, "intent", "intent "+ti.ID+" submitted", nanos(now))
	})
	if err != nil {
		return TaskIntent{}, false, fmt.Errorf("add task intent: %w", err)
	}
	return ti, created, nil
}

// TaskIntents returns a task's intents in submission order; with taskID ""
// the intents of every open task.
func (db *DB) TaskIntents(ctx context.Context, taskID string) ([]TaskIntent, error) {
	q := `SELECT i.id, i.task_id, i.request_json, i.effects, i.created_at FROM task_intents i JOIN tasks t ON t.id = i.task_id`
	var args []any
	if taskID != "" {
		q += ` WHERE i.task_id = ?`
		args = append(args, taskID)
	} else {
		q += ` WHERE t.status = 'open'`
	}
	rows, err := db.read.QueryContext(ctx, q+` ORDER BY i.created_at, i.rowid`, args...)
	if err != nil {
		return nil, fmt.Errorf("task intents: %w", err)
	}
	defer rows.Close()
	var out []TaskIntent
	for rows.Next() {
		var ti TaskIntent
		var raw string
		var at int64
		if err := rows.Scan(&ti.ID, &ti.TaskID, &raw, &ti.Effects, &at); err != nil {
			return nil, fmt.Errorf("task intents: %w", err)
		}
		ti.Request, ti.CreatedAt = json.RawMessage(raw), fromNanos(at)
		out = append(out, ti)
	}
	return out, rows.Err()
}
