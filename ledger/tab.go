package ledger

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// TabSurface says whose surface a tab is on.
type TabSurface string

// Tab surfaces.
const (
	SurfaceOwned TabSurface = "owned" // created by browserop
	SurfaceUser  TabSurface = "user"  // the person's own tab
)

// TabOwnership is how sure browserop is that a tab is its own.
type TabOwnership string

// Ownership states. Only Owned tabs may be used automatically.
const (
	Owned     TabOwnership = "owned"
	Probable  TabOwnership = "probable"
	Unrelated TabOwnership = "unrelated"
)

// TabState is a tab record's state.
type TabState string

// Tab states.
const (
	// TabOpening: the record is written before its tab exists; TargetID
	// is empty (or, for a tab being reopened, the old one) until the tab
	// is created and the record goes live.
	TabOpening           TabState = "opening"
	TabLive              TabState = "live"
	TabHandoff           TabState = "handoff"
	TabMissing           TabState = "missing"
	TabClosedVerified    TabState = "closed_verified"
	TabClosureUnverified TabState = "closure_unverified"
	// TabKept: left open on purpose, because the cleanup preference does
	// not let browserop close it (unknown, never, a tab it does not
	// cover) or it was shown to the person; KeptReason says which. Not
	// lost, never reused; see CleanupAllows.
	TabKept TabState = "kept"
)

// TabPurpose says what a tab record is for.
type TabPurpose string

// Tab purposes: a pass's site tab, or a probe tab a command opened for
// itself. Probe records are written outside the operator lease.
const (
	PurposePass       TabPurpose = "pass"
	PurposeDoctor     TabPurpose = "doctor"
	PurposeSitesCheck TabPurpose = "sites_check"
	PurposeLogin      TabPurpose = "login"
)

// Probe reports whether the purpose is a command's own probe.
func (p TabPurpose) Probe() bool {
	return p == PurposeDoctor || p == PurposeSitesCheck || p == PurposeLogin
}

// Tab is a tab record. TargetID is the raw browser target id: it stays in
// this table and never goes into logs, events or API output.
type Tab struct {
	ID          int64
	TaskID      string
	RunID       string
	TargetID    string
	Surface     TabSurface
	URL         string
	BindingHash string
	Ownership   TabOwnership
	Epoch       int
	State       TabState
	Generation  int64
	CreatedAt   time.Time
	UpdatedAt   time.Time
	// Purpose is what the record is for (PurposePass by default).
	Purpose TabPurpose
	// Blocker is the blocker screen the tab met ("" for none).
	Blocker string
	// KeptReason says why a kept record was kept.
	KeptReason string
	// Shown: a probe's tab given to the person (theirs to close).
	Shown bool
	// Typed: text was typed into a probe's tab outside any action.
	Typed bool
}

