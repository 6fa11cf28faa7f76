package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Run is one operator pass.
type Run struct {
	ID         string
	LeaseName  string
	Generation int64
	Holder     string
	StartedAt  time.Time
	EndedAt    time.Time
	Outcome    string
	Summary    json.RawMessage
}

// StartRun records the start of a pass under a held lease. It returns
// ErrStaleGeneration when the lease has moved on.
func (db *DB) StartRun(ctx context.Context, l Lease) (Run, error) {
	r := Run{ID: newID("run"), LeaseName: l.Name, Generation: l.Generation, Holder: l.Holder}
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		if err := checkFence(ctx, tx, l.Fence()); err != nil {
			return err
		}
		r.StartedAt = db.now()
		_, err := tx.ExecContext(ctx, `INSERT INTO runs (id, lease_name, generation, holder, started_at) VALUES (?, ?, ?, ?, ?)`,
			r.ID, r.LeaseName, r.Generation, r.Holder, nanos(r.StartedAt))
		return err
	})
	if err != nil {
		return Run{}, fmt.Errorf("start run: %w", err)
	}
	return r, nil
}

// FinishRun records a pass's outcome and summary under its fence.
func (db *DB) FinishRun(ctx context.Context, f Fence, id, outcome string, summary any) error {
	body, err := json.Marshal(summary)
	if err != nil {
		return fmt.Errorf("finish run: %w", err)
	}
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		if err := checkFence(ctx, tx, f); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE runs SET ended_at = ?, outcome = ?, summary_json = ? WHERE id = ? AND ended_at IS NULL`,
			nanos(db.now()), outcome, string(body), id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("run %s: %w (or already finished)", id, ErrNotFound)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("finish run: %w", err)
	}
	return nil
}

// GetRun returns a run, or ErrNotFound.
func (db *DB) GetRun(ctx context.Context, id string) (Run, error) {
	var r Run
	var started int64
	var ended sql.NullInt64
	var outcome, summary sql.NullString
	err := db.read.QueryRowContext(ctx, `SELECT id, lease_name, generation, holder, started_at, ended_at, outcome, summary_json
		FROM runs WHERE id = ?`, id).Scan(&r.ID, &r.LeaseName, &r.Generation, &r.Holder, &started, &ended, &outcome, &summary)
	if errors.Is(err, sql.ErrNoRows) {
		return Run{}, fmt.Errorf("run %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Run{}, fmt.Errorf("read run %s: %w", id, err)
	}
	r.StartedAt, r.EndedAt = fromNanos(started), fromNullNanos(ended)
	r.Outcome = outcome.String
	if summary.Valid {
		r.Summary = json.RawMessage(summary.String)
	}
	return r, nil
}
