package ledger

import (
	"context"
	"database/sql"
	"fmt"
)

// RevisionSep separates a task key from its revision: a calendar entry
// edited before anything of it was performed gets a new task under
// key + RevisionSep + N (its contract and request are immutable).
const RevisionSep = "~"

// TaskRevisions returns the tasks under key and its revisions
// (key~2, key~3...), oldest first.
func (db *DB) TaskRevisions(ctx context.Context, key string) ([]Task, error) {
	prefix := key + RevisionSep
	return db.tasksWhere(ctx, fmt.Sprintf("task revisions of %q", key), `SELECT id FROM tasks
		WHERE idempotency_key = ? OR substr(idempotency_key, 1, ?) = ?
		ORDER BY created_at, id`, key, len(prefix), prefix)
}

// SupersedeTask cancels an open task whose request was replaced by a new
// revision, in one transaction under f: only while none of its actions
// ever went executing (nothing of it can have happened). Its planned
// actions end failed (abandoned) with reason, so they are never performed.
// It returns ErrConflict when an action of the task went executing, and
// ErrStaleGeneration when f is not current.
func (db *DB) SupersedeTask(ctx context.Context, f Fence, taskID, reason string) error {
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		if err := checkFence(ctx, tx, f); err != nil {
			return err
		}
		var performed int // Action.Performed, in SQL
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM actions WHERE task_id = ?
			AND (executing_at IS NOT NULL OR status IN ('executing', 'verified', 'ambiguous', 'moderated'))`, taskID).Scan(&performed); err != nil {
			return err
		}
		if performed > 0 {
			return fmt.Errorf("%w: task %s: %d of its actions went executing", ErrConflict, taskID, performed)
		}
		rows, err := tx.QueryContext(ctx, `SELECT id FROM actions WHERE task_id = ? AND status = 'planned' ORDER BY created_at, id`, taskID)
		if err != nil {
			return err
		}
		var planned []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			planned = append(planned, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, id := range planned {
			if _, err := db.transition(ctx, tx, id, Change{To: Failed, Class: Abandoned, Reason: reason}, f.Generation, ByOperator); err != nil {
				return err
			}
		}
		now := nanos(db.now())
		res, err := tx.ExecContext(ctx, `UPDATE tasks SET status = 'cancelled', updated_at = ? WHERE id = ? AND status = 'open'`, now, taskID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("task %s: %w (or not open)", taskID, ErrNotFound)
		}
		return insertTaskEvent(ctx, tx, taskID, f.Generation, "superseded", reason, now)
	})
	if err != nil {
		return fmt.Errorf("supersede task: %w", err)
	}
	return nil
}
