package verify

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/browserop/browserop/kind"
)

// Intent is what one action set out to do, in the terms a site shows.
type Intent struct {
	// Kind is what the action does. Posts, replies and thread parts are
	// checked with Classify against search results; likes and follows with
	// ClassifyState against a control's state.
	Kind kind.Kind
	// Actor is the handle the action was performed as; a leading "@" is
	// ignored.
	Actor string
	// Text is the intended text, compared after Normalize.
	Text string
	// Media are the attached media items, in order: each one's type and
	// alt text.
	Media []Media
	// Fields are the entry fields the action set (a category, tags), by
	// name, each as its texts. An item that shows a field (Item.Fields
	// has its name) must show exactly these texts, in any order; a field
	// an item does not show is not compared (see doc.go).
	Fields map[string][]string
	// ExpectedParent is the URL the result must reply to: required for a
	// reply, the previous part (or the thread's root target, "" for a new
	// top-level thread) for a thread part, and empty for a post.
	ExpectedParent string
	// Target is the URL of the object a like or follow acts on.
	Target string
	// NotBefore is when the action went executing. No result can be older
	// than it (allowing Options.Skew), and absence counts only after
	// NotBefore + Options.Settle.
	NotBefore time.Time
	// SettleFrom, when later than NotBefore, is the moment the settle time
	// counts from instead: absence counts only after SettleFrom +
	// Options.Settle. It is later when the click may have been carried out
	// after NotBefore: a browser that outlived the pass that clicked can
	// still send it, until the tab it was sent in is proven gone.
	SettleFrom time.Time
	// Baseline, when HaveBaseline, lists the canonical URLs of the items
	// identical to this intent that a complete search found on the site
	// just before the click. They are never this action's result, and
	// every other identical item is, whatever its time says: the
	// comparison then needs no agreement between this clock and the
	// site's.
	Baseline     []string
	HaveBaseline bool
	// Seen, when HaveSeen, lists in page order (newest first) the canonical
	// URLs of every item by the actor that a complete search showed just
	// before the click: the actor's whole list in the window then. An item
	// by the actor that is not in it (nor in Known) appeared after it was
	// read, and while one is in view absence is never proven: it may be
	// this action's result as the site changed it (see doc.go, "What a
	// proof of absence rests on").
	Seen     []string
	HaveSeen bool
	// Known lists the canonical results of the actor's other actions on
	// the site (verified, or held for moderation): items browserop made
	// that are not this action's result. A view that shows one of them
	// shows it can see the actor's items.
	Known []string
	// LandedURL is the result link the page the submission landed on
	// named ("" for none). A view that does not show it as this action's
	// exact result never proves absence: the landed page contradicts it.
	LandedURL string
	// MaySurface says the submission may surface later than the site's
	// settle time: the site answered it by navigating on, or it timed out
	// with its request possibly still pending. Absence then proves nothing,
	// unless Options.SurfaceWithin bounds how late a submission surfaces
	// and the view was observed at or after SettleStart() + SurfaceWithin.
	MaySurface bool
}

// SettleStart is when the site's settle time starts to count: the later of
// NotBefore and SettleFrom.
func (in Intent) SettleStart() time.Time {
	if in.SettleFrom.After(in.NotBefore) {
		return in.SettleFrom
	}
	return in.NotBefore
}

// BaselineOf returns the canonical URLs of the items in s identical to in
// (author, text, parent; time ignored; any media), for Intent.Baseline. ok is
// false when s is not complete: then there is no baseline.
func BaselineOf(in Intent, s Search) (urls []string, ok bool) {
	if !s.Complete {
		return nil, false
	}
	want := payloadOf(in)
	urls = []string{}
	for _, it := range s.Items {
		// An item with the intended text and other media that was there
		// before is no more this action's result than an identical one.
		// One the baseline cannot name (no canonical URL) makes no
		// baseline: it could never be told from the result.
		if want.sameButMedia(it) {
			u := NormalizeURL(it.URL)
			if !isAbsoluteHTTP(u) {
				return nil, false
			}
			if !slices.Contains(urls, u) {
				urls = append(urls, u)
			}
		}
	}
	return urls, true
}

