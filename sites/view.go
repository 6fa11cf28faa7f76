package sites

import (
	"slices"
	"strings"
	"time"

	"github.com/browserop/browserop/verify"
)

// What an adapter read, as package verify compares it: the one conversion
// the operator, the conformance suite and the tests share.

// View is what the search saw at observedAt, as verify classifies it. An
// item read with problems is never a match, but it may be one: the view is
// not complete, and the item's problems, in fixed form (problemClass), say
// why in an ambiguous verdict.
func (r SearchResult) View(observedAt time.Time) verify.Search {
	s := verify.Search{Complete: r.Complete, ObservedAt: observedAt}
	s.Counted = r.Counted
	for _, it := range r.Items {
		if !it.OK() {
			s.Complete = false
			problems := make([]string, len(it.Problems))
			for i, pr := range it.Problems {
				problems[i] = problemClass(pr)
			}
			s.Unread = append(s.Unread, problems)
			continue
		}
		s.Items = append(s.Items, verify.Item{Author: it.Author, Text: it.Text, Parent: it.Parent, URL: it.Link, At: it.Time,
			Media: verifyMedia(it.Media), Fields: it.Fields})
	}
	return s
}

// LandedResult is what the landed page read of the created item, as
// verify compares it: only the fields the adapter read (Read) count.
func (o Observed) LandedResult() verify.LandedResult {
	return verify.LandedResult{Text: o.Text, ReadText: slices.Contains(o.Read, "text"),
		Author: o.Author, ReadAuthor: slices.Contains(o.Read, "author"),
		Media: verifyMedia(o.Media), ReadMedia: slices.Contains(o.Read, "media"), Fields: o.Fields}
}

// verifyMedia is the media a page showed, as verify compares them.
func verifyMedia(ms []MediaSeen) []verify.Media {
	var out []verify.Media
	for _, m := range ms {
		out = append(out, verify.Media{Type: m.Type, Alt: m.Alt, AltShown: m.AltRead})
	}
	return out
}

// problemFields are the fields an item's problems name (readItems).
var problemFields = []string{"text", "author", "time", "parent", "link", "state"}

// problemClass names an item's read problem (Item.Problems) in fixed form,
// without anything the page said: "author missing", "link doubled", "time
// unparsable", "parent unusable" (an offsite or malformed URL), or
// "unreadable field" for a form it does not know.
func problemClass(problem string) string {
	problem = strings.TrimSpace(problem)
	for _, f := range problemFields {
		rest, ok := strings.CutPrefix(problem, f)
		if !ok {
			continue
		}
		switch {
		case rest == " missing", rest == " unparsable":
			return problem
		case strings.HasPrefix(rest, " matched "):
			return f + " doubled"
		case strings.HasPrefix(rest, ":"):
			return f + " unusable"
		}
		return f + " unreadable"
	}
	return "unreadable field"
}
