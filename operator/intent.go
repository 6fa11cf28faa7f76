package operator

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/browserop/browserop/authority"
	"github.com/browserop/browserop/budgets"
	"github.com/browserop/browserop/calendar"
	intents "github.com/browserop/browserop/intent"
	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/media"
	"github.com/browserop/browserop/sites"
	"github.com/browserop/browserop/verify"
)

// owner names whose request an action performs, two ways: origin as its
// payload names it, part of its idempotency key ("calendar:ID" or
// "calendar:ID~N", "task:ID", "planner:HASH"), and id as the ledger's
// intent_id column and outcomes name it (a calendar or planner task's
// key, an agent's intent id: tasks.IntentOutcome.ID).
type owner struct{ origin, id string }

// ownTask is the owner of a calendar or planner task's one request: its
// key names it both ways.
func ownTask(key string) owner { return owner{origin: key, id: key} }

// intent is one action the pass means to perform. It is one action of a
// request (intent.Request): a thread's request is one intent per part.
type intent struct {
	owner
	task   ledger.Task
	site   string
	kind   kind.Kind // as the ledger records it
	format string    // its budget format; "" for a thread's later parts
	actor  string
	// target is what the action acts on: the post replied to (for a thread
	// part, the previous part), the post liked, the profile followed.
	target string
	text   string
	// media are the files the action attaches, in order (read from the
	// media directory when the entry or intent was loaded); rebuilt from
	// a recorded action, they have no File, only what verification needs.
	media []media.Item
	// fields are the entry fields a post or reply sets (a category, tags).
	fields intents.Fields
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
	p := ledger.Payload{Intent: in.origin, Text: in.text, Media: payloadMedia(in.media), Fields: in.fields}
	if in.kind.HasParent() {
		p.Parent = in.target
	}
	target := in.target
	if in.thread != nil {
		p.Thread, p.Position = in.thread.ThreadID, &in.thread.Position
		p.Parent = in.thread.ExpectedParent
		target = ""
	}
	return ledger.Intent{TaskID: in.task.ID, IntentID: in.id, RunID: runID, Type: in.kind, Format: in.format, Site: in.site,
		Actor: in.actor, TargetURL: target, Payload: p.JSON(), Thread: in.thread}
}

func (in intent) sitesIntent() sites.Intent {
	return sites.Intent{Kind: in.performed(), Actor: in.actor, Target: in.target, Text: in.text, Media: in.media, Fields: in.fields}
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
	in := intent{owner: owner{origin: p.Intent, id: a.IntentID}, site: a.Site, kind: a.Type, format: a.Format, actor: a.Actor, text: p.Text, target: a.TargetURL,
		fields: p.Fields}
	for _, m := range p.Media {
		in.media = append(in.media, media.Item{SHA256: m.SHA256, Type: m.Type, Alt: m.Alt})
	}
	if a.Type.HasParent() {
		in.target = p.Parent
	}
	return in, nil
}

// verifyIntent is the intent as verify compares it on site: the text as
// the site renders it (site.Expected), the parent or target in the
// canonical form of the kind performed (site.CanonicalFor), as the links
// the adapter reads for it are.
// The ledger keeps the raw intent: its idempotency key never changes.
func (in intent) verifyIntent(site sites.Adapter, executingAt time.Time) verify.Intent {
	v := verify.Intent{Kind: in.kind, Actor: in.actor, Text: site.Expected(in.performed(), in.actor, in.text, executingAt), NotBefore: executingAt}
	for _, m := range in.media {
		v.Media = append(v.Media, verify.Media{Type: m.Type, Alt: m.Alt})
	}
	for name, f := range in.fields {
		if v.Fields == nil {
			v.Fields = map[string][]string{}
		}
		v.Fields[name] = f.Texts
	}
	switch {
	case in.kind.HasParent():
		if in.target != "" {
			v.ExpectedParent = site.CanonicalFor(in.performed(), in.target)
		}
	case in.kind.Toggles():
		// The control is read on the page the action opens: the target,
		// or a page its template builds from the target's parts.
		page := in.target
		if u, err := site.OpenURL(in.sitesIntent()); err == nil {
			page = u
		}
		v.Target = site.CanonicalFor(in.performed(), page)
	}
	return v
}

// entryIntent returns the intent of a single-action entry (not a thread).
func entryIntent(e calendar.Entry, task ledger.Task, o owner) intent {
	k := e.Type.Kind // the entry was checked when it was read
	in := intent{owner: o, task: task, site: e.Site, actor: e.Actor, target: e.Target, text: e.Text,
		media: e.Items, fields: e.Fields, kind: k, format: k.Format()}
	if k == kind.Post && len(e.Items) > 0 {
		in.format = budgets.PostImage
	}
	return in
}

// threadPart returns part i of a thread entry, replying to parent ("" for a
// new top-level thread's first part). Only the first part counts against
// the thread budget: the thread is one publication.
func threadPart(e calendar.Entry, task ledger.Task, o owner, i int, parent string) intent {
	in := intent{owner: o, task: task, site: e.Site, actor: e.Actor, kind: kind.ThreadPart, text: e.Parts[i],
		target: parent, thread: &ledger.ThreadRef{ThreadID: o.origin, Position: i, ExpectedParent: parent}}
	if i < len(e.PartItems) {
		in.media = e.PartItems[i]
	}
	if i == 0 {
		in.format = kind.ThreadPart.Format()
	}
	return in
}

// entryInput is an entry as recorded in its task's request. Media are
// recorded by their bytes' SHA-256, type and alt text: an image replaced
// after an action of the entry was performed is an edit, as a changed
// text is.
func entryInput(e calendar.Entry) json.RawMessage {
	var partMedia [][]ledger.PayloadMedia
	for _, pm := range e.PartItems {
		partMedia = append(partMedia, payloadMedia(pm))
	}
	if !slices.ContainsFunc(partMedia, func(m []ledger.PayloadMedia) bool { return len(m) > 0 }) {
		partMedia = nil
	}
	raw, _ := json.Marshal(struct {
		ID        string                  `json:"id"`
		Site      string                  `json:"site"`
		Actor     string                  `json:"actor"`
		Type      string                  `json:"type"`
		At        string                  `json:"at"`
		Text      string                  `json:"text,omitempty"`
		Parts     []string                `json:"parts,omitempty"`
		Target    string                  `json:"target,omitempty"`
		Media     []ledger.PayloadMedia   `json:"media,omitempty"`
		PartMedia [][]ledger.PayloadMedia `json:"part_media,omitempty"`
		Fields    intents.Fields          `json:"fields,omitempty"`
	}{e.ID, e.Site, e.Actor, e.Type.String(), e.At.UTC().Format(time.RFC3339Nano), e.Text, e.Parts, e.Target, payloadMedia(e.Items), partMedia, e.Fields})
	return raw
}

// payloadMedia is how the payload, and an entry's recorded input, name
// media: by their bytes' SHA-256, their type and their alt text.
func payloadMedia(items []media.Item) []ledger.PayloadMedia {
	var out []ledger.PayloadMedia
	for _, m := range items {
		out = append(out, ledger.PayloadMedia{SHA256: m.SHA256, Type: m.Type, Alt: m.Alt})
	}
	return out
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
		Fields                          intents.Fields `json:",omitempty"`
	}{c.Site, c.Actor, c.Type.String(), c.Target, c.Text, c.Parts, c.Fields})
	sum := sha256.Sum256(raw)
	return ledger.KeyPlanner + hex.EncodeToString(sum[:12])
}
