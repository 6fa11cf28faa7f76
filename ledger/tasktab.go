package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// TaskTab is a tab record a task's actions used (migration 0015): the
// record as it is now, and the inspection epoch the task first used it
// in. A site's tab in a pass serves the actions of each task in turn, so
// one record may belong to several tasks; a record handed to the person
// for a task is bound to that task alone (Tab.TaskID).
type TaskTab struct {
	Tab
	// FirstEpoch is the inspection epoch the task first used the record in.
	FirstEpoch int
	// UsedAt is when the task first used it.
	UsedAt time.Time
}

// UseTab records, under the run's fence, that an action of task taskID
// runs in tab record tabID, in the record's current epoch. Using a record
// again changes nothing. An empty taskID (an action of no task) records
// nothing. ErrNotFound for no such task or record.
func (db *DB) UseTab(ctx context.Context, f Fence, taskID string, tabID int64) error {
	if taskID == "" {
		return nil
	}
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		if err := checkFence(ctx, tx, f); err != nil {
			return err
		}
		t, err := getTab(ctx, tx, tabID)
		if err != nil {
			return err
		}
		var one int
		if err := tx.QueryRowContext(ctx, `SELECT 1 FROM tasks WHERE id = ?`, taskID).Scan(&one); errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("task %s: %w", taskID, ErrNotFound)
		} else if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO task_tabs (task_id, tab_id, epoch, at) VALUES (?, ?, ?, ?)
			ON CONFLICT (task_id, tab_id) DO NOTHING`, taskID, tabID, t.Epoch, nanos(db.now()))
		return err
	})
	if err != nil {
		return fmt.Errorf("use tab %d for task %s: %w", tabID, taskID, err)
	}
	return nil
}

// TaskTabs returns the tab records task taskID used (UseTab) or that are
// bound to it (a handoff), oldest first.
func (db *DB) TaskTabs(ctx context.Context, taskID string) ([]TaskTab, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT tabs.id, COALESCE(tabs.task_id, ''), COALESCE(tabs.run_id, ''), tabs.target_id, tabs.surface, tabs.url,
		tabs.binding_hash, tabs.ownership, tabs.epoch, tabs.state, tabs.generation, tabs.created_at, tabs.updated_at,
		COALESCE(u.epoch, 0), COALESCE(u.at, 0) FROM tabs
		LEFT JOIN task_tabs u ON u.tab_id = tabs.id AND u.task_id = ?
		WHERE u.task_id IS NOT NULL OR tabs.task_id = ? ORDER BY tabs.id`, taskID, taskID)
	if err != nil {
		return nil, fmt.Errorf("tabs of task %s: %w", taskID, err)
	}
	defer rows.Close()
	var out []TaskTab
	for rows.Next() {
		var tt TaskTab
		var created, updated, at int64
		t := &tt.Tab
		if err := rows.Scan(&t.ID, &t.TaskID, &t.RunID, &t.TargetID, &t.Surface, &t.URL, &t.BindingHash, &t.Ownership, &t.Epoch,
			&t.State, &t.Generation, &created, &updated, &tt.FirstEpoch, &at); err != nil {
			return nil, fmt.Errorf("tabs of task %s: %w", taskID, err)
		}
		t.CreatedAt, t.UpdatedAt = fromNanos(created), fromNanos(updated)
		if at == 0 {
			tt.FirstEpoch, at = t.Epoch, created
		}
		tt.UsedAt = fromNanos(at)
		out = append(out, tt)
	}
	return out, rows.Err()
}
