// Package mcptools is browserop's MCP server: the tools through which an
// external agent (an LLM client) creates durable tasks, submits intents
// under a task's contract, reads task state, observes a task's tab and
// cancels a task.
//
// What only a person may do (grant a domain, confirm or decline a prepared
// action, resolve an ambiguous one) has no tool here: a person does it with
// the CLI, the dashboard, or the REST API with the user's token.
//
// No tool result carries raw tab ids, cookies, tokens or form values: the
// results are tasks.State and tasks.Observation, which are built
// without them.
package mcptools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browserop/browserop/errcode"
	"github.com/browserop/browserop/intent"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/tasks"
)

// Source is the source recorded on tasks created over MCP.
const Source = tasks.SourceMCP

// The tool names: the whole of what an agent can do over MCP.
const (
	ToolTaskCreate  = "task_create"
	ToolTaskState   = "task_state"
	ToolTaskList    = "task_list"
	ToolTaskSubmit  = "task_submit"
	ToolTaskCancel  = "task_cancel"
	ToolTaskFinish  = "task_finish"
	ToolTaskObserve = "task_observe"
	// ToolTaskContinuity records the agent's own continuity on a task.
	ToolTaskContinuity = "task_continuity"
)

// ToolNames lists the tools NewServer registers, in registration order.
var ToolNames = []string{ToolTaskCreate, ToolTaskState, ToolTaskList, ToolTaskSubmit, ToolTaskCancel, ToolTaskFinish, ToolTaskObserve, ToolTaskContinuity}

// instructions tells a client what the server is for and where its
// authority ends.
const instructions = `browserop publishes posts, replies, threads, likes and follows through the person's own signed-in browser, exactly once, under durable tasks.

Workflow: task_create (with an idempotency key you keep, and a contract: the domains and capabilities the task may use) -> task_submit one intent at a time (the answer's submitted_intent names it; each action's intent_id says which intent it performs) -> task_finish when you will submit no more -> task_state or task_observe to follow it, until its status is done and its result lists each intent's outcome and permalink. browserop's operator performs submitted intents at its next pass; an intent is not published when task_submit returns.

Retrying task_create with the same key and the same request returns the same task, so a lost answer is safe to retry; the same key with a different request is a conflict. Submitting the same intent twice is one intent.

Your authority is the task's contract. Some steps belong to the person alone and have no tool: approving extra domains, answering actions that wait for the person (see waiting_for_person in task_observe), and settling actions whose effect is uncertain. When a task waits for the person, tell them; do not resubmit the intent.

Errors start with a stable code: usage, forbidden, not_found, conflict, stale_generation (another turn was taken on the task since the interaction_generation you passed: read its state again), illegal_transition, internal.`