// RecordTab stores a new tab record (state live, epoch 1 unless given)
// under the run's fence. A record in state opening has no target yet. A
// probe record (Purpose.Probe) may be written with a zero Fence, by a
// command that holds no lease: its generation is then 0.
func (db *DB) RecordTab(ctx context.Context, f Fence, t Tab) (Tab, error) {
	if t.TargetID == "" && t.State != TabOpening || t.URL == "" || t.BindingHash == "" {
		return Tab{}, errors.New("record tab: target, url and binding hash are required")
	}
	if t.Surface == "" {
		t.Surface = SurfaceOwned
	}
	if t.Ownership == "" {
		t.Ownership = Owned
	}
	if t.State == "" {
		t.State = TabLive
	}
	if t.Epoch == 0 {
		t.Epoch = 1
	}
	if t.Purpose == "" {
		t.Purpose = PurposePass
	}
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		if err := checkTabFence(ctx, tx, f, t.Purpose); err != nil {
			return err
		}
		now := db.now()
		t.CreatedAt, t.UpdatedAt, t.Generation = now, now, f.Generation
		res, err := tx.ExecContext(ctx, `INSERT INTO tabs (task_id, run_id, target_id, surface, url, binding_hash, ownership,
			epoch, state, generation, created_at, updated_at, purpose, blocker, kept_reason, shown, typed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			t.TaskID, t.RunID, t.TargetID, t.Surface, t.URL, t.BindingHash, t.Ownership, t.Epoch, t.State,
			t.Generation, nanos(now), nanos(now), t.Purpose, t.Blocker, t.KeptReason, t.Shown, t.Typed)
		if err != nil {
			return err
		}
		t.ID, err = res.LastInsertId()
		return err
	})
	if err != nil {
		return Tab{}, fmt.Errorf("record tab: %w", err)
	}
	return t, nil
}

// TabChange is an update of a tab record. Empty fields keep their value.
type TabChange struct {
	State    TabState
	TargetID string // a recovered tab's new target
	URL      string
	TaskID   string // binds an unbound record to a task (a handoff)
	// NewEpoch starts a new inspection epoch: evidence from the earlier one
	// is void.
	NewEpoch bool
	// Blocker records the blocker screen the tab met (kept once set).
	Blocker string
	// KeptReason says why the record is kept (with State TabKept).
	KeptReason string
	// Shown and Typed set the record's flags (never cleared).
	Shown, Typed bool
}

// checkTabFence checks a tab write's fence: the lease's for a pass's
// record; none is needed for a probe record (a command's own tab), but a
// fence given is checked.
func checkTabFence(ctx context.Context, tx *sql.Tx, f Fence, purpose TabPurpose) error {
	if purpose.Probe() && f == (Fence{}) {
		return nil
	}
	return checkFence(ctx, tx, f)
}

// UpdateTab changes a tab record under the run's fence (a probe record
// also with a zero Fence, see RecordTab). A closed_verified record is
// final, and a record becomes closed_verified only when the facts of its
// (new) current epoch prove it (CloseProof); else ErrIllegalTransition.
func (db *DB) UpdateTab(ctx context.Context, f Fence, id int64, c TabChange) (Tab, error) {
	var out Tab
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		t, err := getTab(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := checkTabFence(ctx, tx, f, t.Purpose); err != nil {
			return err
		}
		if t.State == TabClosedVerified {
			return fmt.Errorf("%w: tab record %d is closed_verified", ErrIllegalTransition, id)
		}
		if c.State != "" && c.State != t.State && !tabAllowed(t.State, c.State) {
			return fmt.Errorf("%w: tab record %d: %s -> %s", ErrIllegalTransition, id, t.State, c.State)
		}
		first := t.State == TabOpening && t.TargetID == "" // the record's first target
		if (c.TargetID != "" && c.TargetID != t.TargetID && !first || c.State == TabLive && t.State == TabMissing) && !c.NewEpoch {
			// A recovered or replaced tab is new evidence: a new epoch.
			return fmt.Errorf("%w: tab record %d: a new target needs a new inspection epoch", ErrIllegalTransition, id)
		}
		if to := cmp.Or(c.State, t.State); to != TabOpening && to != TabMissing && cmp.Or(c.TargetID, t.TargetID) == "" {
			// Only a tab that never came to be has no target.
			return fmt.Errorf("%w: tab record %d: %s needs a target", ErrIllegalTransition, id, to)
		}
		if c.State != "" {
			t.State = c.State
		}
		if c.TargetID != "" {
			t.TargetID = c.TargetID
		}
		if c.URL != "" {
			t.URL = c.URL
		}
		if c.TaskID != "" && t.TaskID == "" {
			t.TaskID = c.TaskID
		}
		if c.NewEpoch {
			t.Epoch++
		}
		if c.Blocker != "" && t.Blocker == "" {
			t.Blocker = c.Blocker
		}
		t.Shown, t.Typed = t.Shown || c.Shown, t.Typed || c.Typed
		switch {
		case t.State == TabKept && c.KeptReason != "":
			t.KeptReason = c.KeptReason
		case t.State == TabKept && t.KeptReason == "":
			return fmt.Errorf("%w: tab record %d: kept needs a reason", ErrIllegalTransition, id)
		case t.State != TabKept:
			t.KeptReason = ""
		}
		if t.State == TabClosedVerified {
			facts, err := tabFacts(ctx, tx, id)
			if err != nil {
				return err
			}
			if proven, why := CloseProof(t, facts); proven != TabClosedVerified {
				return fmt.Errorf("%w: tab record %d: closed_verified is not proven in epoch %d: %s", ErrIllegalTransition, id, t.Epoch, why)
			}
		}
		t.UpdatedAt, t.Generation = db.now(), f.Generation
		_, err = tx.ExecContext(ctx, `UPDATE tabs SET state = ?, target_id = ?, url = ?, task_id = ?, epoch = ?, generation = ?,
			updated_at = ?, blocker = ?, kept_reason = ?, shown = ?, typed = ? WHERE id = ?`, t.State, t.TargetID, t.URL, nullString(t.TaskID), t.Epoch, t.Generation,
			nanos(t.UpdatedAt), t.Blocker, t.KeptReason, t.Shown, t.Typed, id)
		out = t
		return err
	})
	if err != nil {
		return Tab{}, fmt.Errorf("update tab %d: %w", id, err)
	}
	return out, nil
}

// tabTransitions lists the tab states each state may move to.
var tabTransitions = map[TabState][]TabState{
	TabOpening:           {TabLive, TabMissing, TabClosedVerified, TabClosureUnverified, TabKept},
	TabLive:              {TabHandoff, TabMissing, TabClosedVerified, TabClosureUnverified, TabKept},
	TabHandoff:           {TabLive, TabMissing, TabClosedVerified, TabClosureUnverified},
	TabMissing:           {TabLive, TabOpening, TabClosureUnverified},
	TabClosureUnverified: {TabClosedVerified, TabMissing},
	// A kept tab is closed (with proof) only once the preference covers
	// it, or found gone: the person closed it.
	TabKept: {TabClosedVerified, TabClosureUnverified, TabMissing},
}

func tabAllowed(from, to TabState) bool {
	for _, s := range tabTransitions[from] {
		if s == to {
			return true
		}
	}
	return false
}

const tabColumns = `id, COALESCE(task_id, ''), COALESCE(run_id, ''), target_id, surface, url, binding_hash, ownership, epoch, state,
	generation, created_at, updated_at, purpose, blocker, kept_reason, shown, typed`

func scanTab(s scanner) (Tab, error) {
	var t Tab
	var created, updated int64
	err := s.Scan(&t.ID, &t.TaskID, &t.RunID, &t.TargetID, &t.Surface, &t.URL, &t.BindingHash, &t.Ownership, &t.Epoch,
		&t.State, &t.Generation, &created, &updated, &t.Purpose, &t.Blocker, &t.KeptReason, &t.Shown, &t.Typed)
	t.CreatedAt, t.UpdatedAt = fromNanos(created), fromNanos(updated)
	return t, err
}

func getTab(ctx context.Context, q querier, id int64) (Tab, error) {
	t, err := scanTab(q.QueryRowContext(ctx, `SELECT `+tabColumns+` FROM tabs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Tab{}, fmt.Errorf("tab record %d: %w", id, ErrNotFound)
	}
	return t, err
}

// GetTab returns a tab record, or ErrNotFound.
func (db *DB) GetTab(ctx context.Context, id int64) (Tab, error) { return getTab(ctx, db.read, id) }

// ListTabs returns tab records in the given states (all when none), for
// one task when taskID is set, oldest first.
func (db *DB) ListTabs(ctx context.Context, taskID string, states ...TabState) ([]Tab, error) {
	q := `SELECT ` + tabColumns + ` FROM tabs`
	var where []string
	var args []any
	if len(states) > 0 {
		where = append(where, "state IN ("+strings.TrimSuffix(strings.Repeat("?,", len(states)), ",")+")")
		for _, s := range states {
			args = append(args, string(s))
		}
	}
	if taskID != "" {
		where = append(where, "task_id = ?")
		args = append(args, taskID)
	}
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	rows, err := db.read.QueryContext(ctx, q+" ORDER BY id", args...)
	if err != nil {
		return nil, fmt.Errorf("list tabs: %w", err)
	}
	defer rows.Close()
	var out []Tab
	for rows.Next() {
		t, err := scanTab(rows)
		if err != nil {
			return nil, fmt.Errorf("list tabs: %w", err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}
