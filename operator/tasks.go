package operator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/sites"
)

// ErrForbidden: the request is outside the task's contract or the
// configured ceiling.
var ErrForbidden = errors.New("forbidden")

// TaskService is how agents (over REST or MCP) and the person (over the CLI
// or REST with the user's token) work with durable tasks. Agents create
// tasks, submit intents, read state and cancel; only a person grants
// domains, confirms, declines and resolves.
type TaskService struct {
	db      *ledger.DB
	sites   map[string]sites.Adapter
	ceiling []string
	// agent limits the service to the tasks agents created (sources api
	// and mcp): an agent never reads, submits to or cancels the person's
	// calendar or CLI tasks.
	agent bool
}

// agentSources are the task sources an agent view sees.
var agentSources = []string{"api", "mcp"}

// Agent returns the service as an agent may use it: only tasks created by
// agents (over REST or MCP) exist for it; any other is ledger.ErrNotFound.
func (s *TaskService) Agent() *TaskService {
	c := *s
	c.agent = true
	return &c
}

// task reads a task, hiding from an agent view the tasks it may not see.
func (s *TaskService) task(ctx context.Context, id string) (ledger.Task, error) {
	t, err := s.db.GetTask(ctx, id)
	if err != nil {
		return ledger.Task{}, err
	}
	if s.agent && !slices.Contains(agentSources, t.Request.Source) {
		return ledger.Task{}, fmt.Errorf("task %s: %w", id, ledger.ErrNotFound)
	}
	return t, nil
}

// NewTaskService returns the service. ceiling bounds every task's domains
// and grants; empty, it is the hosts of the configured sites.
func NewTaskService(db *ledger.DB, adapters []sites.Adapter, ceiling []string) *TaskService {
	s := &TaskService{db: db, sites: map[string]sites.Adapter{}, ceiling: ceiling}
	for _, a := range adapters {
		s.sites[a.Name()] = a
		if len(ceiling) == 0 {
			for _, o := range a.Origins() {
				if u, err := url.Parse(o); err == nil {
					s.ceiling = append(s.ceiling, strings.ToLower(u.Hostname()))
				}
			}
		}
	}
	return s
}

// CreateTaskRequest is what an agent asks for.
type CreateTaskRequest struct {
	Title    string          `json:"title,omitempty"`
	Contract ledger.Contract `json:"contract"`
}

// IntentRequest is one intent submitted to a task: the same fields as a
// calendar entry, performed by the next pass.
type IntentRequest struct {
	Site   string   `json:"site"`
	Actor  string   `json:"actor"`
	Type   string   `json:"type"`
	Target string   `json:"target,omitempty"`
	Text   string   `json:"text,omitempty"`
	Parts  []string `json:"parts,omitempty"`
}

// TaskState is a task's durable state as agents and people see it. It
// never holds raw tab ids, cookies, tokens or form values.
type TaskState struct {
	ID              string          `json:"id"`
	Title           string          `json:"title,omitempty"`
	Source          string          `json:"source,omitempty"`
	Status          string          `json:"status"`
	Contract        ledger.Contract `json:"contract"`
	Grants          []GrantState    `json:"grants"`
	OwnerGeneration int64           `json:"owner_generation"`
	Interaction     string          `json:"current_interaction"`
	Intents         int             `json:"intents"`
	Actions         []ActionState   `json:"actions"`
	Result          json.RawMessage `json:"result,omitempty"`
	History         []HistoryEntry  `json:"history"`
	CreatedAt       time.Time       `json:"created_at"`
	UpdatedAt       time.Time       `json:"updated_at"`
}

// GrantState is one grant.
type GrantState struct {
	Domain    string    `json:"domain"`
	GrantedBy string    `json:"granted_by"`
	At        time.Time `json:"at"`
}

// ActionState is one action and its effect state: pending,
// needs_confirmation, executing, known_complete, not_done, uncertain.
type ActionState struct {
	ID           string `json:"id"`
	Type         string `json:"type"`
	Status       string `json:"status"`
	Effect       string `json:"effect_state"`
	Attempt      int    `json:"attempt"`
	Result       string `json:"result,omitempty"`
	Failure      string `json:"failure,omitempty"`
	Confirmation string `json:"confirmation,omitempty"`
}

// HistoryEntry is one entry of a task's history.
type HistoryEntry struct {
	Kind   string    `json:"kind"`
	Detail string    `json:"detail"`
	At     time.Time `json:"at"`
}

