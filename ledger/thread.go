package ledger

import (
	"context"
	"fmt"
)

// ThreadPart is one part of a thread as recorded: the action that
// publishes it, the parent it must have, and once verified its URL.
type ThreadPart struct {
	ThreadID       string
	Position       int
	ActionID       string
	ExpectedParent string
	PublishedURL   string
	Verified       bool
}

// ThreadParts returns the recorded parts of a thread in order. Parts are
// recorded when reserved (Intent.Thread); part n+1 is reserved only after
// part n is verified, since its expected parent is part n's URL.
func (db *DB) ThreadParts(ctx context.Context, threadID string) ([]ThreadPart, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT thread_id, position, action_id, expected_parent_url, published_url, verified
		FROM thread_parts WHERE thread_id = ? ORDER BY position`, threadID)
	if err != nil {
		return nil, fmt.Errorf("read thread %s: %w", threadID, err)
	}
	defer rows.Close()
	var out []ThreadPart
	for rows.Next() {
		var p ThreadPart
		var verified int
		if err := rows.Scan(&p.ThreadID, &p.Position, &p.ActionID, &p.ExpectedParent, &p.PublishedURL, &verified); err != nil {
			return nil, fmt.Errorf("read thread %s: %w", threadID, err)
		}
		p.Verified = verified == 1
		out = append(out, p)
	}
	return out, rows.Err()
}
