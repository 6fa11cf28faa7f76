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
	r, err := scanRun(db.read.QueryRowContext(ctx, `SELECT id, lease_name, generation, holder, started_at, ended_at, outcome, summary_json
		FROM runs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Run{}, fmt.Errorf("run %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Run{}, fmt.Errorf("read run %s: %w", id, err)
	}
	return r, nil
}

// ListRuns returns the newest runs first (by start, then id), at most
// limit, which must be at least 1. A run still going has no end, outcome
// or summary.
func (db *DB) ListRuns(ctx context.Context, limit int) ([]Run, error) {
	if limit < 1 {
		return nil, fmt.Errorf("list runs: limit must be at least 1, got %d", limit)
	}
	rows, err := db.read.QueryContext(ctx, `SELECT id, lease_name, generation, holder, started_at, ended_at, outcome, summary_json
		FROM runs ORDER BY started_at DESC, id DESC LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("list runs: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	return out, nil
}

// scanRun reads a run from a row of id, lease_name, generation, holder,
// started_at, ended_at, outcome, summary_json.
func scanRun(row interface{ Scan(...any) error }) (Run, error) {
	var r Run
	var started int64
	var ended sql.NullInt64
	var outcome, summary sql.NullString
	if err := row.Scan(&r.ID, &r.LeaseName, &r.Generation, &r.Holder, &started, &ended, &outcome, &summary); err != nil {
		return Run{}, err
	}
	r.StartedAt, r.EndedAt = fromNanos(started), fromNullNanos(ended)
	r.Outcome = outcome.String
	if summary.Valid {
		r.Summary = json.RawMessage(summary.String)
	}
	return r, nil
}

// OutcomeInterrupted is the outcome of a run that ended without recording
// its end: its process was killed or crashed mid-pass.
const OutcomeInterrupted = "interrupted"

// InterruptedSummary is the summary EndInterruptedRuns records: the run's
// last known state, from the transitions written under its generation.
type InterruptedSummary struct {
	Outcome string `json:"outcome"`
	Reason  string `json:"reason"`
	// Transitions counts the transitions made under the run's generation,
	// by the status they led to.
	Transitions map[string]int `json:"transitions"`
	// LastAction is the action of the last of them, LastStatus where it
	// led, LastAt when.
	LastAction string    `json:"last_action,omitempty"`
	LastStatus string    `json:"last_status,omitempty"`
	LastAt     time.Time `json:"last_at,omitempty"`
	FoundBy    string    `json:"found_by"`
}

// EndInterruptedRuns marks ended every run of lease f.Lease older than
// generation f.Generation that never recorded its end (its pass was killed
// mid-way): outcome OutcomeInterrupted, with its last known state as the
// summary. Those runs can no longer write (fencing), so nothing else ends
// them. It returns the runs it ended, and ErrStaleGeneration when f is not
// current.
func (db *DB) EndInterruptedRuns(ctx context.Context, f Fence, foundBy string) ([]Run, error) {
	var out []Run
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		if err := checkFence(ctx, tx, f); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT id, generation, holder, started_at FROM runs
			WHERE lease_name = ? AND generation < ? AND ended_at IS NULL ORDER BY started_at`, f.Lease, f.Generation)
		if err != nil {
			return err
		}
		for rows.Next() {
			var r Run
			var started int64
			if err := rows.Scan(&r.ID, &r.Generation, &r.Holder, &started); err != nil {
				rows.Close()
				return err
			}
			r.LeaseName, r.StartedAt = f.Lease, fromNanos(started)
			out = append(out, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		now := db.now()
		for i := range out {
			r := &out[i]
			s := InterruptedSummary{Outcome: OutcomeInterrupted, Transitions: map[string]int{}, FoundBy: foundBy,
				Reason: "the pass ended without recording its end: its process was killed or crashed"}
			// Generations are per lease name; the events of this run are
			// those written under its generation since it started.
			evs, err := tx.QueryContext(ctx, `SELECT e.action_id, e.to_status, e.at FROM action_events e
				WHERE e.generation = ? AND e.at >= ? ORDER BY e.id`, r.Generation, nanos(r.StartedAt))
			if err != nil {
				return err
			}
			for evs.Next() {
				var id, to string
				var at int64
				if err := evs.Scan(&id, &to, &at); err != nil {
					evs.Close()
					return err
				}
				s.Transitions[to]++
				s.LastAction, s.LastStatus, s.LastAt = id, to, fromNanos(at)
			}
			evs.Close()
			if err := evs.Err(); err != nil {
				return err
			}
			body, err := json.Marshal(s)
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE runs SET ended_at = ?, outcome = ?, summary_json = ? WHERE id = ? AND ended_at IS NULL`,
				nanos(now), OutcomeInterrupted, string(body), r.ID); err != nil {
				return err
			}
			r.EndedAt, r.Outcome, r.Summary = now, OutcomeInterrupted, body
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("end interrupted runs: %w", err)
	}
	return out, nil
}
