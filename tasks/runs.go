package tasks

import (
	"context"
	"encoding/json"
	"time"

	"github.com/browserop/browserop/ledger"
)

// The kinds of a run's skips: intents a pass allowed but did not perform,
// said only in its summary.
const (
	SkipBudget  = "budget_skip"  // a spent budget left it for a later pass
	SkipQuality = "quality_skip" // a planner candidate below the quality threshold
	SkipMissed  = "missed"       // a calendar entry due longer ago than the grace
)

// RunState is one operator pass as people and agents read it back: when,
// under which generation, how it ended, its counts and its skips. It is
// value-free: no page text, no entry text, no field value, no tab id.
type RunState struct {
	ID         string    `json:"id"`
	Generation int64     `json:"generation"`
	StartedAt  time.Time `json:"started_at"`
	// EndedAt is unset while the run has not recorded its end: it is
	// going, or its process was killed (the next pass ends it
	// interrupted).
	EndedAt *time.Time `json:"ended_at,omitempty"`
	// Outcome is the pass's (ok, hard_stop, needs_person,
	// waiting_for_site, locked_skip, error, interrupted), or running.
	Outcome string `json:"outcome"`
	// HardStop and StoppedSites say what stopped the pass, or which sites
	// (the kind of stop, by site).
	HardStop     string            `json:"hard_stop,omitempty"`
	StoppedSites map[string]string `json:"stopped_sites,omitempty"`
	// Counts are the summary's counts: each note and skip, by name.
	Counts      map[string]int `json:"counts"`
	NeedsPerson int            `json:"needs_person"`
	Skips       []RunSkip      `json:"skips"`
	// Unreadable: the summary the ledger holds does not decode; only the
	// run's record is shown.
	Unreadable bool `json:"summary_unreadable,omitempty"`
}

// RunSkip is one intent a pass skipped: which kind of skip (SkipBudget,
// SkipQuality, SkipMissed), the site and type of the intent, and the
// reason the pass gave. For the person, also the calendar entry and the
// action, when there are; an agent view leaves those out (they name the
// person's calendar).
type RunSkip struct {
	Kind     string `json:"kind"`
	Site     string `json:"site,omitempty"`
	Type     string `json:"type"`
	Reason   string `json:"reason"`
	Entry    string `json:"entry,omitempty"`
	ActionID string `json:"action_id,omitempty"`
}

// RunRunning is the outcome of a run that has not recorded its end.
const RunRunning = "running"

// MaxRuns is the most runs Runs returns; DefaultRuns is its default.
const (
	MaxRuns     = 1000
	DefaultRuns = 20
)

// runSummary is what RunState reads of a pass's summary (operator.Summary,
// or ledger.InterruptedSummary for an interrupted run).
type runSummary struct {
	HardStop     string            `json:"hard_stop"`
	StoppedSites map[string]string `json:"stopped_sites"`
	Counts       map[string]int    `json:"counts"`
	Transitions  map[string]int    `json:"transitions"`
	NeedsPerson  []string          `json:"needs_person"`
	Actions      []struct {
		ActionID string `json:"action_id"`
		Entry    string `json:"entry"`
		Type     string `json:"type"`
		Site     string `json:"site"`
		Status   string `json:"status"`
		Reason   string `json:"reason"`
		Note     string `json:"note"`
	} `json:"actions"`
}

// Runs returns the newest runs first, at most limit: 0 means
// DefaultRuns, and limit must be at most MaxRuns (errcode.ErrUsage
// otherwise).
func (s *Service) Runs(ctx context.Context, limit int) ([]RunState, error) {
	if limit < 0 || limit > MaxRuns {
		return nil, usage("limit must be from 1 to %d, got %d", MaxRuns, limit)
	}
	if limit == 0 {
		limit = DefaultRuns
	}
	rs, err := s.db.ListRuns(ctx, limit)
	if err != nil {
		return nil, err
	}
	out := make([]RunState, 0, len(rs))
	for _, r := range rs {
		out = append(out, s.runState(r))
	}
	return out, nil
}

// Run returns one run, or ledger.ErrNotFound.
func (s *Service) Run(ctx context.Context, id string) (RunState, error) {
	r, err := s.db.GetRun(ctx, id)
	if err != nil {
		return RunState{}, err
	}
	return s.runState(r), nil
}

func (s *Service) runState(r ledger.Run) RunState {
	st := RunState{ID: r.ID, Generation: r.Generation, StartedAt: r.StartedAt, Outcome: r.Outcome,
		Counts: map[string]int{}, Skips: []RunSkip{}}
	if !r.EndedAt.IsZero() {
		end := r.EndedAt
		st.EndedAt = &end
	}
	if st.Outcome == "" {
		st.Outcome = RunRunning
	}
	if r.Summary == nil {
		return st
	}
	var sum runSummary
	if err := json.Unmarshal(r.Summary, &sum); err != nil {
		st.Unreadable = true
		return st
	}
	st.HardStop, st.StoppedSites, st.NeedsPerson = sum.HardStop, sum.StoppedSites, len(sum.NeedsPerson)
	for k, n := range sum.Counts {
		st.Counts[k] = n
	}
	for k, n := range sum.Transitions {
		st.Counts[k] = n
	}
	for _, a := range sum.Actions {
		var kind string
		switch {
		case a.Status == SkipBudget:
			kind = SkipBudget
		case a.Status == SkipQuality:
			kind = SkipQuality
		case a.Note == SkipMissed:
			kind = SkipMissed
		default:
			continue
		}
		sk := RunSkip{Kind: kind, Site: a.Site, Type: a.Type, Reason: a.Reason}
		if !s.agent {
			sk.Entry, sk.ActionID = a.Entry, a.ActionID
		}
		st.Skips = append(st.Skips, sk)
	}
	return st
}
