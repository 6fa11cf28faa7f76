package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/browserop/browserop/authority"
)

// Continuity is what the planner or agent that drives a task reports of
// itself, so that it (or its successor) can resume the task: who plans and
// who executes, with their fallbacks; the current subgoal and its success
// criteria; how it observes, and what; how confident it is and why it
// escalated; its step and duration limits with their counters; and the
// skill it runs. It is coordination state only: no authority check ever
// reads it, so nothing in it can widen what the task may do (docs/api.md,
// "Continuity"). SetContinuity validates it.
type Continuity struct {
	Planner         *Provider    `json:"planner,omitempty"`
	Executor        *Provider    `json:"executor,omitempty"`
	Subgoal         string       `json:"subgoal,omitempty"`
	SuccessCriteria []string     `json:"success_criteria,omitempty"`
	Observation     *ObserveMode `json:"observation,omitempty"`
	// Confidence is the executor's effective confidence, 0 to 1 (nil:
	// not reported).
	Confidence       *float64 `json:"confidence,omitempty"`
	EscalationReason string   `json:"escalation_reason,omitempty"`
	Limits           *Limits  `json:"limits,omitempty"`
	Skill            *Skill   `json:"skill,omitempty"`
	// UpdatedAt is when it was last set (set by the ledger).
	UpdatedAt time.Time `json:"updated_at,omitzero"`
}

// Provider is one identity (a planner or an executor, as the agent names
// it) with the ones it falls back to, in order.
type Provider struct {
	ID        string   `json:"id"`
	Fallbacks []string `json:"fallbacks,omitempty"`
}

// ObserveMode is how the agent observes the task (Mode, one of
// ObservationModes) and what (Scope: domains within the task's own, or
// site names).
type ObserveMode struct {
	Mode  string   `json:"mode"`
	Scope []string `json:"scope,omitempty"`
}

// ObservationModes are the observation modes an agent may report:
// browserop's value-free summaries (task_observe), the task's state only
// (task_state), or none.
var ObservationModes = []string{"summary", "state", "none"}

// Limits are the agent's own bounds on its work and its counters. A limit,
// once reported, only narrows: a later report may lower it, never raise
// it or take it away; a counter never goes back.
type Limits struct {
	MaxSteps           int `json:"max_steps,omitempty"`
	Steps              int `json:"steps,omitempty"`
	MaxDurationSeconds int `json:"max_duration_seconds,omitempty"`
	ElapsedSeconds     int `json:"elapsed_seconds,omitempty"`
}

// Skill is the skill the agent runs, by id and version.
type Skill struct {
	ID      string `json:"id"`
	Version string `json:"version"`
}

// Bounds of a Continuity's fields.
const (
	MaxIdentity        = 128
	MaxFallbacks       = 8
	MaxSubgoal         = 500
	MaxCriteria        = 16
	MaxCriterion       = 300
	MaxScope           = 16
	MaxEscalation      = 500
	MaxStepsLimit      = 100000
	MaxDurationLimit   = 7 * 24 * 3600 // a week, in seconds
	MaxSkillVersion    = 64
	maxCounterOverrun  = 10 // a counter may pass its limit by this factor (the agent reports an overrun)
	maxContinuityBytes = 16 << 10
)

