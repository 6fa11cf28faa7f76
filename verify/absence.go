package verify

import (
	"slices"
	"time"
)

// Reasons for a view that shows no exact match and still proves no
// absence (see heldAbsence). Fixed strings, as every reason.
const (
	reasonUnexplained = "no exact match, but an item by the actor that was not there before the click and is no other action's result: it may be this action's result as the site changed it"
	reasonCannotTell  = "no exact match, and without a baseline of the actor's items the view cannot tell a new item by the actor from an old one"
	reasonLandedLink  = "no exact match, but the page the submission landed on named a result link: the landed page contradicts absence"
	reasonBlind       = "no exact match, and the view shows no item of the actor that is known to be there (an earlier item or another action's result) nor a count of its items from the site: it cannot show that it sees"
)

// Unexplained is an item by the actor that a view showed where it was to
// prove an action absent, that is neither an item seen before the click
// (Intent.Seen) nor another action's result (Intent.Known). Why says, in
// fixed words, how it differs from the intent.
type Unexplained struct {
	Item Item
	Why  string
}

// heldAbsence decides whether a complete, settled view with no exact match
// may prove absence. It may not (held, with the Ambiguous verdict that
// says why) when:
//
//   - it shows an unexplained item by the actor: an item not in in.Seen,
//     in.Baseline or in.Known that is, with a baseline of the actor's
//     items, not dated before the oldest of them in view (by the site's
//     own times), and without one, not dated before suspectFrom;
//   - the landed page named a result link (in.LandedURL);
//   - it cannot show that it sees: no item of the actor in it is known to
//     be there (in in.Seen, in.Baseline or in.Known, or older as above),
//     and it is not an empty list the site counted as empty (s.Counted).
func heldAbsence(in Intent, s Search, suspectFrom time.Time) (Verdict, bool) {
	actor := handle(in.Actor)
	seen := urlSet(in.Seen)
	explained := urlSet(in.Seen, in.Baseline, in.Known)
	// The oldest item in the view that was seen before the click: the
	// search before the click read every item newer than it, so an item of
	// the actor's dated before it and not seen then lies beyond that walk
	// (a page it did not need), not after the click. Times are compared
	// with the site's own, so a clock or zone the adapter misreads shifts
	// both sides alike.
	var oldestSeen time.Time
	if in.HaveSeen {
		for _, it := range s.Items {
			if handle(it.Author) == actor && !it.At.IsZero() && seen[NormalizeURL(it.URL)] &&
				(oldestSeen.IsZero() || it.At.Before(oldestSeen)) {
				oldestSeen = it.At
			}
		}
	}
	want := payloadOf(in)
	var unexplained []Unexplained
	// The site's count shows that an empty list is empty; where the list
	// holds items, only an item of the actor's known to be there shows
	// that the search reads the actor's (an author field that reads a
	// display name reads every item as someone else's).
	sees, cannotTell := s.Counted && len(s.Items) == 0, false
	for _, it := range s.Items {
		if handle(it.Author) != actor {
			continue
		}
		u := NormalizeURL(it.URL)
		if u != "" && explained[u] {
			sees = true
			continue
		}
		switch {
		case in.HaveSeen && !oldestSeen.IsZero() && !it.At.IsZero() && it.At.Before(oldestSeen):
			sees = true // older than what the walk before the click covered
			continue
		case !in.HaveSeen && !it.At.IsZero() && it.At.Before(suspectFrom):
			sees = true // plainly older than the action
			continue
		case !in.HaveSeen && it.At.IsZero():
			cannotTell = true
		}
		unexplained = append(unexplained, Unexplained{Item: it, Why: want.differs(it)})
	}
	switch {
	case len(unexplained) > 0:
		reason := reasonUnexplained
		if cannotTell {
			reason = reasonCannotTell
		}
		return Verdict{Outcome: Ambiguous, Reason: reason, Unexplained: unexplained}, true
	case in.LandedURL != "":
		return Verdict{Outcome: Ambiguous, Reason: reasonLandedLink}, true
	case !sees:
		return Verdict{Outcome: Ambiguous, Reason: reasonBlind}, true
	}
	return Verdict{}, false
}

// urlSet is the set of the lists' URLs, normalized.
func urlSet(lists ...[]string) map[string]bool {
	set := map[string]bool{}
	for _, list := range lists {
		for _, u := range list {
			if u = NormalizeURL(u); u != "" {
				set[u] = true
			}
		}
	}
	return set
}

// differs says in fixed words how an item by the actor differs from the
// payload: the first of its text, parent and media that does not match.
func (p payload) differs(it Item) string {
	switch {
	case Normalize(it.Text) != p.text:
		return "its text differs from the intended text"
	case NormalizeURL(it.Parent) != p.parent:
		return "its parent differs from the intended parent"
	case !SameMedia(p.media, it.Media):
		return "its media differ from the intended media"
	case !isAbsoluteHTTP(NormalizeURL(it.URL)):
		return "it shows no usable link"
	}
	return "it matches the intended item but is dated before the action"
}

// SeenOf returns, in page order, the canonical URLs of the items by in's
// actor in s, for Intent.Seen. ok is false when s is not complete: then
// there is no baseline of the actor's items. An item without a usable URL
// is left out: it can never be told from a new one, so a later view that
// shows it again shows an unexplained item.
func SeenOf(in Intent, s Search) (urls []string, ok bool) {
	if !s.Complete {
		return nil, false
	}
	actor := handle(in.Actor)
	urls = []string{}
	for _, it := range s.Items {
		u := NormalizeURL(it.URL)
		if handle(it.Author) == actor && isAbsoluteHTTP(u) && !slices.Contains(urls, u) {
			urls = append(urls, u)
		}
	}
	return urls, true
}
