package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// CleanupPreference is the person's answer to which of the tabs browserop
// opened in a profile it may close by itself (docs/operator.md, "Cleanup
// preference"). CleanupUnknown until the person chooses: never a default.
type CleanupPreference string

// Cleanup preferences.
const (
	CleanupUnknown CleanupPreference = ""
	// CleanupNever: browserop closes none of its tabs.
	CleanupNever CleanupPreference = "never"
	// CleanupSubmittedOnly: only a tab whose every prepared action was
	// verified, through the close-proof path.
	CleanupSubmittedOnly CleanupPreference = "submitted_only"
	// CleanupSubmittedAndProbeBlockers: also a probe tab (nothing typed,
	// no control changed, no draft; its blocker, if it met one, recorded).
	CleanupSubmittedAndProbeBlockers CleanupPreference = "submitted_and_probe_blockers"
)

// CleanupPreferences lists the values a person may choose.
var CleanupPreferences = []CleanupPreference{CleanupNever, CleanupSubmittedOnly, CleanupSubmittedAndProbeBlockers}

// ErrBadPreference is a cleanup preference that is not one of
// CleanupPreferences.
var ErrBadPreference = errors.New("not a cleanup preference")

// ParseCleanupPreference returns the preference s names, or an error
// wrapping ErrBadPreference that lists the values.
func ParseCleanupPreference(s string) (CleanupPreference, error) {
	for _, p := range CleanupPreferences {
		if string(p) == s {
			return p, nil
		}
	}
	names := make([]string, len(CleanupPreferences))
	for i, p := range CleanupPreferences {
		names[i] = string(p)
	}
	return "", fmt.Errorf("%w: %q (one of %s)", ErrBadPreference, s, strings.Join(names, ", "))
}

// CleanupSetting is a profile's cleanup preference, who set it and when,
// and when browserop asked for it. AskedAt and SetAt are nil when it never
// did, or nobody did.
type CleanupSetting struct {
	Profile    string            `json:"profile"`
	Preference CleanupPreference `json:"preference"`
	SetBy      string            `json:"set_by,omitempty"`
	SetAt      *time.Time        `json:"set_at,omitempty"`
	AskedAt    *time.Time        `json:"asked_at,omitempty"`
}

// Known reports whether the person chose a preference.
func (s CleanupSetting) Known() bool { return s.Preference != CleanupUnknown }

// CleanupSettingOf returns the profile's cleanup setting; a profile nobody
// chose for has CleanupUnknown.
func (db *DB) CleanupSettingOf(ctx context.Context, profile string) (CleanupSetting, error) {
	return cleanupSetting(ctx, db.read, profile)
}

func cleanupSetting(ctx context.Context, q querier, profile string) (CleanupSetting, error) {
	out := CleanupSetting{Profile: profile}
	var pref sql.NullString
	var setAt, askedAt sql.NullInt64
	err := q.QueryRowContext(ctx, `SELECT preference, set_by, set_at, asked_at FROM cleanup_preferences WHERE profile = ?`, profile).
		Scan(&pref, &out.SetBy, &setAt, &askedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return out, nil
	}
	if err != nil {
		return CleanupSetting{}, fmt.Errorf("read cleanup preference: %w", err)
	}
	out.Preference = CleanupPreference(pref.String)
	if setAt.Valid {
		t := fromNanos(setAt.Int64)
		out.SetAt = &t
	}
	if askedAt.Valid {
		t := fromNanos(askedAt.Int64)
		out.AskedAt = &t
	}
	return out, nil
}

// SetCleanupPreference records the person's choice for profile; by says
// through what (cli, terminal, api). It returns ErrBadPreference for
// anything not in CleanupPreferences (CleanupUnknown included: a choice
// is never taken back to unknown).
func (db *DB) SetCleanupPreference(ctx context.Context, profile string, p CleanupPreference, by string) (CleanupSetting, error) {
	if _, err := ParseCleanupPreference(string(p)); err != nil {
		return CleanupSetting{}, fmt.Errorf("set cleanup preference: %w", err)
	}
	var out CleanupSetting
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		now := nanos(db.now())
		if _, err := tx.ExecContext(ctx, `INSERT INTO cleanup_preferences (profile, preference, set_by, set_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (profile) DO UPDATE SET preference = excluded.preference, set_by = excluded.set_by, set_at = excluded.set_at`,
			profile, p, by, now); err != nil {
			return err
		}
		var err error
		out, err = cleanupSetting(ctx, tx, profile)
		return err
	})
	if err != nil {
		return CleanupSetting{}, fmt.Errorf("set cleanup preference: %w", err)
	}
	return out, nil
}

