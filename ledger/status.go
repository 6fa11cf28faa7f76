package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/browserop/browserop/budgets"
)

// Report is what `browserop status` shows.
type Report struct {
	Lease     *Lease // nil when never acquired
	LeaseHeld bool
	Counts    map[Status]int
	Ambiguous []Action
	Budgets   []budgets.Usage
}

// Status reads the lease, the action counts by status, every ambiguous
// action and the budget usage in one read transaction (one snapshot).
func (db *DB) Status(ctx context.Context, leaseName string, p budgets.Policy) (Report, error) {
	tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return Report{}, fmt.Errorf("status: %w", err)
	}
	defer tx.Rollback()
	now := db.now()
	r := Report{Counts: map[Status]int{}}
	for _, s := range Statuses {
		r.Counts[s] = 0
	}
	l, err := getLease(ctx, tx, leaseName)
	switch {
	case err == nil:
		r.Lease, r.LeaseHeld = &l, l.Held(now)
	case !errors.Is(err, ErrNotFound):
		return Report{}, fmt.Errorf("status: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT status, count(*) FROM actions GROUP BY status`)
	if err != nil {
		return Report{}, fmt.Errorf("status: %w", err)
	}
	for rows.Next() {
		var s Status
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			rows.Close()
			return Report{}, fmt.Errorf("status: %w", err)
		}
		r.Counts[s] = n
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return Report{}, fmt.Errorf("status: %w", err)
	}
	if r.Ambiguous, err = listActions(ctx, tx, ActionFilter{Statuses: []Status{Ambiguous}}); err != nil {
		return Report{}, fmt.Errorf("status: %w", err)
	}
	for _, l := range p.Limits() {
		used, inFlight, err := countLimit(ctx, tx, l, now)
		if err != nil {
			return Report{}, fmt.Errorf("status: budget %s: %w", l.Name, err)
		}
		r.Budgets = append(r.Budgets, budgets.Usage{Limit: l, Used: used, InFlight: inFlight})
	}
	return r, nil
}
