// Package sites describes where things are on a site: how to read the
// signed-in identity, how to recognise blocker screens, where each action's
// editor and button are, how to read the landed result, and how to search for
// an exact live result. An adapter says where things are; the rules about
// when to act, retry or stop live in the operator and in verify.
//
// A site is a Go value implementing Adapter, usually a *Declarative loaded
// from YAML (bundled/sites/*.yaml). Adapters touch pages only through the
// primitives of *browser.Tab.
package sites

import (
	"context"
	"errors"
	"fmt"
	"github.com/browserop/browserop/intent"
	"slices"
	"strings"
	"time"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/media"
	"github.com/browserop/browserop/verify"
)

// Intent is one action as the adapter needs it.
type Intent struct {
	Kind kind.Kind
	// Actor is the handle that must be signed in and act.
	Actor string
	// Target is the absolute URL of the object acted on: the post replied
	// to (reply, and the previous part for thread_part), the post liked, the
	// profile followed. Empty for post.
	Target string
	// Text is the exact payload of post, reply and thread_part.
	Text string
	// Media are the files a post, reply or thread part attaches, in
	// order, each with its alt text; at most the site's MediaLimits.Max.
	Media []media.Item
	// Fields are the entry fields a post or reply sets, as the action
	// declares them (RefuseFields).
	Fields intent.Fields
	// Provenance, when set, keeps who put the value of each text field
	// Fill types into, for this action in this tab and epoch (see
	// FieldLedger). Without it nothing is recorded or remembered, and
	// Fill types into no field that holds a value it did not put there.
	Provenance FieldLedger
}

// MediaLimits are what a site takes as media on one action: at most Max
// items (0: none), of Types, each at most MaxBytes long; with an alt text
// only when TakesAlt, and each with one when AltRequired.
type MediaLimits struct {
	Max         int
	Types       []string
	MaxBytes    int64
	TakesAlt    bool
	AltRequired bool
}

// Check returns why items cannot be attached to one action under the
// limits, naming the item at fault, or nil.
func (l MediaLimits) Check(items []media.Item) error {
	if len(items) == 0 {
		return nil
	}
	if l.Max == 0 {
		return errors.New("the site takes no media on this action")
	}
	if len(items) > l.Max {
		return fmt.Errorf("%d media items, the site takes at most %d", len(items), l.Max)
	}
	for i, it := range items {
		switch {
		case !slices.Contains(l.Types, it.Type):
			return fmt.Errorf("media[%d]: the site does not take %s images (it takes %s)", i, it.Type, strings.Join(l.Types, ", "))
		case l.MaxBytes > 0 && it.Size > l.MaxBytes:
			return fmt.Errorf("media[%d]: %d bytes is over the site's limit of %d", i, it.Size, l.MaxBytes)
		case l.AltRequired && strings.TrimSpace(it.Alt) == "":
			return fmt.Errorf("media[%d]: the site needs an alt text for every image", i)
		case !l.TakesAlt && it.Alt != "":
			return fmt.Errorf("media[%d]: the site takes no alt text: it would be dropped", i)
		}
	}
	return nil
}

// MediaSeen is one media item a page shows on a post: its type, as the
// page says it (a file extension, a MIME or type name; "" when it says
// none), and its alt text when the adapter reads it (AltRead).
type MediaSeen struct {
	Type    string
	Alt     string
	AltRead bool
}

// BlockerKind names a screen that stops a run.
type BlockerKind string

// The blocker kinds; BlockerNone is the empty kind.
const (
	BlockerNone       BlockerKind = ""
	BlockerLogin      BlockerKind = "login"
	BlockerCaptcha    BlockerKind = "captcha"
	BlockerRateLimit  BlockerKind = "rate_limit"
	BlockerRestricted BlockerKind = "restricted"
)

// Blocker is what Adapter.Blocker found.
type Blocker struct {
	Kind BlockerKind
	// Detail says which rule matched (selector or status), for a person.
	Detail string
}

// Blocked reports whether a blocker screen is showing.
func (b Blocker) Blocked() bool { return b.Kind != BlockerNone }

// Observed is what Result read on the page a submission landed on.
type Observed struct {
	// URL is the canonical URL of the created post, absolute, on one of
	// the site's origins; "" for like and follow.
	URL string
	// PageURL is the URL of the landed page.
	PageURL string
	Author  string
	Text    string
	// Parent is the canonical URL of the post replied to, "" for a
	// top-level post.
	Parent string
	// Time is the post's time as the page states it; zero when unknown.
	Time time.Time
	// State is the like or follow control's state value, and Done whether
	// it is the done value.
	State string
	Done  bool
	// Media are the media items the result shows, in order, when the
	// adapter reads them ("media" in Read).
	Media []MediaSeen
	// Fields are the entry fields the result shows, by name, when the
	// adapter reads them (result.entry_fields).
	Fields map[string][]string
	// Moderated is true when the landed page says the created item is held
	// for the site's moderation: it exists, it is not public yet.
	Moderated bool
	// Read lists the fields the adapter read from the landed result
	// ("link", "text", "author", ...); a field not in it was not declared
	// and proves nothing.
	Read []string
}

