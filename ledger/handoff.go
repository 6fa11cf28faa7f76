package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Handoff is what a pass records when it hands the tab of a prepared
// action to the person for confirmation: the tab stays open with them,
// filled and submittable, and they may press the site's own button in it
// before or after they answer. It is what a later pass needs to judge
// whether they did (docs/operator.md, "Confirmations and the handed-off
// tab").
type Handoff struct {
	// TabID is the tab record of the handed-off tab.
	TabID int64
	// PageURL is the prepared page, in the tab record's URL form
	// (browser.LooseURL).
	PageURL string
	// At is when the handoff began: before the baseline was read and the
	// tab prepared. An identical item that appeared since, and is not in
	// the baseline, is the intent's effect.
	At time.Time
	// Baseline, when HaveBaseline, lists the URLs of the items identical
	// to the intent that a complete search found before the tab was
	// prepared (see Action.Baseline).
	Baseline     []string
	HaveBaseline bool
	// Seen, when HaveSeen, lists in page order every item of the actor's
	// the same search showed (see Action.Seen).
	Seen     []string
	HaveSeen bool
}

// handoffRow is a confirmation's handoff columns as stored.
type handoffRow struct {
	tabID    sql.NullInt64
	url      string
	at       sql.NullInt64
	baseline sql.NullString
	seen     sql.NullString
}

func (r handoffRow) handoff() (*Handoff, error) {
	if !r.at.Valid || !r.tabID.Valid {
		return nil, nil
	}
	h := &Handoff{TabID: r.tabID.Int64, PageURL: r.url, At: fromNanos(r.at.Int64)}
	if r.baseline.Valid {
		h.HaveBaseline = true
		if err := json.Unmarshal([]byte(r.baseline.String), &h.Baseline); err != nil {
			return nil, fmt.Errorf("handoff baseline: %w", err)
		}
	}
	if r.seen.Valid {
		h.HaveSeen = true
		if err := json.Unmarshal([]byte(r.seen.String), &h.Seen); err != nil {
			return nil, fmt.Errorf("handoff seen: %w", err)
		}
	}
	return h, nil
}

// RequestHandoffConfirmation is RequestConfirmation for an action prepared
// in a tab that is handed to the person: it records h with the pending
// confirmation, in the same transaction. Asking twice changes nothing (the
// first handoff stays recorded).
func (db *DB) RequestHandoffConfirmation(ctx context.Context, f Fence, actionID string, h Handoff) (Confirmation, error) {
	if h.TabID <= 0 || h.At.IsZero() {
		return Confirmation{}, errors.New("request confirmation: a handoff needs its tab record and its time")
	}
	var baseline any
	if h.HaveBaseline {
		b, _ := json.Marshal(append([]string{}, h.Baseline...))
		baseline = string(b)
	}
	var seen any
	if h.HaveSeen {
		b, _ := json.Marshal(append([]string{}, h.Seen...))
		seen = string(b)
	}
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		if err := checkFence(ctx, tx, f); err != nil {
			return err
		}
		now := nanos(db.now())
		_, err := tx.ExecContext(ctx, `INSERT INTO confirmations (action_id, state, created_at, updated_at,
			handoff_tab_id, handoff_url, handoff_at, handoff_baseline_json, handoff_seen_json)
			VALUES (?, 'pending', ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (action_id) DO NOTHING`,
			actionID, now, now, h.TabID, h.PageURL, nanos(h.At), baseline, seen)
		return err
	})
	if err != nil {
		return Confirmation{}, fmt.Errorf("request confirmation of %s: %w", actionID, err)
	}
	return db.GetConfirmation(ctx, actionID)
}

// HoldConfirmation records, under the run's fence, why a pass holds an
// answered action instead of going on (its handed-off tab is not proven
// closed); "" says it no longer does. A pending confirmation is
// ErrIllegalTransition: nothing holds it but the person.
func (db *DB) HoldConfirmation(ctx context.Context, f Fence, actionID, reason string) (Confirmation, error) {
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		if err := checkFence(ctx, tx, f); err != nil {
			return err
		}
		var state, held string
		err := tx.QueryRowContext(ctx, `SELECT state, held_reason FROM confirmations WHERE action_id = ?`, actionID).Scan(&state, &held)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("confirmation of %s: %w", actionID, ErrNotFound)
		}
		if err != nil {
			return err
		}
		if state == ConfirmPending {
			return fmt.Errorf("%w: the confirmation is not answered yet", ErrIllegalTransition)
		}
		if held == reason {
			return nil
		}
		_, err = tx.ExecContext(ctx, `UPDATE confirmations SET held_reason = ?, updated_at = ? WHERE action_id = ?`,
			reason, nanos(db.now()), actionID)
		return err
	})
	if err != nil {
		return Confirmation{}, fmt.Errorf("hold confirmation of %s: %w", actionID, err)
	}
	return db.GetConfirmation(ctx, actionID)
}

// BeginHandedOff moves a planned action whose tab was handed to the
// person to executing (c.To must be Executing; the budget and the task's
// side-effect bound are checked as Transition checks them), for an effect
// the person's own click may have made: its executing time is when the
// handoff began, not now, so that every later look at the site counts an
// identical item made since then as this action's. The action's
// confirmation must be answered and must have its handoff recorded
// (ErrIllegalTransition otherwise).
func (db *DB) BeginHandedOff(ctx context.Context, f Fence, id string, c Change) (Action, error) {
	if c.To != Executing {
		return Action{}, fmt.Errorf("begin handed-off action %s: %w: only to executing, not %s", id, ErrIllegalTransition, c.To)
	}
	var out Action
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		if err := checkFence(ctx, tx, f); err != nil {
			return err
		}
		var state string
		var at sql.NullInt64
		err := tx.QueryRowContext(ctx, `SELECT state, handoff_at FROM confirmations WHERE action_id = ?`, id).Scan(&state, &at)
		switch {
		case errors.Is(err, sql.ErrNoRows) || err == nil && !at.Valid:
			return fmt.Errorf("%w: no handoff is recorded for the action", ErrIllegalTransition)
		case err != nil:
			return err
		case state == ConfirmPending:
			return fmt.Errorf("%w: the confirmation is not answered yet", ErrIllegalTransition)
		}
		if out, err = db.transition(ctx, tx, id, c, f.Generation, ByOperator); err != nil {
			return err
		}
		if since := fromNanos(at.Int64); since.Before(out.ExecutingAt) {
			if _, err := tx.ExecContext(ctx, `UPDATE actions SET executing_at = ? WHERE id = ?`, at.Int64, id); err != nil {
				return err
			}
			out.ExecutingAt = since
		}
		return nil
	})
	if err != nil {
		return Action{}, fmt.Errorf("begin handed-off action %s: %w", id, err)
	}
	return out, nil
}
