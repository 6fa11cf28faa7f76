package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// FieldState says who put a field's value there (docs/ledger.md, "Field
// provenance").
type FieldState string

// Field provenance states.
const (
	// FieldAgentFilled: browserop typed the field and read it back.
	FieldAgentFilled FieldState = "agent_filled"
	// FieldUserEdited: the field changed after browserop read it back.
	FieldUserEdited FieldState = "user_edited"
	// FieldUnknownChange: the field held a non-empty value nobody
	// recorded (a site's restored draft, autofill, a person's typing
	// before browserop came, or browserop's own fill after it lost the
	// memory of it).
	FieldUnknownChange FieldState = "unknown_external_change"
)

// valid reports whether s is one of the states.
func (s FieldState) valid() bool {
	return s == FieldAgentFilled || s == FieldUserEdited || s == FieldUnknownChange
}

// FieldKey names one field of one action in one tab record and one
// inspection epoch of it. Field is the field's fingerprint (64 lowercase
// hex digits: sites.FieldFingerprint), never anything it holds.
type FieldKey struct {
	ActionID string
	TabID    int64
	Epoch    int
	Field    string
}

// check says what is wrong with the key, or nil.
func (k FieldKey) check() error {
	switch {
	case k.ActionID == "":
		return errors.New("field provenance: the action id is empty")
	case k.TabID <= 0:
		return fmt.Errorf("field provenance: tab record id %d is not a record's id", k.TabID)
	case k.Epoch < 1:
		return fmt.Errorf("field provenance: inspection epoch %d is below 1", k.Epoch)
	case !isFingerprint(k.Field):
		return fmt.Errorf("field provenance: field %q is not a fingerprint (64 lowercase hex digits)", excerptKey(k.Field))
	}
	return nil
}

func isFingerprint(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// excerptKey keeps an error message short when a caller passed something
// long where a fingerprint belongs.
func excerptKey(s string) string {
	if len(s) > 70 {
		return s[:70] + "…"
	}
	return s
}

// FieldProvenance is the record of one field: its key, its state, the
// lease generation that last wrote it, and when.
type FieldProvenance struct {
	FieldKey
	State      FieldState
	Generation int64
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// RecordFieldProvenance records, under the run's fence, state s for the
// field k names, and returns the record. The tab record must exist and be
// at k's epoch (a record for an epoch gone by would be evidence about a
// page no longer there). A field recorded user_edited or
// unknown_external_change keeps that state: changing it returns
// ErrIllegalTransition (recording the same state again changes nothing
// but the time). A bad key or state returns an error naming it; a stale
// fence ErrStaleGeneration; an action or tab record that does not exist
// ErrNotFound.
func (db *DB) RecordFieldProvenance(ctx context.Context, f Fence, k FieldKey, s FieldState) (FieldProvenance, error) {
	if err := k.check(); err != nil {
		return FieldProvenance{}, err
	}
	if !s.valid() {
		return FieldProvenance{}, fmt.Errorf("field provenance: state %q is not agent_filled, user_edited or unknown_external_change", s)
	}
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		if err := checkFence(ctx, tx, f); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM actions WHERE id = ?`, k.ActionID).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("action %s: %w", k.ActionID, ErrNotFound)
		}
		var epoch int
		err := tx.QueryRowContext(ctx, `SELECT epoch FROM tabs WHERE id = ?`, k.TabID).Scan(&epoch)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("tab record %d: %w", k.TabID, ErrNotFound)
		}
		if err != nil {
			return err
		}
		if epoch != k.Epoch {
			return fmt.Errorf("%w: tab record %d is at inspection epoch %d, not %d", ErrIllegalTransition, k.TabID, epoch, k.Epoch)
		}
		var cur FieldState
		err = tx.QueryRowContext(ctx, `SELECT state FROM field_provenance WHERE action_id = ? AND tab_id = ? AND epoch = ? AND field = ?`,
			k.ActionID, k.TabID, k.Epoch, k.Field).Scan(&cur)
		now := nanos(db.now())
		switch {
		case errors.Is(err, sql.ErrNoRows):
			_, err = tx.ExecContext(ctx, `INSERT INTO field_provenance (action_id, tab_id, epoch, field, state, generation, created_at, updated_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, k.ActionID, k.TabID, k.Epoch, k.Field, s, f.Generation, now, now)
			return err
		case err != nil:
			return err
		case cur != FieldAgentFilled && cur != s:
			return fmt.Errorf("%w: the field is recorded %s, which no later record changes", ErrIllegalTransition, cur)
		}
		_, err = tx.ExecContext(ctx, `UPDATE field_provenance SET state = ?, generation = ?, updated_at = ?
			WHERE action_id = ? AND tab_id = ? AND epoch = ? AND field = ?`, s, f.Generation, now, k.ActionID, k.TabID, k.Epoch, k.Field)
		return err
	})
	if err != nil {
		return FieldProvenance{}, fmt.Errorf("record field provenance of %s: %w", k.ActionID, err)
	}
	return db.FieldProvenanceOf(ctx, k)
}

// FieldProvenanceOf returns the record of the field k names, or
// ErrNotFound.
func (db *DB) FieldProvenanceOf(ctx context.Context, k FieldKey) (FieldProvenance, error) {
	row := db.read.QueryRowContext(ctx, `SELECT `+fieldProvenanceColumns+` FROM field_provenance
		WHERE action_id = ? AND tab_id = ? AND epoch = ? AND field = ?`, k.ActionID, k.TabID, k.Epoch, k.Field)
	p, err := scanFieldProvenance(row)
	if errors.Is(err, sql.ErrNoRows) {
		return FieldProvenance{}, fmt.Errorf("field provenance of %s: %w", k.ActionID, ErrNotFound)
	}
	return p, err
}

// ActionFieldProvenance returns every field record of an action, oldest
// first.
func (db *DB) ActionFieldProvenance(ctx context.Context, actionID string) ([]FieldProvenance, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+fieldProvenanceColumns+` FROM field_provenance
		WHERE action_id = ? ORDER BY created_at, tab_id, epoch, field`, actionID)
	if err != nil {
		return nil, fmt.Errorf("field provenance of %s: %w", actionID, err)
	}
	defer rows.Close()
	var out []FieldProvenance
	for rows.Next() {
		p, err := scanFieldProvenance(rows)
		if err != nil {
			return nil, fmt.Errorf("field provenance of %s: %w", actionID, err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

const fieldProvenanceColumns = `action_id, tab_id, epoch, field, state, generation, created_at, updated_at`

func scanFieldProvenance(s interface{ Scan(...any) error }) (FieldProvenance, error) {
	var p FieldProvenance
	var created, updated int64
	if err := s.Scan(&p.ActionID, &p.TabID, &p.Epoch, &p.Field, &p.State, &p.Generation, &created, &updated); err != nil {
		return FieldProvenance{}, err
	}
	p.CreatedAt, p.UpdatedAt = fromNanos(created), fromNanos(updated)
	return p, nil
}