func usage(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUsage, fmt.Sprintf(format, args...))
}

// Create creates a task idempotently: the same key and request return the
// original (created=false); the same key with another request is
// ledger.ErrConflict. The contract's domains must lie within the ceiling
// (ErrForbidden).
func (s *TaskService) Create(ctx context.Context, key string, req CreateTaskRequest, source string) (TaskState, bool, error) {
	if strings.TrimSpace(key) == "" {
		return TaskState{}, false, usage("an idempotency key is required")
	}
	if err := req.Contract.Validate(); err != nil {
		return TaskState{}, false, usage("%v", err)
	}
	for _, d := range req.Contract.Domains {
		if !allowedHost(d, s.ceiling) {
			return TaskState{}, false, fmt.Errorf("%w: contract domain %q is outside the ceiling", ErrForbidden, d)
		}
	}
	t, created, err := s.db.CreateTask(ctx, key, ledger.TaskRequest{Title: req.Title, Source: source, Contract: req.Contract})
	if err != nil {
		return TaskState{}, false, err
	}
	st, err := s.state(ctx, t)
	return st, created, err
}

// Get returns a task's state, or ledger.ErrNotFound.
func (s *TaskService) Get(ctx context.Context, id string) (TaskState, error) {
	t, err := s.task(ctx, id)
	if err != nil {
		return TaskState{}, err
	}
	return s.state(ctx, t)
}