// MarkCleanupAsked records that browserop asked the person for the
// profile's preference, so that it asks once: an unanswered question is
// not asked again.
func (db *DB) MarkCleanupAsked(ctx context.Context, profile string) error {
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO cleanup_preferences (profile, asked_at) VALUES (?, ?)
			ON CONFLICT (profile) DO UPDATE SET asked_at = excluded.asked_at`, profile, nanos(db.now()))
		return err
	})
	if err != nil {
		return fmt.Errorf("mark cleanup preference asked: %w", err)
	}
	return nil
}

// RecordTabUse records, under the run's fence and before it begins, that
// browserop prepares action actionID in tab record tabID's epoch (types
// into the page, or runs a step that changes a control). A tab with no use
// is a probe; recording a use twice changes nothing.
func (db *DB) RecordTabUse(ctx context.Context, f Fence, tabID int64, epoch int, actionID string) error {
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		t, err := getTab(ctx, tx, tabID)
		if err != nil {
			return err
		}
		if err := checkTabFence(ctx, tx, f, t.Purpose); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO tab_uses (tab_id, action_id, epoch, at) VALUES (?, ?, ?, ?)
			ON CONFLICT DO NOTHING`, tabID, actionID, epoch, nanos(db.now()))
		return err
	})
	if err != nil {
		return fmt.Errorf("record a use of tab record %d: %w", tabID, err)
	}
	return nil
}

// TabDisposition is what decides whether a tab's closure is covered by
// the cleanup preference: what it is for, the status of every action
// prepared in it (tab uses and field provenance together), the blocker
// it met, and whether it was shown to the person.
type TabDisposition struct {
	Purpose TabPurpose
	Uses    []Status
	Blocker string
	// Filled: a text was typed in it outside any action (sites check
	// --text): not a probe.
	Filled bool
	// Shown: the tab was given to the person (login's sign-in tab).
	Shown bool
}

// TabDispositionOf reads the disposition of tab record t from the ledger.
func (db *DB) TabDispositionOf(ctx context.Context, t Tab) (TabDisposition, error) {
	d := TabDisposition{Purpose: t.Purpose, Blocker: t.Blocker, Shown: t.Shown, Filled: t.Typed}
	rows, err := db.read.QueryContext(ctx, `SELECT a.status FROM actions a WHERE a.id IN (
		SELECT action_id FROM tab_uses WHERE tab_id = ? UNION SELECT action_id FROM field_provenance WHERE tab_id = ?)
		ORDER BY a.id`, t.ID, t.ID)
	if err != nil {
		return TabDisposition{}, fmt.Errorf("read the uses of tab record %d: %w", t.ID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var s Status
		if err := rows.Scan(&s); err != nil {
			return TabDisposition{}, fmt.Errorf("read the uses of tab record %d: %w", t.ID, err)
		}
		d.Uses = append(d.Uses, s)
	}
	return d, rows.Err()
}

// Reasons a tab is kept, in browserop's words (no page text).
const (
	KeptNoPreference = "no cleanup preference is set: tabs are left open until you choose one (browserop config cleanup never|submitted_only|submitted_and_probe_blockers)"
	KeptNever        = "the cleanup preference is never"
	KeptUnverified   = "an action prepared in it was not sent (a draft or a changed control may be there): yours to look at"
	KeptProbe        = "a probe tab (nothing typed in it): the cleanup preference submitted_only leaves it open"
	KeptShown        = "shown to the person (a sign-in window): theirs to close"
)

// CleanupAllows says whether preference p lets browserop close a tab of
// disposition d, and why (the reason a tab is kept, when it does not).
// Tab closure is never evidence of anything published: only whether a
// tab may go.
func CleanupAllows(p CleanupPreference, d TabDisposition) (bool, string) {
	// Submitted: every action prepared in it went to executing (its click
	// was, or may have been, sent): verified, moderated, or still
	// executing or ambiguous, whose tab's proven close is what rules out
	// a late click (the post-submission close-proof path). A planned or
	// failed action may have left its text there, unsent.
	submitted, drafts := len(d.Uses) > 0, false
	for _, s := range d.Uses {
		switch s {
		case Verified, Moderated, Executing, Ambiguous:
		default:
			submitted, drafts = false, true
		}
	}
	switch {
	case d.Shown:
		return false, KeptShown
	case p == CleanupUnknown:
		return false, KeptNoPreference
	case p == CleanupNever:
		return false, KeptNever
	case drafts || d.Filled && !submitted:
		return false, KeptUnverified
	case submitted:
		return true, "submitted: every action prepared in it was sent (verified, moderated, or being reconciled)"
	case p == CleanupSubmittedAndProbeBlockers && d.Blocker != "":
		return true, "a probe tab that met a blocker screen (" + d.Blocker + ", recorded): nothing typed, no control changed, no draft"
	case p == CleanupSubmittedAndProbeBlockers:
		return true, "a probe tab: nothing typed, no control changed, no draft"
	}
	return false, KeptProbe
}