// Query asks Search for the live results of one intent's kind and actor.
type Query struct {
	Kind  kind.Kind
	Actor string
	// Target is the object of a like or follow (whose control Search
	// reads); unused for the kinds that create posts.
	Target string
	// Since is the start of the window to search back to. Zero means the
	// site's lookback before now.
	Since time.Time
	// Text is the exact text looked for, for a search URL with {text} (a
	// site's own search page). It is the raw intended text.
	Text string
}

// Item is one result Search read.
type Item struct {
	Link string // canonical URL, absolute, on a site origin; "" if unusable
	// RawLink is the link as the page named it, absolute, before the
	// adapter's canonical rule; "" when Link is. See Rewritten.
	RawLink string
	Author  string
	Text    string
	Parent  string    // canonical URL of the parent; "" for a top-level post
	Time    time.Time // zero when missing or unparsable
	State   string    // like and follow: the control state
	Done    bool      // like and follow: State is the done value
	// Media are the item's media, in order, when the adapter reads them.
	Media []MediaSeen
	// Fields are the entry fields the item shows, by name, when the
	// adapter reads them (entry_fields of the result or search).
	Fields map[string][]string
	// Problems lists fields that were missing, doubled, unparsable or
	// offsite. An item with problems is never an exact match.
	Problems []string
}

// Rewritten reports whether the adapter's canonical rule changed the
// item's link beyond how verify compares URLs (verify.NormalizeURL): it
// dropped a fragment, a query parameter or part of the path. Such a link
// is the adapter's word that both name one item; the operator opens it
// before it records it as an action's result (a rule that drops an id
// makes every permalink one URL).
func (it Item) Rewritten() bool {
	return it.RawLink != "" && it.Link != "" && verify.NormalizeURL(it.RawLink) != verify.NormalizeURL(it.Link)
}

// OK reports whether every field of the item was read unambiguously.
func (it Item) OK() bool { return len(it.Problems) == 0 }

// SearchResult is what Search saw.
type SearchResult struct {
	Items []Item
	// Complete is true when the walk reached the window's start or the last
	// page, so that absence from Items means absence from the site's view.
	// It is false when max_pages ran out first.
	Complete bool
	// Since is the window start the search used.
	Since time.Time
	// Settle is how long after an action the site may still hide its
	// result; absence inside it is never definitive.
	Settle time.Duration
	// SurfaceWithin is the longest a submission can take to surface on
	// the site: after it, a complete view proves absence even of an effect
	// that "may surface later". Zero means the site declares no bound.
	SurfaceWithin time.Duration
	// Pages is how many pages were read.
	Pages int
	// Counted is true when the search declares the site's own count of
	// the items it lists (search.count) and, on every page read, that
	// count equalled the items the item selector matched there: the
	// search can see the list, so a view without an item of the actor
	// shows that it has none rather than that the selector misses them.
	// A page where they differ (or the count cannot be read) leaves
	// Counted false and the result not Complete. A search whose first
	// page is the site's own answer that the list is empty (search.empty)
	// is Counted too. False otherwise when the search declares no count.
	Counted bool
}