// NewServer returns browserop's MCP server over tasks, with the eight task
// tools. The tools always act as an agent (tasks.Agent()): they see only
// agents' tasks, whichever token reached them. version is browserop's
// version, reported to clients.
func NewServer(tasks *tasks.Service, version string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "browserop", Title: "browserop", Version: version},
		&mcp.ServerOptions{Instructions: instructions, Capabilities: &mcp.ServerCapabilities{}})
	s.AddReceivingMiddleware(strictArguments, codedToolErrors)
	t := &tools{tasks: tasks.Agent()}

	mcp.AddTool(s, &mcp.Tool{
		Name:  ToolTaskCreate,
		Title: "Create a task",
		Description: "Create a durable browserop task, idempotently, and return its state. " +
			"The contract is the task's immutable authority: the domains it may act on and the capabilities it may use " +
			"(post, reply, thread, like, follow, navigate), the capabilities whose actions must wait for the person before they run, " +
			"and an optional bound on the number of side effects. Keep the idempotency key: calling again with the same key and " +
			"the same request returns the same task (with _meta browserop/created false); the same key with a different request fails with conflict.",
		InputSchema:  createInputSchema(),
		OutputSchema: taskStateSchema(),
		Annotations:  &mcp.ToolAnnotations{Title: "Create a task", IdempotentHint: true, DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
	}, t.create)

	mcp.AddTool(s, &mcp.Tool{
		Name:  ToolTaskState,
		Title: "Task state",
		Description: "Return a task's durable state: status, contract, domains added for this task, how many intents were submitted, " +
			"each action with its effect state (pending, needs_confirmation, executing, known_complete, not_done, uncertain, moderated) and " +
			"permalink when known, the current interaction and the task's history. Use it to resume after a reconnect.",
		InputSchema:  inputSchema[TaskIDInput](),
		OutputSchema: taskStateSchema(),
		Annotations:  &mcp.ToolAnnotations{Title: "Task state", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)},
	}, t.state)

	mcp.AddTool(s, &mcp.Tool{
		Name:         ToolTaskList,
		Title:        "List tasks",
		Description:  "List your browserop tasks, newest first, with their state (at most limit, 1 to 1000, default 100).",
		InputSchema:  listInputSchema(),
		OutputSchema: outputSchema[TaskList](),
		Annotations:  &mcp.ToolAnnotations{Title: "List tasks", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)},
	}, t.list)

	mcp.AddTool(s, &mcp.Tool{
		Name:  ToolTaskSubmit,
		Title: "Submit an intent",
		Description: "Submit one intent to an open task: publish a post, a reply to target, a thread of parts, " +
			"like or follow target, on a configured site, as the signed-in actor. It is checked against the task's contract " +
			"(the capability must be allowed, the site and target must lie within the task's domains, the side-effect bound must hold); " +
			"a violation is a forbidden error with the reason, and nothing is queued. A post or reply may attach images (media), " +
			"a thread's parts theirs (part_media): files already in browserop's media directory, each with its alt text; " +
			"a file outside it, missing, not an image, or one the site does not take is a usage error naming the file. " +
			"The file's bytes are fixed at submission: if it changes before the intent is performed, it is not performed. " +
			"The operator performs the intent exactly once at its next pass; " +
			"follow it with task_state. Submitting the same intent twice is one intent.",
		InputSchema:  submitInputSchema(),
		OutputSchema: taskStateSchema(),
		Annotations:  &mcp.ToolAnnotations{Title: "Submit an intent", IdempotentHint: true, DestructiveHint: ptr(false), OpenWorldHint: ptr(true)},
	}, t.submit)

	mcp.AddTool(s, &mcp.Tool{
		Name:  ToolTaskCancel,
		Title: "Cancel a task",
		Description: "Cancel a task: no further action of it is performed. What is already published stays published, " +
			"and no tab of the person is closed. Cancelling twice is safe.",
		InputSchema:  inputSchema[CancelInput](),
		OutputSchema: taskStateSchema(),
		Annotations:  &mcp.ToolAnnotations{Title: "Cancel a task", IdempotentHint: true, DestructiveHint: ptr(true), OpenWorldHint: ptr(false)},
	}, t.cancel)

	mcp.AddTool(s, &mcp.Tool{
		Name:  ToolTaskFinish,
		Title: "Finish a task",
		Description: "Finish a task: it accepts no more intents. Once every intent it has reached its final outcome, its status becomes done and its result " +
			"lists each intent (by the id task_submit answered) with its outcome (known_complete, not_done) and permalink. " +
			"Finishing twice is safe; a cancelled task cannot be finished.",
		InputSchema:  inputSchema[FinishInput](),
		OutputSchema: taskStateSchema(),
		Annotations:  &mcp.ToolAnnotations{Title: "Finish a task", IdempotentHint: true, DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
	}, t.finish)

	mcp.AddTool(s, &mcp.Tool{
		Name:  ToolTaskObserve,
		Title: "Observe a task's tab",
		Description: "Return a value-free summary of what the task's browser tab shows: its state (none, live, handoff, missing, " +
			"closed_verified, closure_unverified), its origin and inspection epoch, the actions waiting for the person, and how many " +
			"submitted intents are still pending. It never returns page text, form values or tab ids.",
		InputSchema:  inputSchema[TaskIDInput](),
		OutputSchema: observationSchema(),
		Annotations:  &mcp.ToolAnnotations{Title: "Observe a task's tab", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)},
	}, t.observe)

	mcp.AddTool(s, &mcp.Tool{
		Name:  ToolTaskContinuity,
		Title: "Record your continuity",
		Description: "Record on a task what you (the agent driving it) need to resume it: your planner and executor identities with " +
			"their fallbacks, the current subgoal and its success criteria, your observation mode (summary, state or none) and scope " +
			"(domains within the task's, or site names), your confidence (0 to 1) and escalation reason, your step and duration limits " +
			"with their counters, and the skill id and version you run. It replaces what you recorded before; task_state shows it. " +
			"A limit only narrows (never raised or removed once set) and a counter never goes back. It never changes the task's " +
			"authority: its contract and the domains the person added decide what it may do. A field that is wrong is a usage error naming it.",
		InputSchema:  continuityInputSchema(),
		OutputSchema: taskStateSchema(),
		Annotations:  &mcp.ToolAnnotations{Title: "Record your continuity", IdempotentHint: true, DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
	}, t.continuity)

	return s
}