// Item is one post-like object read from a site's page.
type Item struct {
	// Author is the author's handle as shown; a leading "@" is ignored.
	Author string
	// Text is the item's text as rendered.
	Text string
	// Parent is the URL of the item this one replies to, "" for a
	// top-level post.
	Parent string
	// URL is the item's canonical permalink, "" when the page did not show
	// one.
	URL string
	// Media are the item's media, in page order, as far as the page
	// shows them.
	Media []Media
	// At is the item's publication time, zero when unknown.
	At time.Time
	// Fields are the entry fields the page shows for the item, by name,
	// each as every text shown for it (a post's categories, its tags);
	// a name absent was not read.
	Fields map[string][]string
}

// Search is an observation of the items a site shows for an actor or
// destination.
type Search struct {
	// Items are the items read, in page order.
	Items []Item
	// Complete reports whether the view covers the whole window since the
	// intent's NotBefore (no "load more", no truncation, no filtering).
	Complete bool
	// ObservedAt is when the page was read.
	ObservedAt time.Time
	// Unread holds, for each item the page showed but that could not be
	// read exactly, its problems in fixed form ("author missing", "time
	// unparsable"): never page text. Such an item is not in Items and the
	// view is not Complete (it may be the result); the reason of an
	// Ambiguous verdict counts them, so a person reads why nothing
	// matched. A problem that is not a short phrase of lowercase letters,
	// digits and spaces is counted as "unreadable field".
	Unread [][]string
	// Counted: the site's own count of the items it lists agreed with the items read on every page (sites' search.count), so a view with no item of the actor still shows it can see.
	Counted bool
}

// Options tune classification to a site. Negative values count as zero.
type Options struct {
	// Settle is how long after an action a site may take to show its
	// result; absence before NotBefore + Settle is not definitive.
	Settle time.Duration
	// Skew is the tolerated difference between the local clock and the
	// site's timestamps.
	Skew time.Duration
	// Suspect is how far before NotBefore - Skew an identical item still
	// casts doubt: it is not this action's result, but it may be, under a
	// clock further off than Skew, so its presence never lets a search
	// prove absence. Identical items older than that are plainly older
	// posts. Zero means DefaultSuspect.
	Suspect time.Duration
	// SurfaceWithin is the longest the site takes to show a submission
	// that may surface late (Intent.MaySurface): a complete view observed
	// at or after SettleStart() + SurfaceWithin proves absence even then.
	// Zero means the site declares no bound, and such a submission is
	// never proven absent.
	SurfaceWithin time.Duration
}

// DefaultSuspect is Options.Suspect's default.
const DefaultSuspect = 15 * time.Minute

