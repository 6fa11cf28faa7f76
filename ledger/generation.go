package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// A task carries three generations, each only growing (migration 0011,
// trigger tasks_generations_grow):
//
//   - owner_generation: the lease generation of the operator that last
//     acted on the task (ClaimTask, and every operator write of one of its
//     actions, by triggers);
//   - connection_generation: the operator's browser connection it last
//     acted on: the lease's count of connections (NextConnection), one
//     more each time the connection is established again;
//   - interaction_generation: one more at each observe or act turn taken
//     through the task service (TakeTurn).
//
// A write that carries an older generation than the task's is refused
// with a *StaleError, which matches ErrStaleGeneration.

// StaleError is a write refused because it carries an older generation
// than the task's: what, the task's, and the write's. It matches
// ErrStaleGeneration with errors.Is.
type StaleError struct {
	TaskID string
	// What names the generation: "owner", "connection" or "interaction".
	What       string
	Task, Sent int64
}

func (e *StaleError) Error() string {
	switch e.What {
	case "interaction":
		return fmt.Sprintf("task %s is at interaction generation %d, not %d: another turn was taken since; read the task's state again and act on it",
			e.TaskID, e.Task, e.Sent)
	case "connection":
		return fmt.Sprintf("task %s was last acted on through browser connection %d; connection %d is older and may no longer act on it",
			e.TaskID, e.Task, e.Sent)
	}
	return fmt.Sprintf("task %s is owned by operator generation %d; generation %d is older and may no longer act on it", e.TaskID, e.Task, e.Sent)
}

// Is makes errors.Is(err, ErrStaleGeneration) true.
func (e *StaleError) Is(target error) bool { return target == ErrStaleGeneration }

// NextConnection records that the operator holding lease name has
// established its browser connection (again) and returns the connection's
// generation: one more than the last of that lease. ErrNotFound when the
// lease was never acquired.
func (db *DB) NextConnection(ctx context.Context, lease string) (int64, error) {
	var n int64
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `UPDATE leases SET connection_generation = connection_generation + 1 WHERE name = ?
			RETURNING connection_generation`, lease).Scan(&n)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("lease %q: %w", lease, ErrNotFound)
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("next connection: %w", err)
	}
	return n, nil
}

// ClaimTask records that the operator holding f, through its browser
// connection conn (NextConnection; 0 before it connected), takes its turn
// on task id: the task's owner generation becomes f's, its connection
// generation conn (never lower than it was). It refuses, changing
// nothing, a stale lease (ErrStaleGeneration), a generation older than the
// task's owner, or, under the owner's generation, a connection older than
// the task's (*StaleError). ErrNotFound for no such task.
func (db *DB) ClaimTask(ctx context.Context, f Fence, id string, conn int64) (Task, error) {
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		if err := checkFence(ctx, tx, f); err != nil {
			return err
		}
		var owner, cur int64
		err := tx.QueryRowContext(ctx, `SELECT owner_generation, connection_generation FROM tasks WHERE id = ?`, id).Scan(&owner, &cur)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("task %s: %w", id, ErrNotFound)
		}
		if err != nil {
			return err
		}
		switch {
		case f.Generation < owner:
			return &StaleError{TaskID: id, What: "owner", Task: owner, Sent: f.Generation}
		case f.Generation == owner && conn < cur && conn > 0:
			return &StaleError{TaskID: id, What: "connection", Task: cur, Sent: conn}
		}
		_, err = tx.ExecContext(ctx, `UPDATE tasks SET owner_generation = ?, connection_generation = max(connection_generation, ?) WHERE id = ?`,
			f.Generation, conn, id)
		return err
	})
	if err != nil {
		return Task{}, fmt.Errorf("claim task: %w", err)
	}
	return db.GetTask(ctx, id)
}

// TakeTurn records one observe or act turn on task id and returns the
// task's new interaction generation. at is the generation the caller last
// read (0: none, as for an observation, which any caller may make): a turn
// taken at another generation than the task's is refused with a
// *StaleError, changing nothing. ErrNotFound for no such task.
func (db *DB) TakeTurn(ctx context.Context, id string, at int64) (int64, error) {
	var n int64
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		var cur int64
		err := tx.QueryRowContext(ctx, `SELECT interaction_generation FROM tasks WHERE id = ?`, id).Scan(&cur)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("task %s: %w", id, ErrNotFound)
		}
		if err != nil {
			return err
		}
		if at > 0 && at != cur {
			return &StaleError{TaskID: id, What: "interaction", Task: cur, Sent: at}
		}
		n = cur + 1
		_, err = tx.ExecContext(ctx, `UPDATE tasks SET interaction_generation = ? WHERE id = ?`, n, id)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("take turn: %w", err)
	}
	return n, nil
}