// HTTPHandler serves server over MCP's streamable HTTP transport,
// statelessly (no session is kept between requests: every tool call stands
// on its own). It rejects, like the SDK does by default, a request that
// arrived on a loopback address with a foreign Host header, and any
// cross-origin browser request. It does not check a bearer token: mount it
// behind the API layer's token and origin checks. A batch of more than
// MaxBatch requests is refused with a JSON-RPC error, and no answer is
// longer than MaxAnswer bytes.
func HTTPHandler(server *mcp.Server) http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{Stateless: true})
	return http.NewCrossOriginProtection().Handler(boundBatches(h))
}

// ContractInput is a task's contract as an agent writes it.
type ContractInput struct {
	Domains        []string `json:"domains" jsonschema:"the lowercase host names the task may act on, e.g. 127.0.0.1 or example.com; each must lie within browserop's configured ceiling"`
	Capabilities   []string `json:"capabilities" jsonschema:"what the task may do"`
	Confirm        []string `json:"confirm,omitempty" jsonschema:"capabilities (a subset of capabilities) whose actions wait for the person's explicit approval before they run"`
	MaxSideEffects int      `json:"max_side_effects,omitempty" jsonschema:"the most external effects the task may cause (a thread counts one per part); 0 or absent means no bound"`
}

// CreateInput is task_create's input.
type CreateInput struct {
	IdempotencyKey string        `json:"idempotency_key" jsonschema:"a key you choose and keep for this task; retrying with the same key and request returns the same task"`
	Title          string        `json:"title,omitempty" jsonschema:"a short human-readable title"`
	Contract       ContractInput `json:"contract" jsonschema:"the task's immutable authority"`
}

// TaskIDInput names a task.
type TaskIDInput struct {
	TaskID string `json:"task_id" jsonschema:"the task's id, as task_create returned it"`
}

// ListInput is task_list's input.
type ListInput struct {
	Limit int `json:"limit,omitempty" jsonschema:"the most tasks to return, 1 to 1000; absent means 100"`
}

// TaskList is task_list's output.
type TaskList struct {
	Tasks []tasks.State `json:"tasks"`
}

// SubmitInput is task_submit's input.
type SubmitInput struct {
	TaskID string         `json:"task_id" jsonschema:"the task's id"`
	Intent intent.Request `json:"intent" jsonschema:"the intent to perform"`
	// InteractionGeneration fences the submission (tasks.Service.SubmitAt).
	InteractionGeneration int64 `json:"interaction_generation,omitempty" jsonschema:"the task's interaction_generation you last read (task_state or task_observe); the submission is refused with stale_generation if another turn was taken on the task since. Absent: no check"`
}

