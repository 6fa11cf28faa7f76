package ledger

import (
	"context"
	"database/sql"
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
