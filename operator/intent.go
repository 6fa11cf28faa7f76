package operator

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/browserop/browserop/authority"
	"github.com/browserop/browserop/budgets"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/sites"
	"github.com/browserop/browserop/verify"
)

// intent is one action the pass means to perform.
type intent struct {
	origin string // "calendar:ID" or "planner:HASH": whose intent it is
	task   ledger.Task
	site   string
	kind   sites.Kind
	// typ is the ledger's action type: post, reply, thread_part, like, follow.
	typ    string
	format string
	actor  string
	// target is what the action acts on: the post replied to (for a thread
	// part, the previous part), the post liked, the profile followed.
	target string
	text   string
	thread *ledger.ThreadRef
}

// payload is an action's exact intended payload, as stored and hashed
// into its idempotency key. Intent names whose intent it is, so that two
// calendar entries with the same text are two intents, not one.
type payload struct {
	Intent   string `json:"intent"`
	Text     string `json:"text,omitempty"`
	Parent   string `json:"parent,omitempty"`
	Thread   string `json:"thread,omitempty"`
	Position *int   `json:"position,omitempty"`
}

func (in intent) ledgerIntent(runID string) ledger.Intent {
	p := payload{Intent: in.origin, Text: in.text}
	switch in.kind {
	case sites.KindReply, sites.KindThreadPart:
		p.Parent = in.target
	}
	target := in.target
	if in.thread != nil {
		p.Thread, p.Position = in.thread.ThreadID, &in.thread.Position
		p.Parent = in.thread.ExpectedParent
		target = ""
	}
	raw, _ := json.Marshal(p)
	return ledger.Intent{TaskID: in.task.ID, RunID: runID, Type: in.typ, Format: in.format, Site: in.site,
		Actor: in.actor, TargetURL: target, Payload: raw, Thread: in.thread}
}

func (in intent) sitesIntent() sites.Intent {
	return sites.Intent{Kind: in.kind, Actor: in.actor, Target: in.target, Text: in.text}
}

// fromAction rebuilds what verification needs from a recorded action.
func fromAction(a ledger.Action) (intent, error) {
	var p payload
	if err := json.Unmarshal(a.Payload, &p); err != nil {
		return intent{}, fmt.Errorf("action %s: payload: %w", a.ID, err)
	}
	in := intent{origin: p.Intent, site: a.Site, typ: a.Type, format: a.Format, actor: a.Actor, text: p.Text, target: a.TargetURL}
	switch a.Type {
	case "post":
		in.kind = sites.KindPost
	case "reply":
		in.kind, in.target = sites.KindReply, p.Parent
	case "thread_part":
		in.kind, in.target = sites.KindThreadPart, p.Parent
		if p.Parent == "" {
			in.kind = sites.KindPost
		}
	case "like":
		in.kind = sites.KindLike
	case "follow":
		in.kind = sites.KindFollow
	default:
		return intent{}, fmt.Errorf("action %s: type %q cannot be verified", a.ID, a.Type)
	}
	return in, nil
}

// verifyIntent is the intent as verify compares it.
func (in intent) verifyIntent(executingAt time.Time) verify.Intent {
	v := verify.Intent{Type: in.typ, Actor: in.actor, Text: in.text, NotBefore: executingAt}
	switch in.typ {
	case "reply", "thread_part":
		v.ExpectedParent = in.target
	case "like", "follow":
		v.Target = in.target
	}
	return v
}

// entryIntents returns the intents of a single-action entry (not a thread).
func entryIntent(e Entry, task ledger.Task, origin string) intent {
	in := intent{origin: origin, task: task, site: e.Site, actor: e.Actor, target: e.Target, text: e.Text, typ: e.Type}
	switch e.Type {
	case EntryPost:
		in.kind, in.format = sites.KindPost, budgets.PostText
	case EntryReply:
		in.kind, in.format = sites.KindReply, budgets.Reply
	case EntryLike:
		in.kind, in.format = sites.KindLike, budgets.Like
	case EntryFollow:
		in.kind, in.format = sites.KindFollow, budgets.Follow
	}
	return in
}

// threadPart returns part i of a thread entry, replying to parent ("" for a
// new top-level thread's first part). Only the first part counts against
// the thread budget: the thread is one publication.
func threadPart(e Entry, task ledger.Task, origin string, i int, parent string) intent {
	in := intent{origin: origin, task: task, site: e.Site, actor: e.Actor, typ: "thread_part", text: e.Parts[i],
		target: parent, kind: sites.KindThreadPart,
		thread: &ledger.ThreadRef{ThreadID: origin, Position: i, ExpectedParent: parent}}
	if parent == "" {
		in.kind = sites.KindPost
	}
	if i == 0 {
		in.format = budgets.Thread
	}
	return in
}

// entryInput is an entry as recorded in its task's request.
func entryInput(e Entry) json.RawMessage {
	raw, _ := json.Marshal(struct {
		ID     string   `json:"id"`
		Site   string   `json:"site"`
		Actor  string   `json:"actor"`
		Type   string   `json:"type"`
		At     string   `json:"at"`
		Text   string   `json:"text,omitempty"`
		Parts  []string `json:"parts,omitempty"`
		Target string   `json:"target,omitempty"`
	}{e.ID, e.Site, e.Actor, e.Type, e.At.UTC().Format(time.RFC3339Nano), e.Text, e.Parts, e.Target})
	return raw
}

// contractFor is the contract of a calendar or planner task: the site's
// domains and the one capability the entry needs.
func contractFor(site sites.Adapter, capability string) ledger.Contract {
	domains, _ := authority.SiteHosts(site) // a site that fails here is refused before the click
	return ledger.Contract{Domains: domains, Capabilities: []string{capability}}
}

// candidateKey names a planner candidate's task: the same proposal twice is
// the same intent.
func candidateKey(c Candidate) string {
	raw, _ := ledger.Canonicalize(struct {
		Site, Actor, Type, Target, Text string
		Parts                           []string
	}{c.Site, c.Actor, c.Type, c.Target, c.Text, c.Parts})
	sum := sha256.Sum256(raw)
	return "planner:" + hex.EncodeToString(sum[:12])
}