// ContinuityInput is task_continuity's input.
type ContinuityInput struct {
	TaskID     string            `json:"task_id" jsonschema:"the task's id"`
	Continuity ledger.Continuity `json:"continuity" jsonschema:"what you need to resume the task; it replaces what you recorded before"`
	// InteractionGeneration fences the report as it fences a submission.
	InteractionGeneration int64 `json:"interaction_generation,omitempty" jsonschema:"the task's interaction_generation you last read; the report is refused with stale_generation if another turn was taken on the task since. Absent: no check"`
}

// FinishInput is task_finish's input.
type FinishInput struct {
	TaskID string `json:"task_id" jsonschema:"the task's id"`
	Reason string `json:"reason,omitempty" jsonschema:"why, recorded in the task's history"`
}

// CancelInput is task_cancel's input.
type CancelInput struct {
	TaskID string `json:"task_id" jsonschema:"the task's id"`
	Reason string `json:"reason,omitempty" jsonschema:"why, recorded in the task's history"`
}

type tools struct{ tasks *tasks.Service }

func (t *tools) create(ctx context.Context, _ *mcp.CallToolRequest, in CreateInput) (*mcp.CallToolResult, tasks.State, error) {
	req := tasks.CreateRequest{Title: in.Title, Contract: ledger.Contract{Domains: in.Contract.Domains,
		Capabilities: in.Contract.Capabilities, Confirm: in.Contract.Confirm, MaxSideEffects: in.Contract.MaxSideEffects}}
	st, created, err := t.tasks.Create(ctx, in.IdempotencyKey, req, Source)
	if err != nil {
		return nil, tasks.State{}, coded(err)
	}
	return &mcp.CallToolResult{Meta: mcp.Meta{"browserop/created": created}}, normalize(st), nil
}

func (t *tools) state(ctx context.Context, _ *mcp.CallToolRequest, in TaskIDInput) (*mcp.CallToolResult, tasks.State, error) {
	st, err := t.tasks.Get(ctx, in.TaskID)
	return nil, normalize(st), coded(err)
}

func (t *tools) list(ctx context.Context, _ *mcp.CallToolRequest, in ListInput) (*mcp.CallToolResult, TaskList, error) {
	ts, err := t.tasks.List(ctx, in.Limit)
	if err != nil {
		return nil, TaskList{}, coded(err)
	}
	out := TaskList{Tasks: make([]tasks.State, 0, len(ts))}
	for _, st := range ts {
		out.Tasks = append(out.Tasks, normalize(st))
	}
	return nil, out, nil
}

func (t *tools) submit(ctx context.Context, _ *mcp.CallToolRequest, in SubmitInput) (*mcp.CallToolResult, tasks.State, error) {
	st, err := t.tasks.SubmitAt(ctx, in.TaskID, in.Intent, in.InteractionGeneration)
	return nil, normalize(st), coded(err)
}

func (t *tools) cancel(ctx context.Context, _ *mcp.CallToolRequest, in CancelInput) (*mcp.CallToolResult, tasks.State, error) {
	st, err := t.tasks.Cancel(ctx, in.TaskID, byAgent("cancelled", in.Reason))
	return nil, normalize(st), coded(err)
}

func (t *tools) finish(ctx context.Context, _ *mcp.CallToolRequest, in FinishInput) (*mcp.CallToolResult, tasks.State, error) {
	st, err := t.tasks.Finish(ctx, in.TaskID, byAgent("finished", in.Reason))
	return nil, normalize(st), coded(err)
}

// byAgent is the task history's reason for what the agent did over MCP,
// as the REST API records it ("cancelled by the agent (api): ...").
func byAgent(verb, reason string) string {
	out := verb + " by the agent (mcp)"
	if reason != "" {
		out += ": " + reason
	}
	return out
}

