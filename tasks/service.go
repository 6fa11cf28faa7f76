// Package tasks is the task service: durable tasks that agents (over REST
// or MCP) and the person create, the intents submitted to them, their
// grants and confirmations, and what became of each intent. Passes
// (package operator) perform the intents; this package never drives a
// browser.
package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/browserop/browserop/authority"
	"github.com/browserop/browserop/budgets"
	"github.com/browserop/browserop/calendar"
	"github.com/browserop/browserop/errcode"
	"github.com/browserop/browserop/intent"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/media"
	"github.com/browserop/browserop/sites"
)

// Service is how agents (over REST or MCP) and the person (over the CLI
// or REST with the user's token) work with durable tasks. Agents create
// tasks, submit intents, finish, read state and cancel; only a person
// grants domains, confirms, declines and resolves.
type Service struct {
	db      *ledger.DB
	sites   map[string]sites.Adapter
	ceiling authority.Ceiling
	// ceilingErr is a ceiling that did not parse: every authority check
	// fails with it (configuration loading refuses one before this).
	ceilingErr  error
	policy      budgets.Policy
	maxAttempts int
	// mediaDir holds the files intents attach; "" refuses intents with
	// media.
	mediaDir string
	// agent limits the service to the tasks agents created (sources api
	// and mcp): an agent never reads, submits to or cancels the person's
	// tasks (the calendar's, the planner's, or those the person created).
	agent bool
}

// Task sources: who created a task.
const (
	SourceAPI      = "api"      // an agent, over REST
	SourceMCP      = "mcp"      // an agent, over MCP
	SourcePerson   = "person"   // the person, over REST with the user token
	SourceCalendar = "calendar" // the content calendar
	SourcePlanner  = "planner"  // the planner command
)

// agentSources are the task sources an agent view sees.
var agentSources = []string{SourceAPI, SourceMCP}

// Agent returns the service as an agent may use it: only tasks created by
// agents (over REST or MCP) exist for it; any other is ledger.ErrNotFound.
// Its idempotency keys live in the agents' namespace.
func (s *Service) Agent() *Service {
	c := *s
	c.agent = true
	return &c
}

// task reads a task, hiding from an agent view the tasks it may not see.
func (s *Service) task(ctx context.Context, id string) (ledger.Task, error) {
	t, err := s.db.GetTask(ctx, id)
	if err != nil {
		return ledger.Task{}, err
	}
	if s.agent && !slices.Contains(agentSources, t.Request.Source) {
		return ledger.Task{}, fmt.Errorf("task %s: %w", id, ledger.ErrNotFound)
	}
	return t, nil
}

// Option configures a Service.
type Option func(*Service)

// WithBudget makes a person's resolution of an ambiguous action as
// verified count against policy, as the operator's verification does.
func WithBudget(policy budgets.Policy) Option {
	return func(s *Service) { s.policy = policy }
}

// WithMediaDir is the directory the media files of intents are read from:
// the runner's (operator.Config.MediaDir, or its calendar directory).
// Without it, an intent that attaches media is errcode.ErrUsage.
func WithMediaDir(dir string) Option {
	return func(s *Service) { s.mediaDir = dir }
}

