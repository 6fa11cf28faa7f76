package mcptools

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/browserop/browserop/intent"
	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/tasks"
)

// The tools' schemas are derived from the Go types (jsonschema.For), then
// tightened where a model benefits: enums for capabilities and intent
// types, non-null required arrays, bounds, and descriptions of the output
// fields an agent branches on.

// typeSchemas overrides the derived schema of types whose JSON is not
// their Go shape: json.RawMessage is any JSON value, not a byte array; an
// intent's type is its word (intent.Type's text form).
var typeSchemas = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[json.RawMessage](): {Description: "any JSON value"},
	reflect.TypeFor[intent.Type]():     {Type: "string"},
	// An entry field is a text or a list of texts.
	reflect.TypeFor[intent.FieldValue](): {OneOf: []*jsonschema.Schema{
		{Type: "string"},
		{Type: "array", Items: &jsonschema.Schema{Type: "string"}},
	}},
}

func schemaFor[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: typeSchemas})
	if err != nil {
		panic(fmt.Sprintf("mcptools: schema of %T: %v", *new(T), err))
	}
	return s
}

func inputSchema[T any]() *jsonschema.Schema {
	s := schemaFor[T]()
	for name, p := range s.Properties {
		if name == "task_id" {
			p.MinLength = jsonschema.Ptr(1)
		}
	}
	return s
}

// outputSchema is T's schema with every array non-null: the handlers
// return empty arrays, never null (see normalize), and a single "type" is
// more portable than ["null", "array"].
func outputSchema[T any]() *jsonschema.Schema {
	s := schemaFor[T]()
	nonNullArrays(s)
	return s
}

func nonNullArrays(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if slices.Equal(s.Types, []string{"null", "array"}) {
		s.Types, s.Type = nil, "array"
	}
	nonNullArrays(s.Items)
	for _, p := range s.Properties {
		nonNullArrays(p)
	}
}

// array makes p a non-null array of strings from enum (nil: any string)
// with at least minItems items.
func array(p *jsonschema.Schema, enum []string, minItems int) {
	p.Types, p.Type = nil, "array"
	if minItems > 0 {
		p.MinItems = jsonschema.Ptr(minItems)
	}
	if enum != nil {
		p.Items.Enum = anys(enum)
	}
}

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func createInputSchema() *jsonschema.Schema {
	s := inputSchema[CreateInput]()
	s.Properties["idempotency_key"].MinLength = jsonschema.Ptr(1)
	c := s.Properties["contract"]
	array(c.Properties["domains"], nil, 1)
	array(c.Properties["capabilities"], ledger.Capabilities, 1)
	array(c.Properties["confirm"], ledger.Capabilities, 0)
	c.Properties["max_side_effects"].Minimum = jsonschema.Ptr(0.0)
	return s
}

func listInputSchema() *jsonschema.Schema {
	s := inputSchema[ListInput]()
	s.Properties["limit"].Minimum = jsonschema.Ptr(1.0) // as GET /v1/tasks?limit: 0 is refused, absent means 100
	s.Properties["limit"].Maximum = jsonschema.Ptr(1000.0)
	return s
}

func submitInputSchema() *jsonschema.Schema {
	s := inputSchema[SubmitInput]()
	s.Properties["task_id"].MinLength = jsonschema.Ptr(1)
	s.Properties["interaction_generation"].Minimum = jsonschema.Ptr(1.0)
	in := s.Properties["intent"]
	in.Properties["site"].MinLength = jsonschema.Ptr(1)
	in.Properties["actor"].MinLength = jsonschema.Ptr(1)
	in.Properties["type"].Enum = anys(kind.Requests)
	array(in.Properties["parts"], nil, 0)
	media := in.Properties["media"]
	media.Types, media.Type = nil, "array"
	agentMedia(media.Items)
	parts := in.Properties["part_media"]
	parts.Types, parts.Type = nil, "array"
	parts.Items.Types, parts.Items.Type = nil, "array"
	agentMedia(parts.Items.Items)
	return s
}

func continuityInputSchema() *jsonschema.Schema {
	s := inputSchema[ContinuityInput]()
	s.Properties["interaction_generation"].Minimum = jsonschema.Ptr(1.0)
	c := s.Properties["continuity"]
	delete(c.Properties, "updated_at") // set by browserop
	for _, p := range []string{"planner", "executor"} {
		pr := c.Properties[p]
		pr.Properties["id"].MinLength = jsonschema.Ptr(1)
		pr.Properties["id"].MaxLength = jsonschema.Ptr(ledger.MaxIdentity)
		array(pr.Properties["fallbacks"], nil, 0)
		pr.Properties["fallbacks"].MaxItems = jsonschema.Ptr(ledger.MaxFallbacks)
	}
	c.Properties["subgoal"].MaxLength = jsonschema.Ptr(ledger.MaxSubgoal)
	array(c.Properties["success_criteria"], nil, 0)
	c.Properties["success_criteria"].MaxItems = jsonschema.Ptr(ledger.MaxCriteria)
	o := c.Properties["observation"]
	o.Properties["mode"].Enum = anys(ledger.ObservationModes)
	array(o.Properties["scope"], nil, 0)
	o.Properties["scope"].MaxItems = jsonschema.Ptr(ledger.MaxScope)
	conf := c.Properties["confidence"]
	conf.Minimum, conf.Maximum = jsonschema.Ptr(0.0), jsonschema.Ptr(1.0)
	c.Properties["escalation_reason"].MaxLength = jsonschema.Ptr(ledger.MaxEscalation)
	l := c.Properties["limits"]
	for _, name := range []string{"max_steps", "steps", "max_duration_seconds", "elapsed_seconds"} {
		l.Properties[name].Minimum = jsonschema.Ptr(0.0)
	}
	l.Properties["max_steps"].Maximum = jsonschema.Ptr(float64(ledger.MaxStepsLimit))
	l.Properties["max_duration_seconds"].Maximum = jsonschema.Ptr(float64(ledger.MaxDurationLimit))
	sk := c.Properties["skill"]
	sk.Properties["id"].MinLength = jsonschema.Ptr(1)
	sk.Properties["version"].MinLength = jsonschema.Ptr(1)
	describe(c, map[string]string{
		"planner":           "who plans: your planner's identity (id) and the ones it falls back to, in order",
		"executor":          "who executes: your executor's identity and its fallbacks",
		"subgoal":           "the subgoal you are working on now",
		"success_criteria":  "how you will know the subgoal is reached",
		"observation":       "how you observe the task (mode: summary, state or none) and what (scope: domains within the task's, or site names)",
		"confidence":        "your executor's effective confidence, 0 to 1",
		"escalation_reason": "why you escalated (to your planner or to the person), if you did",
		"limits":            "your own step and duration limits (0: none) and their counters; a limit only narrows, a counter never goes back",
		"skill":             "the skill you run: its id and version",
	})
	return s
}