func (t *tools) continuity(ctx context.Context, _ *mcp.CallToolRequest, in ContinuityInput) (*mcp.CallToolResult, tasks.State, error) {
	st, err := t.tasks.SetContinuity(ctx, in.TaskID, in.Continuity, in.InteractionGeneration)
	return nil, normalize(st), coded(err)
}

func (t *tools) observe(ctx context.Context, _ *mcp.CallToolRequest, in TaskIDInput) (*mcp.CallToolResult, tasks.Observation, error) {
	o, err := t.tasks.Observe(ctx, in.TaskID)
	return nil, o, coded(err)
}

// normalize makes st's required arrays empty rather than null, as the
// output schema says. (Optional ones are omitted when empty.)
func normalize(st tasks.State) tasks.State {
	st.Contract.Domains = orEmpty(st.Contract.Domains)
	st.Contract.Capabilities = orEmpty(st.Contract.Capabilities)
	st.Grants = orEmpty(st.Grants)
	st.Actions = orEmpty(st.Actions)
	st.History = orEmpty(st.History)
	st.Tabs = orEmpty(st.Tabs)
	return st
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// ToolError is a tool's failure as the agent sees it: the stable code of
// errcode.Of and the reason. Its text is "code: reason".
type ToolError struct {
	Code string
	Err  error
}

func (e *ToolError) Error() string { return e.Code + ": " + errcode.Reason(e.Err) }

func (e *ToolError) Unwrap() error { return e.Err }

// coded wraps err (nil stays nil) in a ToolError with its stable code.
func coded(err error) error {
	if err == nil {
		return nil
	}
	return &ToolError{Code: Code(err), Err: err}
}

// Code is err's stable code (errcode.Of): "forbidden", "conflict",
// "not_found", "usage"...
func Code(err error) string { return errcode.Of(err).Code }

// codedToolErrors gives every tool error a stable code: a failure the SDK
// reports before a handler runs (arguments that do not match the input
// schema) is a usage error.
func codedToolErrors(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		r, ok := res.(*mcp.CallToolResult)
		if err != nil || !ok || r == nil || !r.IsError {
			return res, err
		}
		var te *ToolError
		if errors.As(r.GetError(), &te) {
			return res, err
		}
		for _, c := range r.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				tc.Text = "usage: " + tc.Text
				break
			}
		}
		return res, err
	}
}

// strictArguments refuses tool arguments that name a field twice (JSON
// decoders keep the last, so a reviewer and browserop could read two
// different requests). Field names are matched case-sensitively by the
// SDK already, and unknown ones are refused by the input schemas.
func strictArguments(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if r, ok := req.(*mcp.CallToolRequest); ok && r.Params != nil && len(r.Params.Arguments) > 0 {
			if _, err := jsontext.NewDecoder(bytes.NewReader(r.Params.Arguments)).ReadValue(); err != nil {
				res := &mcp.CallToolResult{}
				res.SetError(&ToolError{Code: "usage", Err: fmt.Errorf("%w: arguments: %v", errcode.ErrUsage, duplicateReason(err))})
				return res, nil
			}
		}
		return next(ctx, method, req)
	}
}

// duplicateReason describes a jsontext error without echoing values.
func duplicateReason(err error) string {
	var syn *jsontext.SyntacticError
	if errors.As(err, &syn) && errors.Is(syn.Err, jsontext.ErrDuplicateName) {
		return fmt.Sprintf("duplicate field %q: each field may appear once", strings.TrimPrefix(string(syn.JSONPointer), "/"))
	}
	if errors.As(err, &syn) {
		return fmt.Sprintf("field %q: %v", strings.TrimPrefix(string(syn.JSONPointer), "/"), syn.Err)
	}
	return "not valid JSON"
}

func ptr[T any](v T) *T { return &v }
