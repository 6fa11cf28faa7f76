package operator

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/browserop/browserop/authority"
	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/sites"
	"github.com/browserop/browserop/verify"
)

// intent is one action the pass means to perform.
type intent struct {
	origin string // "calendar:ID", "task:ID" or "planner:HASH": whose intent it is
	task   ledger.Task
	site   string
	kind   kind.Kind // as the ledger records it
	format string    // its budget format; "" for a thread's later parts
	actor  string
	// target is what the action acts on: the post replied to (for a thread
	// part, the previous part), the post liked, the profile followed.
	target string
	text   string
	thread *ledger.ThreadRef
}

// performed is the kind the adapter performs: a thread's first part with
// nothing to answer starts the thread as a post.
func (in intent) performed() kind.Kind {
	if in.kind == kind.ThreadPart && in.target == "" {
		return kind.Post
	}
	return in.kind
}

func (in intent) ledgerIntent(runID string) ledger.Intent {
	p := ledger.Payload{Intent: in.origin, Text: in.text}
	if in.kind.HasParent() {
		p.Parent = in.target
	}
	target := in.target
	if in.thread != nil {
		p.Thread, p.Position = in.thread.ThreadID, &in.thread.Position
		p.Parent = in.thread.ExpectedParent
		target = ""
	}
	return ledger.Intent{TaskID: in.task.ID, RunID: runID, Type: in.kind, Format: in.format, Site: in.site,
		Actor: in.actor, TargetURL: target, Payload: p.JSON(), Thread: in.thread}
}

func (in intent) sitesIntent() sites.Intent {
	return sites.Intent{Kind: in.performed(), Actor: in.actor, Target: in.target, Text: in.text}
}

// fromAction rebuilds what verification needs from a recorded action.
func fromAction(a ledger.Action) (intent, error) {
	p, err := ledger.ParsePayload(a.Payload)
	if err != nil {
		return intent{}, fmt.Errorf("action %s: %w", a.ID, err)
	}
	if !a.Type.Known() {
		return intent{}, fmt.Errorf("action %s: type %q cannot be verified", a.ID, a.Type)
	}
	in := intent{origin: p.Intent, site: a.Site, kind: a.Type, format: a.Format, actor: a.Actor, text: p.Text, target: a.TargetURL}
	if a.Type.HasParent() {
		in.target = p.Parent
	}
	return in, nil
}

// verifyIntent is the intent as verify compares it on site: the text as
// the site renders it (site.Expected), the parent or target in the site's
// canonical form (site.Canonical), as the links the adapter reads are.
// The ledger keeps the raw intent: its idempotency key never changes.
func (in intent) verifyIntent(site sites.Adapter, executingAt time.Time) verify.Intent {
	v := verify.Intent{Kind: in.kind, Actor: in.actor, Text: site.Expected(in.performed(), in.text), NotBefore: executingAt}
	switch {
	case in.kind.HasParent():
		if in.target != "" {
			v.ExpectedParent = site.Canonical(in.target)
		}
	case in.kind.Toggles():
		v.Target = site.Canonical(in.target)
	}
	return v
}

// entryIntent returns the intent of a single-action entry (not a thread).
func entryIntent(e Entry, task ledger.Task, origin string) intent {
	k, _ := kind.OfRequest(e.Type) // the entry was checked when it was read
	return intent{origin: origin, task: task, site: e.Site, actor: e.Actor, target: e.Target, text: e.Text,
		kind: k, format: k.Format()}
}

// threadPart returns part i of a thread entry, replying to parent ("" for a
// new top-level thread's first part). Only the first part counts against
// the thread budget: the thread is one publication.
func threadPart(e Entry, task ledger.Task, origin string, i int, parent string) intent {
	in := intent{origin: origin, task: task, site: e.Site, actor: e.Actor, kind: kind.ThreadPart, text: e.Parts[i],
		target: parent, thread: &ledger.ThreadRef{ThreadID: origin, Position: i, ExpectedParent: parent}}
	if i == 0 {
		in.format = kind.ThreadPart.Format()
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
	return ledger.KeyPlanner + hex.EncodeToString(sum[:12])
}