// agentMedia is the schema of an image as an agent names it: a file and
// its alt text. The file's SHA-256 and type are recorded by browserop
// (intent.Media); an agent that sets them is refused.
func agentMedia(m *jsonschema.Schema) {
	m.Properties["file"].MinLength = jsonschema.Ptr(1)
	delete(m.Properties, "sha256")
	delete(m.Properties, "type")
}

// describe sets the descriptions of s's properties.
func describe(s *jsonschema.Schema, d map[string]string) {
	for name, text := range d {
		p, ok := s.Properties[name]
		if !ok {
			panic(fmt.Sprintf("mcptools: no property %q to describe", name))
		}
		p.Description = text
	}
}

func taskStateSchema() *jsonschema.Schema {
	s := outputSchema[tasks.State]()
	s.Description = "a task's durable state"
	describe(s, map[string]string{
		"status":                 "open, done (finished and every intent settled) or cancelled",
		"contract":               "the task's immutable contract",
		"grants":                 "extra domains the person approved for this task only",
		"owner_generation":       "the fencing generation of the operator that last acted for the task",
		"connection_generation":  "the operator's browser connection that last acted for the task: one more each time the operator connects to the browser again",
		"interaction_generation": "the count of observe and act turns taken on the task (task_observe, task_submit); pass it to task_submit to have the submission refused if another turn was taken since",
		"current_interaction":    "idle, acting, waiting_for_confirmation (the person must approve an action), waiting_for_reconciliation (an effect is uncertain) or waiting_for_moderation (the site holds an effect for moderation)",
		"intents":                "how many intents were submitted",
		"finished":               "the task accepts no more intents (task_finish); it becomes done once every intent is settled",
		"submitted_intent":       "in task_submit's answer: the id of the intent it accepted (the same intent again names the first)",
		"result":                 "once done or cancelled: each intent with its outcome (known_complete, not_done, uncertain, moderated...) and permalink",
		"actions":                "the task's actions, one per external effect",
		"history":                "the task's append-only history",
		"tabs":                   "the tab records the task's actions ran in, or that were handed to the person for it: record number, state, inspection epoch, the epoch the task first used it in, origin; never a browser target id",
		"continuity":             "what the agent driving the task last recorded of itself (task_continuity); it never changes the task's authority",
	})
	describe(s.Properties["actions"].Items, map[string]string{
		"intent_id":     "the intent this action performs (the id task_submit answered)",
		"effect_state":  "pending, needs_confirmation (waits for the person), executing, known_complete, not_done, uncertain (never retried blindly) or moderated (made, held by the site's moderators: never retried, verified once public)",
		"result":        "the canonical result, e.g. the permalink of the published post",
		"failure":       "why the action is not done, in fixed words: never what the site's page said",
		"failure_class": "definitive (the effect did not occur; the operator may try the intent again) or abandoned (given up on)",
		"effect_reason": "for a not_done action: why its effect is definitely absent: proven_absent (performed, then proven absent), absent_by_person (uncertain, then a person said it is not there), rejected_by_moderators, declined (the person declined it), abandoned (its task was cancelled before it was performed) or never_performed (ended before the click)",
		"last_stop":     "for a pending action: the last hard stop of a pass that held it before its click (kind such as login, cause, reason, run_id, at); absent once it went ahead",
	})
	return s
}

func observationSchema() *jsonschema.Schema {
	s := outputSchema[tasks.Observation]()
	s.Description = "a value-free summary of what the task's tab shows"
	describe(s, map[string]string{
		"tab":                    "the state of the tab record the task's newest action ran in: none, opening, live, handoff (left open for the person), missing, closed_verified or closure_unverified",
		"tab_record":             "that tab record's number (never a browser target id)",
		"origin":                 "the scheme and host of the tab's page, without path or query",
		"inspection_epoch":       "increases when a missing tab is reopened; earlier evidence is void",
		"waiting_for_person":     "ids of actions waiting for the person",
		"pending_intents":        "submitted intents not yet performed (a thread counts once)",
		"interaction_generation": "the turn this observation took: pass it to task_submit to have the submission refused if another turn was taken since",
	})
	return s
}