// Reasons are fixed strings: they reach logs, so they never carry observed
// or intended values.
const (
	reasonOneMatch            = "exactly one exact match"
	reasonDuplicate           = "more than one distinct exact match"
	reasonMatchPlusUnclear    = "one exact match and another payload match without a canonical URL or time"
	reasonUnclearMatch        = "payload match without a canonical URL or publication time"
	reasonSuspectOlder        = "no exact match, but an identical item shortly before the action: under a clock further off than the skew it may be the result"
	reasonIncomplete          = "no exact match, but the view does not cover the whole window"
	reasonSettling            = "no exact match yet, inside the settle window"
	reasonAbsent              = "no exact match in a complete view after the settle time"
	reasonMaySurface          = "the effect may still surface (the site answered, or the submission timed out), so its absence is not proof"
	reasonInsideSurface       = "the effect may still surface (the site answered, or the submission timed out): no exact match yet, inside the time the site takes at most to show a submission"
	reasonAbsentBound         = "no exact match in a complete view after the time the site takes at most to show a submission"
	reasonStateType           = "like and follow are verified by their control state"
	reasonNotPostType         = "intent type is not a post, reply or thread part"
	reasonUnknownType         = "unknown intent type"
	reasonNoActor             = "intent has no actor"
	reasonNoTime              = "intent has no execution time"
	reasonBadMedia            = "intent has a media item without a type"
	reasonMatchPlusOtherMedia = "one exact match and an item with the intended text and other media: the latter may be this action's result as the site changed it"
	reasonOtherMedia          = "no exact match, but an item with the intended text and other media: the site may have changed the media of this action's result"
	reasonMatchPlusOtherField = "one exact match and an item with the intended text and other entry fields: the latter may be this action's result as the site changed it"
	reasonOtherFields         = "no exact match, but an item with the intended text and other entry fields (a category, tags): the site may have set them otherwise on this action's result"
	reasonEmptyPayload        = "intent has neither text nor media"
	reasonReplyNoParent       = "reply intent has no expected parent"
	reasonPostWithParent      = "post intent has an expected parent"
)

// Classify decides what a search proves about a post, reply or thread part.
//
// An item is an exact match when its author equals the intent's actor
// exactly (case-sensitive, ignoring one leading "@"), its Normalize'd text
// equals the intent's, its media are the intent's (SameMedia), its parent equals the
// expected parent by NormalizeURL (both empty for a post), its time is not
// before NotBefore - Skew, and it has an absolute http(s) URL. Items with
// the same canonical URL are one match.
//
// Classify returns Duplicate for two or more distinct exact matches (even in
// an incomplete view), Verified for exactly one when no other item matches
// the payload without a usable URL or time, Absent only for no match at all
// in a Complete view observed at or after NotBefore (or the later
// SettleFrom) + Settle, and Ambiguous
// for everything else, including an invalid intent. An identical item older
// than NotBefore - Skew is ignored: it is not this action's result. An
// intent that may surface late (MaySurface) is Absent only with a bound
// (Options.SurfaceWithin) and a view observed after it. The reason of an
// Ambiguous verdict ends with a count of the items that could not be read
// (Search.Unread).
func Classify(in Intent, s Search, o Options) Verdict {
	v := classify(in, s, o)
	if v.Outcome == Ambiguous && len(s.Unread) > 0 {
		v.Reason += "; " + unreadSummary(s.Unread)
	}
	return v
}

