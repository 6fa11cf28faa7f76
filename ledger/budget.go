package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/browserop/browserop/budgets"
)

// countLimit counts a limit's usage at now: distinct verified actions of its
// formats whose effect fell inside the window, and in flight the actions of
// its formats now executing or ambiguous (they may have happened) and those
// moderated whose effect fell inside the window (held for moderation, they
// exist; their usage is recorded once they are verified, dated alike).
func countLimit(ctx context.Context, q querier, l budgets.Limit, now time.Time) (used, inFlight int, err error) {
	marks := strings.TrimSuffix(strings.Repeat("?,", len(l.Formats)), ",")
	args := make([]any, 0, len(l.Formats)+1)
	for _, f := range l.Formats {
		args = append(args, f)
	}
	err = q.QueryRowContext(ctx, `SELECT count(*) FROM budget_usage
		WHERE format IN (`+marks+`) AND at > ?`, append(args, nanos(now.Add(-l.Window)))...).Scan(&used)
	if err != nil {
		return 0, 0, err
	}
	err = q.QueryRowContext(ctx, `SELECT count(*) FROM actions
		WHERE (status IN ('executing', 'ambiguous') OR status = 'moderated' AND executing_at > ?) AND format IN (`+marks+`)`,
		append([]any{nanos(now.Add(-l.Window))}, args...)...).Scan(&inFlight)
	return used, inFlight, err
}

// ErrClockBehind: the clock reads earlier than effects already recorded,
// so a rolling window cannot be trusted; browserop refuses to act until it
// is right.
var ErrClockBehind = errors.New("the clock is behind recorded effects")

func checkBudget(ctx context.Context, tx *sql.Tx, p budgets.Policy, format string, now time.Time) error {
	if format == "" || len(p.For(format)) == 0 {
		return nil
	}
	var last sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT max(at) FROM budget_usage`).Scan(&last); err != nil {
		return err
	}
	if last.Valid && nanos(now) < last.Int64-int64(time.Minute) {
		return fmt.Errorf("%w: now is %s, an effect is recorded at %s", ErrClockBehind,
			now.UTC().Format(time.RFC3339), fromNanos(last.Int64).Format(time.RFC3339))
	}
	return p.Check(format, func(l budgets.Limit) (int, int, error) {
		return countLimit(ctx, tx, l, now)
	})
}

// commitBudget records that a verified action consumed the limits that
// apply to its format, with the time its effect happened (when it went
// executing). Every verified action with a format gets its row, even when
// no limit applies now, so usage stays equal to verified actions if limits
// are added later. Recording twice changes nothing.
func commitBudget(ctx context.Context, tx *sql.Tx, p budgets.Policy, a Action, gen int64) error {
	if a.Format == "" {
		return nil
	}
	at := a.ExecutingAt
	if at.IsZero() {
		at = a.UpdatedAt
	}
	var names []string
	for _, l := range p.For(a.Format) {
		names = append(names, l.Name)
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO budget_usage (action_id, format, limits, generation, at)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (action_id) DO NOTHING`,
		a.ID, a.Format, strings.Join(names, ","), gen, nanos(at))
	if err != nil {
		return fmt.Errorf("commit budget: %w", err)
	}
	return nil
}

// CheckBudget reports whether one more action of format fits under the
// policy now, counting verified usage and actions in flight. It returns an
// error matching budgets.ErrExhausted when it does not. The authoritative
// check is repeated inside the transition to executing.
func (db *DB) CheckBudget(ctx context.Context, p budgets.Policy, format string) error {
	now := db.now()
	return p.Check(format, func(l budgets.Limit) (int, int, error) {
		return countLimit(ctx, db.read, l, now)
	})
}

// BudgetUsage returns the usage of every limit of the policy now.
func (db *DB) BudgetUsage(ctx context.Context, p budgets.Policy) ([]budgets.Usage, error) {
	now := db.now()
	var out []budgets.Usage
	for _, l := range p.Limits() {
		used, inFlight, err := countLimit(ctx, db.read, l, now)
		if err != nil {
			return nil, fmt.Errorf("budget usage %s: %w", l.Name, err)
		}
		out = append(out, budgets.Usage{Limit: l, Used: used, InFlight: inFlight})
	}
	return out, nil
}
