package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// NoteLanded records, under the run's fence, the result link the page an
// executing action's submission landed on named (see Action.LandedURL).
// It is written right after the landing, before verification, so that a
// pass that dies in between leaves it for reconciliation. An empty url,
// or an action that is not executing, changes nothing.
func (db *DB) NoteLanded(ctx context.Context, f Fence, id, url string) (Action, error) {
	url = strings.TrimSpace(url)
	out, err := db.inFencedAction(ctx, f, id, func(tx *sql.Tx, a Action) (Action, error) {
		if url == "" || a.Status != Executing || a.LandedURL == url {
			return a, nil
		}
		a.LandedURL = url
		if _, err := tx.ExecContext(ctx, `UPDATE actions SET landed_url = ?, updated_at = ? WHERE id = ? AND status = ?`,
			url, nanos(db.now()), a.ID, a.Status); err != nil {
			return a, fmt.Errorf("update action: %w", err)
		}
		return a, nil
	})
	if err != nil {
		return Action{}, fmt.Errorf("note the landed link of action %s: %w", id, err)
	}
	return out, nil
}

// ResultsOf returns the recorded results (canonical URLs) of the actor's
// actions on site that went executing at or after since, other than the
// action except: verified actions' proven results and the links moderated
// actions' landed pages named. They are items browserop made, so a search
// that shows one of them can see the actor's items, and none of them is
// an unexplained item beside another action's absence.
func (db *DB) ResultsOf(ctx context.Context, site, actor string, since time.Time, except string) ([]string, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT canonical_result FROM actions
		WHERE site = ? AND actor = ? AND executing_at >= ? AND id <> ? AND status IN ('verified', 'moderated') AND canonical_result <> ''
		ORDER BY executing_at`, site, actor, nanos(since), except)
	if err != nil {
		return nil, fmt.Errorf("results of %s on %s: %w", actor, site, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var u string
		if err := rows.Scan(&u); err != nil {
			return nil, fmt.Errorf("results of %s on %s: %w", actor, site, err)
		}
		out = append(out, u)
	}
	return out, rows.Err()
}