// New returns the service. ceiling is authority.ceiling: it
// bounds every task's domains and grants; empty, it is the hosts of the
// configured sites and no grant is possible (see package authority).
func New(db *ledger.DB, adapters []sites.Adapter, ceiling []string, opts ...Option) *Service {
	s := &Service{db: db, sites: map[string]sites.Adapter{}, maxAttempts: DefaultMaxAttempts}
	var as []authority.Site
	for _, a := range adapters {
		s.sites[a.Name()] = a
		as = append(as, a)
	}
	s.ceiling, s.ceilingErr = authority.NewCeiling(ceiling, as)
	if s.ceilingErr != nil {
		s.ceilingErr = fmt.Errorf("%w: %v", errcode.ErrConfig, s.ceilingErr)
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

// CreateRequest is what an agent asks for.
type CreateRequest struct {
	Title    string          `json:"title,omitempty"`
	Contract ledger.Contract `json:"contract"`
}

// intentMediaPlace names an intent's media item i as problems do:
// "media[i]" for the intent's own (part < 0), "part_media[part][i]".
func intentMediaPlace(part, i int) string {
	if part < 0 {
		return fmt.Sprintf("media[%d]", i)
	}
	return fmt.Sprintf("part_media[%d][%d]", part, i)
}

// entryOf is the request in as a calendar entry: its media named by
// where the intent names them, not yet read (calendar.Entry.ReadMedia).
func entryOf(in intent.Request) calendar.Entry {
	e := calendar.Entry{Request: in}
	for i, m := range in.Media {
		e.MediaAt = append(e.MediaAt, calendar.MediaSource{Place: intentMediaPlace(-1, i), File: m.File})
	}
	for p, pm := range in.PartMedia {
		var at []calendar.MediaSource
		for i, m := range pm {
			at = append(at, calendar.MediaSource{Place: intentMediaPlace(p, i), File: m.File})
		}
		e.PartMediaAt = append(e.PartMediaAt, at)
	}
	return e
}

// withMedia reads the files in names from the media directory, checks
// them against the site's limits, and returns in as the ledger records
// it: each file with the SHA-256 and type of its bytes (part of the
// intent, as its text is). in is Normalized and Checked.
func (s *Service) withMedia(in intent.Request, site sites.Adapter) (intent.Request, error) {
	if len(in.Media) == 0 && len(in.PartMedia) == 0 {
		return in, nil
	}
	for p, items := range append([][]intent.Media{in.Media}, in.PartMedia...) {
		for i, m := range items {
			switch place := intentMediaPlace(p-1, i); {
			case m.File == "":
				return in, usage("%s: file is required: a path relative to the media directory", place)
			case m.SHA256 != "" || m.Type != "":
				return in, usage("%s %q: sha256 and type are read from the file when the intent is submitted; leave them out", place, m.File)
			}
		}
	}
	if s.mediaDir == "" {
		return in, usage("no media directory is configured (calendar.media_dir): an intent cannot attach media")
	}
	e := entryOf(in)
	if mp := e.ReadMedia(s.mediaDir); mp != nil {
		return in, usage("%v", mp)
	}
	if mp := calendar.RefuseMedia(site, e); mp != nil {
		return in, usage("%v", mp)
	}
	recorded := func(m intent.Media, it media.Item) intent.Media {
		m.SHA256, m.Type = it.SHA256, it.Type
		return m
	}
	own := make([]intent.Media, 0, len(in.Media))
	for i, m := range in.Media {
		own = append(own, recorded(m, e.Items[i]))
	}
	parts := make([][]intent.Media, len(in.PartMedia))
	for p := range in.PartMedia {
		parts[p] = make([]intent.Media, 0, len(in.PartMedia[p]))
		for i, m := range in.PartMedia[p] {
			parts[p] = append(parts[p], recorded(m, e.PartItems[p][i]))
		}
	}
	in.Media, in.PartMedia = own, parts
	if len(own) == 0 {
		in.Media = nil
	}
	return in, nil
}

// Entry is the intent ti as the pass performs it: its request, its media
// read again from dir (media.Load) and within the site's limits. A
// request the ledger holds that does not decode is an error, as is a
// file whose bytes are not those Submit recorded: an intent never
// publishes another image than the one it was submitted with.
func Entry(ti ledger.TaskIntent, dir string, site sites.Adapter) (calendar.Entry, error) {
	in, err := RequestOf(ti)
	if err != nil {
		return calendar.Entry{}, err
	}
	e := entryOf(in)
	e.ID, e.At = ti.ID, ti.CreatedAt
	if mp := e.ReadMedia(dir); mp != nil {
		return calendar.Entry{}, fmt.Errorf("%v; it is not performed while the file cannot be read", mp)
	}
	same := func(m intent.Media, it media.Item, at calendar.MediaSource) error {
		if m.SHA256 == it.SHA256 && m.Type == it.Type {
			return nil
		}
		return fmt.Errorf("media file %q (%s) changed since the intent was submitted; it is not performed "+
			"(restore the file to publish it, or cancel the task and submit the new file as a new intent)", at.File, at.Place)
	}
	for i, it := range e.Items {
		if err := same(in.Media[i], it, e.MediaAt[i]); err != nil {
			return calendar.Entry{}, err
		}
	}
	for p, items := range e.PartItems {
		for i, it := range items {
			if err := same(in.PartMedia[p][i], it, e.PartMediaAt[p][i]); err != nil {
				return calendar.Entry{}, err
			}
		}
	}
	if site != nil {
		if mp := calendar.RefuseMedia(site, e); mp != nil {
			return calendar.Entry{}, fmt.Errorf("%v; it is not performed", mp)
		}
		// The adapter may have changed since the intent was accepted.
		if _, err := site.RefuseFields(e.Type.Kind, e.Fields); err != nil {
			return calendar.Entry{}, fmt.Errorf("%v; it is not performed", err)
		}
	}
	return e, nil
}

// ErrUnreadable is a request or entry the ledger holds that does not
// decode: written by another program, or damaged. Its intent is not
// performed and has no outcome; the error names it.
var ErrUnreadable = errors.New("the ledger holds a request that does not decode")

// RequestOf is the request of a task intent, as the ledger holds it.
func RequestOf(ti ledger.TaskIntent) (intent.Request, error) {
	var in intent.Request
	if err := json.Unmarshal(ti.Request, &in); err != nil {
		return intent.Request{}, fmt.Errorf("%w: intent %s: %v", ErrUnreadable, ti.ID, err)
	}
	return in, nil
}

// State is a task's durable state as agents and people see it. It
// never holds raw tab ids, cookies, tokens or form values.
type State struct {
	ID     string `json:"id"`
	Title  string `json:"title,omitempty"`
	Source string `json:"source,omitempty"`
	Status string `json:"status"`
	// Finished: the task takes no more intents; it is done once every
	// intent is settled.
	Finished bool            `json:"finished"`
	Contract ledger.Contract `json:"contract"`
	Grants   []GrantState    `json:"grants"`
	// OwnerGeneration is the lease generation of the operator that last
	// acted on the task, ConnectionGeneration its browser connection then
	// (one more each time the operator connects again), and
	// InteractionGeneration the count of observe and act turns taken on
	// it through the task service (Observe, Submit): see ledger.ClaimTask
	// and ledger.TakeTurn.
	OwnerGeneration       int64  `json:"owner_generation"`
	ConnectionGeneration  int64  `json:"connection_generation"`
	InteractionGeneration int64  `json:"interaction_generation"`
	Interaction           string `json:"current_interaction"`
	Intents               int    `json:"intents"`
	// SubmittedIntent is, in the answer to a submission, the id of the
	// intent it accepted (or found, for the same intent again).
	SubmittedIntent string        `json:"submitted_intent,omitempty"`
	Actions         []ActionState `json:"actions"`
	// Tabs are the tab records the task's actions ran in, or that were
	// handed to the person for it, oldest first: never a raw target id.
	Tabs []TabState `json:"tabs"`
	// Continuity is what the agent that drives the task last reported of
	// itself (SetContinuity); nil before it reported any.
	Continuity *ledger.Continuity `json:"continuity,omitempty"`
	// Result, once the task is done or cancelled, lists each intent with
	// its outcome and permalink.
	Result    *Result        `json:"result,omitempty"`
	History   []HistoryEntry `json:"history"`
	CreatedAt time.Time      `json:"created_at"`
	UpdatedAt time.Time      `json:"updated_at"`
}

// TabState is one tab record a task used: its record number (as
// `browserop tabs show RECORD` takes it), its state and current
// inspection epoch, the epoch the task first used it in, the origin it is
// on (scheme and host only), and whether it is bound to the task (handed
// to the person for it). Never the browser's target id, never a path.
type TabState struct {
	Record     int64  `json:"record"`
	State      string `json:"state"`
	Epoch      int    `json:"inspection_epoch"`
	FirstEpoch int    `json:"first_epoch"`
	Origin     string `json:"origin,omitempty"`
	Bound      bool   `json:"bound,omitempty"`
}

func tabStates(tts []ledger.TaskTab, taskID string) []TabState {
	out := make([]TabState, 0, len(tts))
	for _, tt := range tts {
		out = append(out, TabState{Record: tt.ID, State: string(tt.State), Epoch: tt.Epoch, FirstEpoch: tt.FirstEpoch,
			Origin: originOf(tt.URL), Bound: tt.TaskID == taskID})
	}
	return out
}

// originOf is a URL's scheme and host ("" when it does not parse).
func originOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// GrantState is one grant.
type GrantState struct {
	Domain    string    `json:"domain"`
	GrantedBy string    `json:"granted_by"`
	At        time.Time `json:"at"`
}

// ActionState is one action and its effect state: pending,
// needs_confirmation, executing, known_complete, not_done, uncertain,
// moderated (made, held by the site's moderators, not public yet).
type ActionState struct {
	ID string `json:"id"`
	// IntentID is the intent the action performs (see IntentOutcome.ID).
	IntentID string `json:"intent_id"`
	Type     string `json:"type"`
	Status   string `json:"status"`
	Effect   string `json:"effect_state"`
	Attempt  int    `json:"attempt"`
	Result   string `json:"result,omitempty"`
	// Failure says, in fixed words, why a failed action failed: its
	// class and what happened, never what the page said.
	Failure string `json:"failure,omitempty"`
	// FailureClass is a failed action's class: definitive (the effect did
	// not occur; a later pass may try the intent again) or abandoned
	// (given up on: declined, cancelled, resolved absent).
	FailureClass string `json:"failure_class,omitempty"`
	// SiteWords is what the site or the adapter said of the failure (a
	// refusal's message, a step's detail: page text), in the person's
	// view only (the CLI, the person's API token); an agent's view never
	// has it (docs/api.md, "What leaves the machine").
	SiteWords    string `json:"site_words,omitempty"`
	Confirmation string `json:"confirmation,omitempty"`
	// Held says why a pass holds an answered action (the tab handed to
	// the person for it is not proven closed): docs/operator.md,
	// "Confirmations and the handed-off tab".
	Held string `json:"held,omitempty"`
	// EffectReason says, for an action not_done, why its effect is
	// definitely absent: proven_absent, absent_by_person,
	// rejected_by_moderators, declined, abandoned or never_performed
	// (the Reason constants). The effect_state stays not_done.
	EffectReason string `json:"effect_reason,omitempty"`
	// LastStop is, for a pending action, the last hard stop of a pass
	// that held it before its click (nobody signed in, another account,
	// a blocker screen...); none once it went ahead.
	LastStop *StopState `json:"last_stop,omitempty"`
}

// StopState is a hard stop that held a pending action (its cause in the
// person's view only: it is what the page showed): its kind (login,
// identity_mismatch, rate_limit..., or a pass-wide stop's reason), its
// cause as the pass reported it ("" for none), the two as one reason, the
// pass's run and when.
type StopState struct {
	Kind   string    `json:"kind"`
	Cause  string    `json:"cause,omitempty"`
	Reason string    `json:"reason"`
	RunID  string    `json:"run_id"`
	At     time.Time `json:"at"`
}

// HistoryEntry is one entry of a task's history.
type HistoryEntry struct {
	Kind   string    `json:"kind"`
	Detail string    `json:"detail"`
	At     time.Time `json:"at"`
}

func usage(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errcode.ErrUsage, fmt.Sprintf(format, args...))
}

// authorityErr turns an authority refusal into errcode.ErrForbidden and a
// malformed domain or URL into errcode.ErrUsage, keeping the reason (without the
// authority's own leading class name).
func authorityErr(err error) error {
	switch {
	case errors.Is(err, authority.ErrInvalid):
		return fmt.Errorf("%w: %s", errcode.ErrUsage, strings.TrimPrefix(err.Error(), authority.ErrInvalid.Error()+": "))
	case errors.Is(err, authority.ErrDenied):
		return fmt.Errorf("%w: %s", errcode.ErrForbidden, strings.TrimPrefix(err.Error(), authority.ErrDenied.Error()+": "))
	}
	return err
}

// Create creates a task idempotently: the same key and request return the
// original (created=false); the same key with another request is
// ledger.ErrConflict. An agent view records source api or mcp and keeps
// its keys in the agents' namespace; the person's view records
// SourcePerson in the person's namespace, so neither
// reaches the other's keys, nor the calendar's or the planner's. The
// contract's domains must lie within the ceiling (errcode.ErrForbidden).
func (s *Service) Create(ctx context.Context, key string, req CreateRequest, source string) (State, bool, error) {
	if strings.TrimSpace(key) == "" {
		return State{}, false, usage("an idempotency key is required")
	}
	ns := ledger.KeyPerson
	if s.agent {
		ns = ledger.KeyAgent
	}
	if s.agent != slices.Contains(agentSources, source) || !s.agent && source != SourcePerson {
		return State{}, false, fmt.Errorf("create task: source %q does not match the caller (agent view: %v)", source, s.agent)
	}
	if err := req.Contract.Validate(); err != nil {
		return State{}, false, usage("%v", err)
	}
	if s.ceilingErr != nil {
		return State{}, false, s.ceilingErr
	}
	if err := s.ceiling.CheckContract(req.Contract.Domains); err != nil {
		return State{}, false, authorityErr(err)
	}
	t, created, err := s.db.CreateTask(ctx, ns+key, ledger.TaskRequest{Title: req.Title, Source: source, Contract: req.Contract})
	if err != nil {
		return State{}, false, err
	}
	st, err := s.state(ctx, t)
	return st, created, err
}

// Get returns a task's state, or ledger.ErrNotFound.
func (s *Service) Get(ctx context.Context, id string) (State, error) {
	t, err := s.task(ctx, id)
	if err != nil {
		return State{}, err
	}
	return s.state(ctx, t)
}

// MaxList is the most tasks List returns; DefaultList is its default.
const (
	MaxList     = 1000
	DefaultList = 100
)

// List returns the newest tasks first, at most limit: 0 means
// DefaultList, and limit must be at most MaxList (errcode.ErrUsage otherwise). An
// agent view lists only agents' tasks.
func (s *Service) List(ctx context.Context, limit int) ([]State, error) {
	if limit < 0 || limit > MaxList {
		return nil, usage("limit must be from 1 to %d, got %d", MaxList, limit)
	}
	if limit == 0 {
		limit = DefaultList
	}
	var sources []string
	if s.agent {
		sources = agentSources
	}
	ts, err := s.db.ListTasks(ctx, limit, sources...)
	if err != nil {
		return nil, err
	}
	out := make([]State, 0, len(ts))
	for _, t := range ts {
		st, err := s.state(ctx, t)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// Cancel stops further mutations of a task. Done work is not undone, and
// no tab of the person is closed; the task's result says what was done.
// Cancelling twice is safe.
func (s *Service) Cancel(ctx context.Context, id, reason string) (State, error) {
	if reason == "" {
		reason = "cancelled"
	}
	t, err := s.task(ctx, id)
	if err != nil {
		return State{}, err
	}
	res, err := s.result(ctx, t, true)
	if err != nil {
		return State{}, err
	}
	err = s.db.SetTaskStatus(ctx, id, ledger.TaskCancelled, mustJSON(res), reason)
	if err != nil && !errors.Is(err, ledger.ErrIllegalTransition) {
		return State{}, err
	}
	return s.Get(ctx, id)
}

// Finish ends a task's intake: it accepts no more intents, and it becomes
// done, with its result, once every intent is settled (at once when they
// already are, else at the pass that settles the last). Finishing twice is
// safe; a cancelled or done task is errcode.ErrForbidden.
func (s *Service) Finish(ctx context.Context, id, reason string) (State, error) {
	if reason == "" {
		reason = "finished"
	}
	if _, err := s.task(ctx, id); err != nil {
		return State{}, err
	}
	if err := s.db.FinishTask(ctx, id, reason); err != nil {
		if errors.Is(err, ledger.ErrIllegalTransition) {
			t, gerr := s.db.GetTask(ctx, id)
			if gerr == nil && t.Status == ledger.TaskDone {
				return s.Get(ctx, id) // finishing a done task again is the same answer
			}
			return State{}, fmt.Errorf("%w: the task is %s", errcode.ErrForbidden, t.Status)
		}
		return State{}, err
	}
	t, err := s.db.GetTask(ctx, id)
	if err != nil {
		return State{}, err
	}
	if _, err := CompleteIfSettled(ctx, s.db, t, s.maxAttempts); err != nil {
		return State{}, err
	}
	return s.Get(ctx, id)
}

// CompleteIfSettled makes a finished (or calendar or planner) task done,
// with its result, when every intent it has is settled. It reports
// whether it did.
func CompleteIfSettled(ctx context.Context, db *ledger.DB, t ledger.Task, maxAttempts int) (bool, error) {
	if t.Status != ledger.TaskOpen {
		return false, nil
	}
	res, err := taskResult(ctx, db, t, maxAttempts)
	if err != nil {
		return false, err
	}
	entryTask := isEntryTask(t)
	if !entryTask && t.FinishedAt.IsZero() {
		return false, nil
	}
	if entryTask && len(res.Intents) == 0 {
		return false, nil
	}
	for _, o := range res.Intents {
		if !o.Settled() {
			return false, nil
		}
	}
	err = db.SetTaskStatus(ctx, t.ID, ledger.TaskDone, mustJSON(res), fmt.Sprintf("done: %d intents settled", len(res.Intents)))
	if errors.Is(err, ledger.ErrIllegalTransition) {
		return false, nil // cancelled meanwhile
	}
	return err == nil, err
}

// taskResult is every intent of t with its outcome.
func taskResult(ctx context.Context, db *ledger.DB, t ledger.Task, maxAttempts int) (Result, error) {
	acts, err := db.ListActions(ctx, ledger.ActionFilter{TaskID: t.ID})
	if err != nil {
		return Result{}, err
	}
	groups := byIntent(acts)
	res := Result{Intents: []IntentOutcome{}}
	if isEntryTask(t) {
		ref, err := entryRef(t)
		if err != nil {
			return Result{}, err
		}
		if len(groups[ref.id]) > 0 {
			res.Intents = append(res.Intents, outcomeOf(ref, groups[ref.id], maxAttempts))
		}
		return res, withReasons(ctx, db, res)
	}
	intents, err := db.TaskIntents(ctx, t.ID)
	if err != nil {
		return Result{}, err
	}
	for _, ti := range intents {
		ref, err := refOf(ti)
		if err != nil {
			return Result{}, err
		}
		res.Intents = append(res.Intents, outcomeOf(ref, groups[ref.id], maxAttempts))
	}
	return res, withReasons(ctx, db, res)
}

// withReasons gives each intent of res that is not done for a failed
// action the reason its effect is definitely absent.
func withReasons(ctx context.Context, db *ledger.DB, res Result) error {
	for i, o := range res.Intents {
		if o.Outcome != OutcomeNotDone || o.failed.ID == "" {
			continue
		}
		r, err := absentReason(ctx, db, o.failed)
		if err != nil {
			return err
		}
		res.Intents[i].Reason = r
	}
	return nil
}

// result is t's result; cancelled, what was not performed is not done.
func (s *Service) result(ctx context.Context, t ledger.Task, cancelled bool) (Result, error) {
	res, err := taskResult(ctx, s.db, t, s.maxAttempts)
	if err != nil {
		return Result{}, err
	}
	if cancelled {
		for i, o := range res.Intents {
			res.Intents[i] = cancelledOutcome(o)
		}
	}
	return res, nil
}

// isEntryTask reports whether t is a calendar entry's or a planner
// candidate's task: its one intent is that entry, performed by the pass.
func isEntryTask(t ledger.Task) bool {
	return t.Request.Source == SourceCalendar || t.Request.Source == SourcePlanner
}

func entryWord(t ledger.Task) string {
	if t.Request.Source == SourcePlanner {
		return "candidate"
	}
	return "entry"
}

// Submit adds an intent to an open, unfinished task after checking it
// against the authority: the capability is allowed, the site and target
// are within the effective domains (contract plus grants, within the
// ceiling), and the side-effect bound holds, counted in the transaction
// that accepts it. A violation is errcode.ErrForbidden with the reason. The media
// files it names are read from the media directory (WithMediaDir) and
// checked against the site's limits: a file outside it, missing,
// unreadable or not an image, or one the site does not take, is errcode.ErrUsage
// naming the file. Each file's SHA-256 and type are recorded with the
// intent. The same intent twice (with the same file bytes) is one intent.
// The answer names the intent (SubmittedIntent). A submission is an act
// turn: the task's interaction generation grows by one (see SubmitAt).
func (s *Service) Submit(ctx context.Context, taskID string, in intent.Request) (State, error) {
	return s.SubmitAt(ctx, taskID, in, 0)
}

// SubmitAt is Submit for a caller that read the task at interaction
// generation at (0: any): when another turn was taken on the task since,
// it is refused with a *ledger.StaleError (errors.Is
// ledger.ErrStaleGeneration), and nothing is submitted.
func (s *Service) SubmitAt(ctx context.Context, taskID string, in intent.Request, at int64) (State, error) {
	if at < 0 {
		return State{}, usage("interaction_generation must be 1 or more, got %d", at)
	}
	t, err := s.task(ctx, taskID)
	if err != nil {
		return State{}, err
	}
	if t.Status != ledger.TaskOpen {
		return State{}, fmt.Errorf("%w: the task is %s", errcode.ErrForbidden, t.Status)
	}
	if !t.FinishedAt.IsZero() {
		return State{}, fmt.Errorf("%w: the task is finished and accepts no more intents", errcode.ErrForbidden)
	}
	if isEntryTask(t) {
		// Its one intent is its calendar entry or planner candidate; its
		// result and its end know no other.
		return State{}, fmt.Errorf("%w: a %s task takes no intents but its own %s", errcode.ErrForbidden, t.Request.Source, entryWord(t))
	}
	in = in.Normalized()
	if p := in.Check("part_media"); p != nil {
		return State{}, usage("%v", p)
	}
	site, ok := s.sites[in.Site]
	if !ok {
		return State{}, usage("site %q is not configured", in.Site)
	}
	if s.ceilingErr != nil {
		return State{}, s.ceilingErr
	}
	if err := s.ceiling.Check(AuthorityOf(t), site, in.Target, in.Type.Capability()); err != nil {
		return State{}, authorityErr(err)
	}
	if _, err := site.RefuseFields(in.Type.Kind, in.Fields); err != nil {
		return State{}, usage("%v", err)
	}
	// Read after the authority check: a request outside it learns nothing
	// of the media directory.
	in, err = s.withMedia(in, site)
	if err != nil {
		return State{}, err
	}
	if _, err := s.db.TakeTurn(ctx, taskID, at); err != nil {
		return State{}, err
	}
	ti, _, err := s.db.AddTaskIntent(ctx, taskID, in, in.Effects())
	switch {
	case errors.Is(err, ledger.ErrSideEffectBound):
		return State{}, fmt.Errorf("%w: %s", errcode.ErrForbidden, errcode.After(err, ledger.ErrSideEffectBound))
	case errors.Is(err, ledger.ErrIllegalTransition):
		return State{}, fmt.Errorf("%w: %s", errcode.ErrForbidden, errcode.After(err, ledger.ErrIllegalTransition))
	case err != nil:
		return State{}, err
	}
	st, err := s.Get(ctx, taskID)
	st.SubmittedIntent = ti.ID
	return st, err
}

// AuthorityOf is the authority a task was given.
func AuthorityOf(t ledger.Task) authority.Task {
	a := authority.Task{Capabilities: t.Contract.Capabilities, Domains: t.Contract.Domains}
	for _, g := range t.Grants {
		a.Grants = append(a.Grants, g.Domain)
	}
	return a
}

func mustJSON(v any) json.RawMessage {
	raw, _ := json.Marshal(v)
	return raw
}

// Grant records a domain a person approved for one task. It must lie
// within the configured ceiling (errcode.ErrForbidden; with no ceiling configured
// no grant is possible); the contract never changes. Only a person calls
// it (CLI, or REST with the user's token).
func (s *Service) Grant(ctx context.Context, taskID, domain, by string) (State, error) {
	if s.ceilingErr != nil {
		return State{}, s.ceilingErr
	}
	d, err := s.ceiling.CheckGrant(domain)
	if err != nil {
		return State{}, authorityErr(err)
	}
	t, err := s.task(ctx, taskID)
	if err != nil {
		return State{}, err
	}
	if t.Status != ledger.TaskOpen {
		return State{}, fmt.Errorf("%w: the task is %s", errcode.ErrForbidden, t.Status)
	}
	if err := s.db.AddGrant(ctx, taskID, d.String(), by); err != nil {
		return State{}, err
	}
	return s.Get(ctx, taskID)
}

// Confirm lets a prepared action that needs confirmation go on at the next
// pass; Decline ends it as not done. Only a person calls them.
func (s *Service) Confirm(ctx context.Context, actionID, by string) (ActionState, error) {
	return s.answer(ctx, actionID, ledger.ConfirmConfirmed, by, "")
}

// Decline ends a prepared action as not done (see Confirm).
func (s *Service) Decline(ctx context.Context, actionID, by, reason string) (ActionState, error) {
	return s.answer(ctx, actionID, ledger.ConfirmDeclined, by, reason)
}

func (s *Service) answer(ctx context.Context, actionID, state, by, reason string) (ActionState, error) {
	if _, err := s.db.AnswerConfirmation(ctx, actionID, state, by, reason); err != nil {
		return ActionState{}, err
	}
	a, err := s.db.GetAction(ctx, actionID)
	if err != nil {
		return ActionState{}, err
	}
	return s.actionState(ctx, a)
}

// Resolution is a person's word on an ambiguous or moderated action.
type Resolution struct {
	// VerifiedURL, when set, is where the effect is on the site.
	VerifiedURL string
	// Reason says how the person knows; required for an absent one.
	Reason string
	// Retry, for an absent one, asks for the intent to be tried again: the
	// action ends failed as a definitive failure, which a later pass
	// replans, instead of abandoned (settled, never tried again).
	Retry bool
}

// Resolve settles an ambiguous or moderated action on a person's word: the
// effect is at r.VerifiedURL, or (no URL) it is absent for r.Reason, and
// then, with r.Retry, to be tried again by a later pass. It is the one
// route of the CLI and REST: a verified URL must be on the action's site
// (errcode.ErrUsage), and the verified effect counts against the budget as the
// operator's verification would. A retry is errcode.ErrUsage, and changes
// nothing, with a verified URL or when the action has had the most
// attempts a pass makes (no pass would try it again). A resolution of an
// action that is neither ambiguous nor moderated is
// ledger.ErrIllegalTransition.
func (s *Service) Resolve(ctx context.Context, actionID string, r Resolution) (ActionState, error) {
	c := ledger.Change{To: ledger.Failed, Class: ledger.Abandoned, Reason: "absent by a person: " + r.Reason}
	switch {
	case r.VerifiedURL != "" && r.Retry:
		return ActionState{}, usage("a retry is for an absent effect, not a verified one")
	case r.VerifiedURL != "":
		a, err := s.db.GetAction(ctx, actionID)
		if err != nil {
			return ActionState{}, err
		}
		var site authority.Site
		if ad, ok := s.sites[a.Site]; ok {
			site = ad
		}
		if err := authority.CheckResult(site, a.TargetURL, r.VerifiedURL); err != nil {
			return ActionState{}, authorityErr(err)
		}
		c = ledger.Change{To: ledger.Verified, Result: r.VerifiedURL, Reason: "verified by a person", Budget: s.policy}
		if strings.TrimSpace(r.Reason) != "" {
			c.Reason += ": " + r.Reason
		}
	case strings.TrimSpace(r.Reason) == "":
		return ActionState{}, usage("an absent resolution needs a reason")
	case r.Retry:
		a, err := s.db.GetAction(ctx, actionID)
		if err != nil {
			return ActionState{}, err
		}
		if a.Attempt >= s.maxAttempts {
			return ActionState{}, usage("action %s has had %d attempts, the most a pass makes: it would not be tried again; "+
				"resolve it absent without retry (it is settled as not done) and submit the intent anew", a.ID, a.Attempt)
		}
		c = ledger.Change{To: ledger.Failed, Class: ledger.Definitive, Reason: "absent by a person, to be tried again: " + r.Reason}
	}
	a, err := s.db.Resolve(ctx, actionID, c)
	if err != nil {
		return ActionState{}, err
	}
	return s.actionState(ctx, a)
}

// Observation is a value-free summary of what a task's tab shows: which
// site and origin it is on, its state and inspection epoch, and what waits
// for a person. No page text, form values or tab ids.
type Observation struct {
	TaskID string `json:"task_id"`
	Status string `json:"status"`
	Tab    string `json:"tab"` // none, opening, live, handoff, missing, closed_verified, closure_unverified
	// TabRecord is the tab record Tab describes (0 for none).
	TabRecord     int64    `json:"tab_record,omitempty"`
	Origin        string   `json:"origin,omitempty"`
	Epoch         int      `json:"inspection_epoch,omitempty"`
	Waiting       []string `json:"waiting_for_person,omitempty"` // action ids needing confirmation or resolution
	PendingIntent int      `json:"pending_intents"`
	// InteractionGeneration is the turn this observation took: pass it
	// with the next submission (SubmitAt) to have it refused if another
	// turn was taken on the task since.
	InteractionGeneration int64 `json:"interaction_generation"`
}

// Observe returns the task's Observation from the ledger. Pending intents
// are counted by intent (a thread is one), not by action. An observation
// is a turn: the task's interaction generation grows by one.
func (s *Service) Observe(ctx context.Context, taskID string) (Observation, error) {
	if _, err := s.task(ctx, taskID); err != nil {
		return Observation{}, err
	}
	turn, err := s.db.TakeTurn(ctx, taskID, 0)
	if err != nil {
		return Observation{}, err
	}
	t, err := s.task(ctx, taskID)
	if err != nil {
		return Observation{}, err
	}
	st, err := s.state(ctx, t)
	if err != nil {
		return Observation{}, err
	}
	o := Observation{TaskID: taskID, Status: st.Status, Tab: "none", InteractionGeneration: turn}
	if n := len(st.Tabs); n > 0 {
		// The record the task's newest action ran in (or was handed off in).
		last := st.Tabs[n-1]
		for _, tb := range st.Tabs {
			if tb.Record > last.Record {
				last = tb
			}
		}
		o.Tab, o.Epoch, o.Origin, o.TabRecord = last.State, last.Epoch, last.Origin, last.Record
	}
	for _, a := range st.Actions {
		if a.Effect == "needs_confirmation" || a.Effect == "uncertain" {
			o.Waiting = append(o.Waiting, a.ID)
		}
	}
	if t.Status == ledger.TaskOpen {
		res, err := s.result(ctx, t, false)
		if err != nil {
			return Observation{}, err
		}
		for _, io := range res.Intents {
			if io.Outcome == OutcomePending {
				o.PendingIntent++
			}
		}
	}
	return o, nil
}

func (s *Service) state(ctx context.Context, t ledger.Task) (State, error) {
	st := State{ID: t.ID, Title: t.Request.Title, Source: t.Request.Source, Status: t.Status, Contract: t.Contract,
		Finished: !t.FinishedAt.IsZero() || t.Status == ledger.TaskDone,
		Grants:   []GrantState{}, Tabs: []TabState{}, Continuity: t.Continuity, OwnerGeneration: t.OwnerGeneration, ConnectionGeneration: t.ConnectionGeneration,
		InteractionGeneration: t.InteractionGeneration, Actions: []ActionState{}, History: []HistoryEntry{},
		CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt, Interaction: "idle"}
	for _, g := range t.Grants {
		st.Grants = append(st.Grants, GrantState{Domain: g.Domain, GrantedBy: g.GrantedBy, At: g.CreatedAt})
	}
	tts, err := s.db.TaskTabs(ctx, t.ID)
	if err != nil {
		return State{}, err
	}
	st.Tabs = tabStates(tts, t.ID)
	intents, err := s.db.TaskIntents(ctx, t.ID)
	if err != nil {
		return State{}, err
	}
	st.Intents = len(intents)
	if isEntryTask(t) {
		st.Intents = 1 // the entry
	}
	acts, err := s.db.ListActions(ctx, ledger.ActionFilter{TaskID: t.ID})
	if err != nil {
		return State{}, err
	}
	for _, a := range acts {
		as, err := s.actionState(ctx, a)
		if err != nil {
			return State{}, err
		}
		st.Actions = append(st.Actions, as)
		switch {
		case as.Effect == "needs_confirmation":
			st.Interaction = "waiting_for_confirmation"
		case as.Effect == "uncertain" && st.Interaction == "idle":
			st.Interaction = "waiting_for_reconciliation"
		case as.Effect == "executing" && st.Interaction == "idle":
			st.Interaction = "acting"
		case as.Effect == "moderated" && st.Interaction == "idle":
			st.Interaction = "waiting_for_moderation"
		}
	}
	if t.Status != ledger.TaskOpen {
		// Read afresh: a person may have resolved an effect since.
		res, err := s.result(ctx, t, t.Status == ledger.TaskCancelled)
		if err != nil {
			return State{}, err
		}
		st.Result = &res
	}
	evs, err := s.db.TaskEvents(ctx, t.ID)
	if err != nil {
		return State{}, err
	}
	for _, e := range evs {
		st.History = append(st.History, HistoryEntry{Kind: e.Kind, Detail: e.Detail, At: e.At})
	}
	return st, nil
}

func (s *Service) actionState(ctx context.Context, a ledger.Action) (ActionState, error) {
	as := ActionState{ID: a.ID, IntentID: a.IntentID, Type: string(a.Type), Status: string(a.Status), Attempt: a.Attempt, Result: a.CanonicalResult}
	if a.Status == ledger.Failed {
		as.Failure = a.FailureReason
		as.FailureClass = string(a.FailureClass)
		if !s.agent {
			as.SiteWords = a.FailureSiteWords
		}
	}
	if st := a.LastStop; st != nil {
		as.LastStop = &StopState{Kind: st.Kind, Cause: st.Cause, Reason: st.Reason(), RunID: st.RunID, At: st.At}
		if s.agent {
			// The cause is what the page showed (who is signed in, a
			// control's text, a blocker's words): the person's only.
			vf := *st
			vf.Cause = ""
			as.LastStop.Cause, as.LastStop.Reason = "", vf.Reason()
		}
	}
	if c, err := s.db.GetConfirmation(ctx, a.ID); err == nil {
		as.Confirmation = c.State
		if a.Status == ledger.Planned {
			as.Held = c.Held
		}
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
		r, err := absentReason(ctx, s.db, a)
		if err != nil {
			return ActionState{}, err
		}
		as.EffectReason = r
	case ledger.Ambiguous:
		as.Effect = "uncertain"
	case ledger.Moderated:
		as.Effect = "moderated"
	}
	return as, nil
}

// SetContinuity records what the agent driving task id reports of itself
// (ledger.Continuity): its planner and executor with their fallbacks, its
// subgoal and success criteria, its observation mode and scope, its
// confidence and escalation reason, its step and duration limits with
// their counters, and its skill. It replaces the earlier report. A field
// that is wrong is errcode.ErrUsage naming it: a scope domain outside the
// task's domains (contract plus grants), a limit that would widen the
// one held (a limit only narrows), a counter that goes back. It never
// changes the task's authority: no check reads it. at is the interaction
// generation the caller last read (0: any); another is a
// *ledger.StaleError. A task that is not open is errcode.ErrForbidden.
func (s *Service) SetContinuity(ctx context.Context, id string, c ledger.Continuity, at int64) (State, error) {
	if at < 0 {
		return State{}, usage("interaction_generation must be 1 or more, got %d", at)
	}
	if _, err := s.task(ctx, id); err != nil {
		return State{}, err
	}
	_, err := s.db.SetContinuity(ctx, id, c, at)
	switch {
	case errors.Is(err, ledger.ErrContinuity):
		return State{}, fmt.Errorf("%w: %s", errcode.ErrUsage, errcode.After(err, ledger.ErrContinuity))
	case errors.Is(err, ledger.ErrIllegalTransition):
		return State{}, fmt.Errorf("%w: %s", errcode.ErrForbidden, errcode.After(err, ledger.ErrIllegalTransition))
	case err != nil:
		return State{}, err
	}
	return s.Get(ctx, id)
}