func classify(in Intent, s Search, o Options) Verdict {
	if reason := checkPostIntent(in); reason != "" {
		return Verdict{Outcome: Ambiguous, Reason: reason}
	}
	settle, skew := max(o.Settle, 0), max(o.Skew, 0)
	earliest := in.NotBefore.Add(-skew)
	suspectWindow := o.Suspect
	if suspectWindow <= 0 {
		suspectWindow = DefaultSuspect
	}
	suspectFrom := earliest.Add(-suspectWindow)

	want := payloadOf(in)
	var exact []string
	unclear, suspect, otherMedia, otherFields := 0, 0, 0, 0
	var before []string
	for _, u := range in.Baseline {
		before = append(before, NormalizeURL(u))
	}
	for _, it := range s.Items {
		if !want.matches(it) {
			// The intended text with other media, or other entry fields,
			// may be this action's result as the site changed it: never
			// proof of absence. Like an identical item, one shortly
			// before the action is suspect, one older than that an older
			// post.
			if want.sameButMedia(it) && !slices.Contains(before, NormalizeURL(it.URL)) {
				recent := in.HaveBaseline || it.At.IsZero() || !it.At.Before(earliest)
				switch {
				case recent && !SameMedia(want.media, it.Media):
					otherMedia++
				case recent:
					otherFields++
				case !it.At.Before(suspectFrom):
					suspect++
				}
			}
			continue
		}
		if in.HaveBaseline {
			// Identical items that were there before the click are not the
			// result; any other is, whatever the clocks say.
			u := NormalizeURL(it.URL)
			if slices.Contains(before, u) {
				continue
			}
			if !isAbsoluteHTTP(u) {
				unclear++
			} else if !slices.Contains(exact, u) {
				exact = append(exact, u)
			}
			continue
		}
		if it.At.IsZero() {
			unclear++
			continue
		}
		if it.At.Before(earliest) {
			if !it.At.Before(suspectFrom) {
				suspect++
			}
			continue
		}
		u := NormalizeURL(it.URL)
		if !isAbsoluteHTTP(u) {
			unclear++
			continue
		}
		if !slices.Contains(exact, u) {
			exact = append(exact, u)
		}
	}

	switch {
	case len(exact) >= 2:
		return Verdict{Outcome: Duplicate, URLs: exact, Reason: reasonDuplicate}
	case len(exact) == 1 && otherMedia > 0:
		return Verdict{Outcome: Ambiguous, URLs: exact, Reason: reasonMatchPlusOtherMedia}
	case len(exact) == 1 && otherFields > 0:
		return Verdict{Outcome: Ambiguous, URLs: exact, Reason: reasonMatchPlusOtherField}
	case len(exact) == 1 && unclear == 0:
		return Verdict{Outcome: Verified, URL: exact[0], URLs: exact, Reason: reasonOneMatch}
	case len(exact) == 1:
		return Verdict{Outcome: Ambiguous, URLs: exact, Reason: reasonMatchPlusUnclear}
	case unclear > 0:
		return Verdict{Outcome: Ambiguous, Reason: reasonUnclearMatch}
	case suspect > 0:
		return Verdict{Outcome: Ambiguous, Reason: reasonSuspectOlder}
	case otherMedia > 0:
		return Verdict{Outcome: Ambiguous, Reason: reasonOtherMedia}
	case otherFields > 0:
		return Verdict{Outcome: Ambiguous, Reason: reasonOtherFields}
	case !s.Complete:
		return Verdict{Outcome: Ambiguous, Reason: reasonIncomplete}
	case s.ObservedAt.Before(in.SettleStart().Add(settle)):
		return Verdict{Outcome: Ambiguous, Reason: reasonSettling, Settling: true}
	default:
		if v, held := heldAbsence(in, s, suspectFrom); held {
			return v
		}
		return absentUnlessSurfacing(in, s.ObservedAt, o, reasonAbsent)
	}
}

// absentUnlessSurfacing is the verdict on a settled view that shows no
// effect: Absent, unless the submission may still surface (in.MaySurface)
// and the site's bound on how late it surfaces (o.SurfaceWithin, counted
// from SettleStart) is unknown or has not passed at observedAt.
func absentUnlessSurfacing(in Intent, observedAt time.Time, o Options, reason string) Verdict {
	if !in.MaySurface {
		return Verdict{Outcome: Absent, Reason: reason}
	}
	if o.SurfaceWithin <= 0 {
		return Verdict{Outcome: Ambiguous, Reason: reasonMaySurface}
	}
	if observedAt.Before(in.SettleStart().Add(o.SurfaceWithin)) {
		return Verdict{Outcome: Ambiguous, Reason: reasonInsideSurface, Settling: true}
	}
	return Verdict{Outcome: Absent, Reason: reasonAbsentBound}
}

// unreadSummary counts the unread items and their problems, in fixed form:
// "3 items could not be read (author missing: 3, time unparsable: 1)".
func unreadSummary(unread [][]string) string {
	counts := map[string]int{}
	for _, problems := range unread {
		seen := map[string]bool{}
		for _, p := range problems {
			p = problemClass(p)
			if !seen[p] {
				seen[p] = true
				counts[p]++
			}
		}
		if len(problems) == 0 {
			counts["unreadable field"]++
		}
	}
	names := make([]string, 0, len(counts))
	for p := range counts {
		names = append(names, p)
	}
	slices.Sort(names)
	parts := make([]string, len(names))
	for i, p := range names {
		parts[i] = fmt.Sprintf("%s: %d", p, counts[p])
	}
	noun := "items"
	if len(unread) == 1 {
		noun = "item"
	}
	return fmt.Sprintf("%d %s could not be read (%s)", len(unread), noun, strings.Join(parts, ", "))
}