// identityPattern is what an identity, a fallback, a skill id and a scope
// site name look like: a name, not a sentence.
var identityPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/@+-]*$`)

// ErrContinuity is a continuity report refused: its message names the
// field and what is wrong.
var ErrContinuity = errors.New("continuity refused")

// line checks one line of text: at most max characters, valid UTF-8, no
// control characters.
func line(field, s string, max int) string {
	switch {
	case !utf8.ValidString(s):
		return field + ": not valid UTF-8"
	case utf8.RuneCountInString(s) > max:
		return fmt.Sprintf("%s: longer than %d characters", field, max)
	case strings.IndexFunc(s, func(r rune) bool { return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' }) >= 0:
		return field + ": holds a control character"
	}
	return ""
}

func name(field, s string, max int) string {
	if s == "" {
		return field + ": required"
	}
	if p := line(field, s, max); p != "" {
		return p
	}
	if !identityPattern.MatchString(s) {
		return fmt.Sprintf("%s: %q is not a name (letters, digits and . _ : / @ + -, starting with a letter or digit)", field, s)
	}
	return ""
}

// Validate returns an error wrapping ErrContinuity naming each field that
// is wrong; prev is the continuity the task holds (nil: none), which its
// limits and counters must not widen or move back; domains are the task's
// effective domains (contract plus grants), within which a scope's
// domains must lie.
func (c Continuity) Validate(prev *Continuity, domains authority.Domains) error {
	var ps []string
	add := func(p string) {
		if p != "" {
			ps = append(ps, p)
		}
	}
	for _, pr := range []struct {
		field string
		p     *Provider
	}{{"planner", c.Planner}, {"executor", c.Executor}} {
		if pr.p == nil {
			continue
		}
		add(name(pr.field+".id", pr.p.ID, MaxIdentity))
		if len(pr.p.Fallbacks) > MaxFallbacks {
			add(fmt.Sprintf("%s.fallbacks: more than %d", pr.field, MaxFallbacks))
		}
		for i, f := range pr.p.Fallbacks {
			add(name(fmt.Sprintf("%s.fallbacks[%d]", pr.field, i), f, MaxIdentity))
		}
	}
	add(line("subgoal", c.Subgoal, MaxSubgoal))
	if len(c.SuccessCriteria) > MaxCriteria {
		add(fmt.Sprintf("success_criteria: more than %d", MaxCriteria))
	}
	for i, s := range c.SuccessCriteria {
		if strings.TrimSpace(s) == "" {
			add(fmt.Sprintf("success_criteria[%d]: empty", i))
		}
		add(line(fmt.Sprintf("success_criteria[%d]", i), s, MaxCriterion))
	}
	if o := c.Observation; o != nil {
		if !slices.Contains(ObservationModes, o.Mode) {
			add(fmt.Sprintf("observation.mode: %q is not one of %v", o.Mode, ObservationModes))
		}
		if len(o.Scope) > MaxScope {
			add(fmt.Sprintf("observation.scope: more than %d", MaxScope))
		}
		for i, s := range o.Scope {
			field := fmt.Sprintf("observation.scope[%d]", i)
			if !strings.Contains(s, ".") {
				add(name(field, s, MaxIdentity)) // a site's name
				continue
			}
			d, err := authority.ParseDomain(s)
			switch {
			case err != nil:
				add(fmt.Sprintf("%s: %v", field, err))
			case !domains.Covers(d):
				add(fmt.Sprintf("%s: %q is not within the task's domains (%s); continuity never widens them: a person grants a domain",
					field, s, strings.Join(domains.Strings(), ", ")))
			}
		}
	}
	if c.Confidence != nil && (*c.Confidence < 0 || *c.Confidence > 1 || *c.Confidence != *c.Confidence) {
		add(fmt.Sprintf("confidence: %v is not from 0 to 1", *c.Confidence))
	}
	add(line("escalation_reason", c.EscalationReason, MaxEscalation))
	if l := c.Limits; l != nil {
		if l.MaxSteps < 0 || l.MaxSteps > MaxStepsLimit {
			add(fmt.Sprintf("limits.max_steps: %d is not from 1 to %d (0: none)", l.MaxSteps, MaxStepsLimit))
		}
		if l.MaxDurationSeconds < 0 || l.MaxDurationSeconds > MaxDurationLimit {
			add(fmt.Sprintf("limits.max_duration_seconds: %d is not from 1 to %d (0: none)", l.MaxDurationSeconds, MaxDurationLimit))
		}
		if l.Steps < 0 || l.Steps > maxCounterOverrun*MaxStepsLimit {
			add(fmt.Sprintf("limits.steps: %d is out of range", l.Steps))
		}
		if l.ElapsedSeconds < 0 || l.ElapsedSeconds > maxCounterOverrun*MaxDurationLimit {
			add(fmt.Sprintf("limits.elapsed_seconds: %d is out of range", l.ElapsedSeconds))
		}
	}
	if prev != nil && prev.Limits != nil {
		p, l := prev.Limits, c.Limits
		if l == nil {
			l = &Limits{}
		}
		narrows := func(field string, was, now int) {
			if was > 0 && (now == 0 || now > was) {
				add(fmt.Sprintf("limits.%s: %d would widen the task's bound of %d; a limit only narrows", field, now, was))
			}
		}
		narrows("max_steps", p.MaxSteps, l.MaxSteps)
		narrows("max_duration_seconds", p.MaxDurationSeconds, l.MaxDurationSeconds)
		if l.Steps < p.Steps {
			add(fmt.Sprintf("limits.steps: %d is below %d; a counter never goes back", l.Steps, p.Steps))
		}
		if l.ElapsedSeconds < p.ElapsedSeconds {
			add(fmt.Sprintf("limits.elapsed_seconds: %d is below %d; a counter never goes back", l.ElapsedSeconds, p.ElapsedSeconds))
		}
	}
	if sk := c.Skill; sk != nil {
		add(name("skill.id", sk.ID, MaxIdentity))
		add(name("skill.version", sk.Version, MaxSkillVersion))
	}
	if len(ps) > 0 {
		return fmt.Errorf("%w: %s", ErrContinuity, strings.Join(ps, "; "))
	}
	return nil
}

// SetContinuity records what the agent driving task id reports of itself
// (Continuity), replacing what it reported before, after checking it
// (Continuity.Validate against the continuity held and the task's
// effective domains: an error wrapping ErrContinuity). at is the
// interaction generation the caller last read (0: any): another is
// refused with a *StaleError, changing nothing. Setting it is no turn and
// appends a task event naming the fields set, never their values. A task
// that is not open is ErrIllegalTransition; ErrNotFound for no such task.
func (db *DB) SetContinuity(ctx context.Context, id string, c Continuity, at int64) (Continuity, error) {
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		var status, contractJSON string
		var cur int64
		var prevJSON sql.NullString
		err := tx.QueryRowContext(ctx, `SELECT status, contract_json, interaction_generation, continuity_json FROM tasks WHERE id = ?`, id).
			Scan(&status, &contractJSON, &cur, &prevJSON)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("task %s: %w", id, ErrNotFound)
		}
		if err != nil {
			return err
		}
		if status != TaskOpen {
			return fmt.Errorf("%w: the task is %s", ErrIllegalTransition, status)
		}
		if at > 0 && at != cur {
			return &StaleError{TaskID: id, What: "interaction", Task: cur, Sent: at}
		}
		var prev *Continuity
		if prevJSON.Valid {
			prev = new(Continuity)
			if err := json.Unmarshal([]byte(prevJSON.String), prev); err != nil {
				return fmt.Errorf("task %s: continuity: %w", id, err)
			}
		}
		var contract Contract
		if err := json.Unmarshal([]byte(contractJSON), &contract); err != nil {
			return fmt.Errorf("task %s: contract: %w", id, err)
		}
		eff := slices.Clone(contract.Domains)
		rows, err := tx.QueryContext(ctx, `SELECT domain FROM task_grants WHERE task_id = ?`, id)
		if err != nil {
			return err
		}
		for rows.Next() {
			var d string
			if err := rows.Scan(&d); err != nil {
				rows.Close()
				return err
			}
			eff = append(eff, d)
		}
		rows.Close()
		domains, err := authority.ParseDomains(eff)
		if err != nil {
			return fmt.Errorf("task %s: domains: %w", id, err)
		}
		if err := c.Validate(prev, domains); err != nil {
			return err
		}
		now := db.now()
		c.UpdatedAt = now.UTC()
		raw, err := json.Marshal(c)
		if err != nil {
			return err
		}
		if len(raw) > maxContinuityBytes {
			return fmt.Errorf("%w: larger than %d bytes", ErrContinuity, maxContinuityBytes)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE tasks SET continuity_json = ?, updated_at = ? WHERE id = ?`, string(raw), nanos(now), id); err != nil {
			return err
		}
		return insertTaskEvent(ctx, tx, id, 0, "continuity", "the agent reported its continuity: "+c.fields(), nanos(now))
	})
	if err != nil {
		return Continuity{}, fmt.Errorf("set continuity of task %s: %w", id, err)
	}
	return c, nil
}

// fields names the fields c sets, for the task's history (never values).
func (c Continuity) fields() string {
	var fs []string
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"planner", c.Planner != nil}, {"executor", c.Executor != nil}, {"subgoal", c.Subgoal != ""},
		{"success_criteria", len(c.SuccessCriteria) > 0}, {"observation", c.Observation != nil},
		{"confidence", c.Confidence != nil}, {"escalation_reason", c.EscalationReason != ""},
		{"limits", c.Limits != nil}, {"skill", c.Skill != nil},
	} {
		if f.set {
			fs = append(fs, f.name)
		}
	}
	if len(fs) == 0 {
		return "none"
	}
	return strings.Join(fs, ", ")
}
