// Package kind names the kinds of action browserop performs, once for every
// layer: the calendar and the task API ask for them, the ledger records them
// (and hashes them into idempotency keys), site adapters perform them,
// verify checks them and budgets count them. Each kind carries what those
// layers ask of it: the capability a task needs for it, the budget format
// it counts against, and whether it creates an item or toggles a state.
//
// The package imports nothing of browserop's but the budget format names.
package kind

import (
	"slices"

	"github.com/browserop/browserop/budgets"
)

// Kind is the type of one action, as the ledger records it (its spelling
// is part of every idempotency key: it never changes).
type Kind string

// The action kinds.
const (
	Post       Kind = "post"
	Reply      Kind = "reply"
	ThreadPart Kind = "thread_part" // one part of a thread; its target is the part before
	Like       Kind = "like"
	Follow     Kind = "follow"
)

// All lists every action kind.
var All = []Kind{Post, Reply, ThreadPart, Like, Follow}

// Known reports whether k is one of All.
func (k Kind) Known() bool { return slices.Contains(All, k) }

// Creates reports whether an action of the kind creates an item (post,
// reply, thread part): it is verified by finding its exact text.
func (k Kind) Creates() bool { return k == Post || k == Reply || k == ThreadPart }

// Toggles reports whether an action of the kind toggles a state (like,
// follow): it is verified by reading a control, and a click on a control
// already in the done state would undo it.
func (k Kind) Toggles() bool { return k == Like || k == Follow }

// HasParent reports whether the action's target is the item it answers
// (reply, thread part), which the created item must name as its parent.
func (k Kind) HasParent() bool { return k == Reply || k == ThreadPart }

// Capability is the contract capability a task needs for an action of the
// kind: a thread part needs "thread", every other kind its own name.
// Unknown kinds are "".
func (k Kind) Capability() string {
	switch k {
	case ThreadPart:
		return Thread
	case Post, Reply, Like, Follow:
		return string(k)
	}
	return ""
}

// Format is the budget format (budgets.Formats) an action of the kind
// counts against. A thread is one publication: only its first part counts,
// so the caller gives later parts no format. Unknown kinds are "".
func (k Kind) Format() string {
	switch k {
	case Post:
		return budgets.PostText
	case Reply:
		return budgets.Reply
	case ThreadPart:
		return budgets.Thread
	case Like:
		return budgets.Like
	case Follow:
		return budgets.Follow
	}
	return ""
}

// Thread is what a request (a calendar entry, an agent's intent, a planner
// candidate) names to publish a thread, and the capability its task needs.
// A thread is performed as one ThreadPart action per part.
const Thread = "thread"

// Requests lists the types a request may name: a thread, or one action of
// the kind of the same name. Each is the capability its task needs.
var Requests = []string{string(Post), string(Reply), Thread, string(Like), string(Follow)}

// OfRequest returns the kind of the actions a request of type typ
// performs (ThreadPart for a thread), and false for a type that is not one
// of Requests.
func OfRequest(typ string) (Kind, bool) {
	switch typ {
	case Thread:
		return ThreadPart, true
	case string(Post), string(Reply), string(Like), string(Follow):
		return Kind(typ), true
	}
	return "", false
}