// problemClass keeps a problem that is a short fixed phrase (lowercase
// ASCII letters, digits, spaces) and names any other "unreadable field":
// a reason never carries what a page said.
func problemClass(p string) string {
	p = strings.TrimSpace(p)
	if p == "" || len(p) > 40 {
		return "unreadable field"
	}
	for _, r := range p {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == ' ') {
			return "unreadable field"
		}
	}
	return p
}

// checkPostIntent returns why in cannot be classified against a search, or
// "" when it can.
func checkPostIntent(in Intent) string {
	switch in.Kind {
	case kind.Post, kind.Reply, kind.ThreadPart:
	case kind.Like, kind.Follow:
		return reasonStateType
	default:
		return reasonUnknownType
	}
	switch {
	case handle(in.Actor) == "":
		return reasonNoActor
	case in.NotBefore.IsZero():
		return reasonNoTime
	case slices.ContainsFunc(in.Media, func(m Media) bool { return m.Type == "" }):
		return reasonBadMedia
	case Normalize(in.Text) == "" && len(in.Media) == 0:
		return reasonEmptyPayload
	case in.Kind == kind.Reply && NormalizeURL(in.ExpectedParent) == "":
		return reasonReplyNoParent
	case in.Kind == kind.Post && NormalizeURL(in.ExpectedParent) != "":
		return reasonPostWithParent
	}
	return ""
}

// payload is the normalized part of an intent an item must equal exactly.
type payload struct {
	author, text, parent string
	media                []Media
	fields               map[string][]string
}

func payloadOf(in Intent) payload {
	return payload{author: handle(in.Actor), text: Normalize(in.Text), media: in.Media, parent: NormalizeURL(in.ExpectedParent), fields: in.Fields}
}

// matches compares everything but time and URL.
func (p payload) matches(it Item) bool {
	return p.sameButMedia(it) && SameMedia(p.media, it.Media) && SameFields(p.fields, it.Fields)
}

// SameFields reports whether an item's entry fields agree with the
// intended ones: every intended field the item shows (its name is in
// shown) shows the same texts, compared after Normalize, each once, in
// any order (a page lists tags in its own order). A field the item does
// not show, or one the intent does not set, is not compared.
func SameFields(want, shown map[string][]string) bool {
	for name, texts := range want {
		got, ok := shown[name]
		if !ok {
			continue
		}
		if !sameSet(texts, got) {
			return false
		}
	}
	return true
}

// sameSet compares two lists of texts as sets, after Normalize; a text
// the page shows twice counts once.
func sameSet(a, b []string) bool {
	set := func(l []string) []string {
		var out []string
		for _, s := range l {
			if n := Normalize(s); !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
		slices.Sort(out)
		return out
	}
	return slices.Equal(set(a), set(b))
}

// sameButMedia compares author, text and parent.
func (p payload) sameButMedia(it Item) bool {
	return handle(it.Author) == p.author &&
		NormalizeURL(it.Parent) == p.parent &&
		Normalize(it.Text) == p.text
}

// handle trims surrounding spaces and one leading "@"; case is kept.
func handle(s string) string {
	return strings.TrimPrefix(strings.TrimSpace(s), "@")
}

// isAbsoluteHTTP reports whether u (already normalized) is an absolute http
// or https URL, the only form a canonical result may take.
func isAbsoluteHTTP(u string) bool {
	out, ok := normalizeURLOnce(u)
	return ok && out == u
}