// Adapter is a site. Every method works in a tab browserop owns and returns
// errors of the browser package (ErrTabGone, ErrBrowserGone, ErrTimeout),
// or of this one: *HardStop, *Refusal, ErrReadBackMismatch, ErrStepFailed,
// ErrOutcomeUnknown, ErrAlreadyDone, ErrUnsupported.
type Adapter interface {
	// Name is the site's name, such as "demo".
	Name() string
	// Origins are the site's origins (scheme://host[:port]); the first is
	// the primary one.
	Origins() []string
	// Supports reports whether the site is configured for the kind.
	Supports(kind.Kind) bool

	// OpenHome navigates to the page where the identity is read.
	OpenHome(ctx context.Context, tab *browser.Tab) (status int, err error)
	// Identity returns the handle signed in on the current page. It returns
	// a *HardStop of kind login when no one is signed in.
	Identity(ctx context.Context, tab *browser.Tab) (string, error)
	// Blocker reports a blocker screen on the current page, given the HTTP
	// status of its document.
	Blocker(ctx context.Context, tab *browser.Tab, status int) (Blocker, error)

	// Open navigates to where the intent is performed (a compose page, the
	// post replied to, the profile followed). It refuses, with a HardStop of
	// kind offsite, a target or a landing page outside the origins.
	Open(ctx context.Context, tab *browser.Tab, in Intent) (status int, err error)
	// OpenURL is the address Open navigates to for in: the target itself,
	// or a page the action's template names for it (a compose page, an
	// edit page built from the target's parts). Preflight compares the
	// page it landed on with it.
	OpenURL(in Intent) (string, error)
	// OpensPerIntent reports whether the page kind k opens is named by the
	// intent (its title, its target's parts) rather than fixed: preflight
	// then checks that the action landed on OpenURL's page.
	OpensPerIntent(k kind.Kind) bool
	// KeepsDrafts reports whether the site's editor for kind k saves a
	// draft by itself while it is filled: a failure before the click then
	// published nothing, but may leave a draft.
	KeepsDrafts(k kind.Kind) bool
	// ReadsIdentityInPlace reports whether Identity only reads the page it
	// is given (no steps that click, no answer to fetch): browserop login
	// then reads it in the person's own tab, sending the site nothing.
	ReadsIdentityInPlace() bool
	// Fill prepares the action for its one committing click, for every
	// kind: it waits until the page is ready, fills each declared field
	// with its part of the intent's text and reads each back, and runs the
	// steps declared before the committing click (open a dialog, a
	// confirmation panel). It returns what the fields hold; it returns
	// ErrReadBackMismatch when that differs from the intent, and
	// ErrStepFailed when the page never became ready or a step did not
	// work. Nothing is submitted.
	Fill(ctx context.Context, tab *browser.Tab, in Intent) (readBack string, err error)
	// Submit clicks the action's committing control exactly once and waits
	// for the landing the adapter declares (a navigation, an element, a
	// URL change, the answer to a declared request). Errors before the
	// click are definitive (a HardStop, ErrAlreadyDone); a refusal the
	// site's answer proves is a *Refusal (definitive, nothing created);
	// a click the tab proved sent nothing is ErrNotSent (definitive,
	// nothing submitted; the tab is left blocked on about:blank); any
	// other error after the click wraps ErrOutcomeUnknown, a refusal
	// that proves nothing included (a duplicate, an answer to more than
	// one request: the *Refusal is then in the chain, its Doubt set).
	Submit(ctx context.Context, tab *browser.Tab, in Intent) error
	// Result reads the landed page after Submit: the created post, or the
	// control state. Any failure wraps ErrOutcomeUnknown, because Submit
	// already happened.
	Result(ctx context.Context, tab *browser.Tab, in Intent) (Observed, error)
	// Search looks for the live results of the query: the actor's recent
	// posts within the window, or the control state of a like or follow.
	Search(ctx context.Context, tab *browser.Tab, q Query) (SearchResult, error)

	// Expected returns the intended text as the site renders it: the
	// fields an action fills joined as the site shows them, after the
	// transforms the site declares (a signature expanded with actor's
	// names and the time at, a link shortened). Verification compares
	// this, never the raw text.
	Expected(k kind.Kind, actor, text string, at time.Time) string
	// MediaLimits returns what the site takes as media on an action of
	// kind k; the zero MediaLimits when it takes none.
	MediaLimits(k kind.Kind) MediaLimits
	// Moderates reports whether the site may hold what an action of kind
	// creates for its moderation: shown to its author only, marked as
	// held, until a moderator approves it. Such an item is never the
	// exact match a search looks for while it is held, so its absence
	// from a search proves nothing.
	Moderates(k kind.Kind) bool
	// Compares returns which parts of an intent of kind k the search that
	// reconciles it reads per item (text, author, time, link, parent, and
	// whether from the page, media, alt texts), so that verification can
	// compare them; a part not read is never compared.
	Compares(k kind.Kind) Comparison
	// Uncompared names the parts the intent fixes that the search cannot
	// compare for it ("parent", "media"), nil when it compares them all.
	// Fill refuses such an intent (ErrUnverifiable); a caller reconciling
	// one recorded before must not take a verdict for them.
	Uncompared(in Intent) []string
	// Canonical returns the canonical form of a URL on the site under the
	// site's own rule: the parts that identify a result kept (a declared
	// fragment or query key), the rest dropped, as the adapter declares.
	Canonical(rawURL string) string
	// CanonicalFor returns the canonical form of a URL under the rule of
	// kind k: the action's own rule when it declares one, else the site's
	// (Canonical). Links read by Result and Search for an intent of kind k
	// are already in that form; the operator passes that kind's targets
	// and pages through it before comparing them.
	CanonicalFor(k kind.Kind, rawURL string) string
	// RefuseFields returns why the action of kind k cannot take the entry
	// fields f (one it does not declare, of another type, not one of its
	// choices, or a required one missing), naming the field at fault; nil
	// when it takes them.
	RefuseFields(k kind.Kind, f intent.Fields) (string, error)
}