// List returns the newest tasks first, at most limit (0: 100).
func (s *TaskService) List(ctx context.Context, limit int) ([]TaskState, error) {
	if limit <= 0 || limit > 1000 {
		limit = 100
	}
	ts, err := s.db.ListTasks(ctx, limit)
	if err != nil {
		return nil, err
	}
	out := make([]TaskState, 0, len(ts))
	for _, t := range ts {
		if s.agent && !slices.Contains(agentSources, t.Request.Source) {
			continue
		}
		st, err := s.state(ctx, t)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// Cancel stops further mutations of a task. Done work is not undone, and
// no tab of the person is closed. Cancelling twice is safe.
func (s *TaskService) Cancel(ctx context.Context, id, reason string) (TaskState, error) {
	if reason == "" {
		reason = "cancelled"
	}
	if _, err := s.task(ctx, id); err != nil {
		return TaskState{}, err
	}
	err := s.db.SetTaskStatus(ctx, id, ledger.TaskCancelled, nil, reason)
	if err != nil && !errors.Is(err, ledger.ErrIllegalTransition) {
		return TaskState{}, err
	}
	return s.Get(ctx, id)
}

// Submit adds an intent to an open task after checking it against the
// contract: the capability is allowed, the site and target are within the
// effective domains (contract plus grants), and the side-effect bound is
// not exceeded. A violation is ErrForbidden with the reason. The same
// intent twice is one intent.
func (s *TaskService) Submit(ctx context.Context, taskID string, in IntentRequest) (TaskState, error) {
	t, err := s.task(ctx, taskID)
	if err != nil {
		return TaskState{}, err
	}
	if t.Status != ledger.TaskOpen {
		return TaskState{}, fmt.Errorf("%w: the task is %s", ErrForbidden, t.Status)
	}
	e := Entry{ID: "submitted", Site: in.Site, Actor: strings.TrimPrefix(in.Actor, "@"), Type: in.Type, Text: in.Text,
		Parts: in.Parts, Target: in.Target}
	if e.Site == "" || e.Actor == "" {
		return TaskState{}, usage("site and actor are required")
	}
	if err := e.validateAction(); err != nil {
		return TaskState{}, usage("%v", err)
	}
	site, ok := s.sites[in.Site]
	if !ok {
		return TaskState{}, usage("site %q is not configured", in.Site)
	}
	if !slices.Contains(t.Contract.Capabilities, in.Type) {
		return TaskState{}, fmt.Errorf("%w: the contract does not allow %q (it allows %v)", ErrForbidden, in.Type, t.Contract.Capabilities)
	}
	domains := effectiveDomains(t)
	for _, o := range site.Origins() {
		if u, err := url.Parse(o); err != nil || !allowedHost(u.Hostname(), domains) {
			return TaskState{}, fmt.Errorf("%w: site %q is outside the task's domains", ErrForbidden, in.Site)
		}
	}
	if in.Target != "" {
		u, err := url.Parse(in.Target)
		if err != nil || !allowedHost(u.Hostname(), domains) {
			return TaskState{}, fmt.Errorf("%w: target %q is outside the task's domains", ErrForbidden, in.Target)
		}
	}
	if bound := t.Contract.MaxSideEffects; bound > 0 {
		intents, err := s.db.TaskIntents(ctx, taskID)
		if err != nil {
			return TaskState{}, err
		}
		n := 0
		for _, ti := range intents {
			n += effectsOf(ti.Request)
		}
		if n+effectsOf(mustJSON(in)) > bound {
			return TaskState{}, fmt.Errorf("%w: the contract bounds the task to %d side effects; %d are submitted", ErrForbidden, bound, n)
		}
	}
	if _, _, err := s.db.AddTaskIntent(ctx, taskID, in); err != nil {
		if errors.Is(err, ledger.ErrIllegalTransition) {
			return TaskState{}, fmt.Errorf("%w: %v", ErrForbidden, err)
		}
		return TaskState{}, err
	}
	return s.Get(ctx, taskID)
}

func mustJSON(v any) json.RawMessage {
	raw, _ := json.Marshal(v)
	return raw
}

// effectsOf counts the side effects an intent request makes (a thread one
// per part).
func effectsOf(raw json.RawMessage) int {
	var in IntentRequest
	if json.Unmarshal(raw, &in) != nil {
		return 1
	}
	if in.Type == EntryThread {
		return len(in.Parts)
	}
	return 1
}

// Grant records a domain a person approved for one task. It must lie
// within the ceiling (ErrForbidden); the contract never changes. Only a
// person calls it (CLI, or REST with the user's token).
func (s *TaskService) Grant(ctx context.Context, taskID, domain, by string) (TaskState, error) {
	domain = strings.ToLower(strings.TrimSpace(domain))
	if domain == "" || strings.ContainsAny(domain, "/:@ ") {
		return TaskState{}, usage("grant: %q is not a host name", domain)
	}
	if !allowedHost(domain, s.ceiling) {
		return TaskState{}, fmt.Errorf("%w: %q is outside the configured ceiling (authority.ceiling)", ErrForbidden, domain)
	}
	t, err := s.task(ctx, taskID)
	if err != nil {
		return TaskState{}, err
	}
	if t.Status != ledger.TaskOpen {
		return TaskState{}, fmt.Errorf("%w: the task is %s", ErrForbidden, t.Status)
	}
	if err := s.db.AddGrant(ctx, taskID, domain, by); err != nil {
		return TaskState{}, err
	}
	return s.Get(ctx, taskID)
}

// Confirm lets a prepared action that needs confirmation go on at the next
// pass; Decline ends it as not done. Only a person calls them.
func (s *TaskService) Confirm(ctx context.Context, actionID, by string) (ActionState, error) {
	return s.answer(ctx, actionID, ledger.ConfirmConfirmed, by, "")
}

// Decline ends a prepared action as not done (see Confirm).
func (s *TaskService) Decline(ctx context.Context, actionID, by, reason string) (ActionState, error) {
	return s.answer(ctx, actionID, ledger.ConfirmDeclined, by, reason)
}

func (s *TaskService) answer(ctx context.Context, actionID, state, by, reason string) (ActionState, error) {
	if _, err := s.db.AnswerConfirmation(ctx, actionID, state, by, reason); err != nil {
		return ActionState{}, err
	}
	a, err := s.db.GetAction(ctx, actionID)
	if err != nil {
		return ActionState{}, err
	}
	return s.actionState(ctx, a), nil
}

// Resolve settles an ambiguous action on a person's word: the effect is at
// verifiedURL, or (verifiedURL "") it is absent for reason.
func (s *TaskService) Resolve(ctx context.Context, actionID, verifiedURL, reason string) (ActionState, error) {
	c := ledger.Change{To: ledger.Failed, Class: ledger.Abandoned, Reason: "absent by a person: " + reason}
	if verifiedURL != "" {
		u, err := url.Parse(verifiedURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return ActionState{}, usage("%q is not an absolute http(s) URL", verifiedURL)
		}
		c = ledger.Change{To: ledger.Verified, Result: verifiedURL, Reason: "verified by a person"}
		if strings.TrimSpace(reason) != "" {
			c.Reason += ": " + reason
		}
	} else if strings.TrimSpace(reason) == "" {
		return ActionState{}, usage("an absent resolution needs a reason")
	}
	a, err := s.db.Resolve(ctx, actionID, c)
	if err != nil {
		return ActionState{}, err
	}
	return s.actionState(ctx, a), nil
}

// Observation is a value-free summary of what a task's tab shows: which
// site and origin it is on, its state and inspection epoch, and what waits
// for a person. No page text, form values or tab ids.
type Observation struct {
	TaskID        string   `json:"task_id"`
	Status        string   `json:"status"`
	Tab           string   `json:"tab"` // none, live, handoff, missing, closed_verified, closure_unverified
	Origin        string   `json:"origin,omitempty"`
	Epoch         int      `json:"inspection_epoch,omitempty"`
	Waiting       []string `json:"waiting_for_person,omitempty"` // action ids needing confirmation or resolution
	PendingIntent int      `json:"pending_intents"`
}

// Observe returns the task's Observation from the ledger.
func (s *TaskService) Observe(ctx context.Context, taskID string) (Observation, error) {
	st, err := s.Get(ctx, taskID)
	if err != nil {
		return Observation{}, err
	}
	o := Observation{TaskID: taskID, Status: st.Status, Tab: "none"}
	tabs, err := s.db.ListTabs(ctx, taskID)
	if err != nil {
		return Observation{}, err
	}
	if len(tabs) > 0 {
		last := tabs[len(tabs)-1]
		o.Tab, o.Epoch = string(last.State), last.Epoch
		if u, err := url.Parse(last.URL); err == nil {
			o.Origin = u.Scheme + "://" + u.Host
		}
	}
	done := 0
	for _, a := range st.Actions {
		if a.Effect == "needs_confirmation" || a.Effect == "uncertain" {
			o.Waiting = append(o.Waiting, a.ID)
		}
		if a.Effect != "pending" {
			done++
		}
	}
	o.PendingIntent = max(0, st.Intents-done)
	return o, nil
}

func (s *TaskService) state(ctx context.Context, t ledger.Task) (TaskState, error) {
	st := TaskState{ID: t.ID, Title: t.Request.Title, Source: t.Request.Source, Status: t.Status, Contract: t.Contract,
		Grants: []GrantState{}, OwnerGeneration: t.OwnerGeneration, Actions: []ActionState{}, History: []HistoryEntry{},
		Result: t.Result, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt, Interaction: "idle"}
	for _, g := range t.Grants {
		st.Grants = append(st.Grants, GrantState{Domain: g.Domain, GrantedBy: g.GrantedBy, At: g.CreatedAt})
	}
	intents, err := s.db.TaskIntents(ctx, t.ID)
	if err != nil {
		return TaskState{}, err
	}
	st.Intents = len(intents)
	acts, err := s.db.ListActions(ctx, ledger.ActionFilter{TaskID: t.ID})
	if err != nil {
		return TaskState{}, err
	}
	for _, a := range acts {
		as := s.actionState(ctx, a)
		st.Actions = append(st.Actions, as)
		switch {
		case as.Effect == "needs_confirmation":
			st.Interaction = "waiting_for_confirmation"
		case as.Effect == "uncertain" && st.Interaction == "idle":
			st.Interaction = "waiting_for_reconciliation"
		case as.Effect == "executing" && st.Interaction == "idle":
			st.Interaction = "acting"
		}
		st.OwnerGeneration = max(st.OwnerGeneration, a.Generation)
	}
	evs, err := s.db.TaskEvents(ctx, t.ID)
	if err != nil {
		return TaskState{}, err
	}
	for _, e := range evs {
		st.History = append(st.History, HistoryEntry{Kind: e.Kind, Detail: e.Detail, At: e.At})
	}
	return st, nil
}

func (s *TaskService) actionState(ctx context.Context, a ledger.Action) ActionState {
	as := ActionState{ID: a.ID, Type: a.Type, Status: string(a.Status), Attempt: a.Attempt, Result: a.CanonicalResult}
	if a.Status == ledger.Failed {
		as.Failure = a.FailureReason
	}
	if c, err := s.db.GetConfirmation(ctx, a.ID); err == nil {
		as.Confirmation = c.State
	}
	switch a.Status {
	case ledger.Planned:
		as.Effect = "pending"
		if as.Confirmation == ledger.ConfirmPending {
			as.Effect = "needs_confirmation"
		}
	case ledger.Executing:
		as.Effect = "executing"
	case ledger.Verified:
		as.Effect = "known_complete"
	case ledger.Failed:
		as.Effect = "not_done"
	case ledger.Ambiguous:
		as.Effect = "uncertain"
	}
	return as
}
