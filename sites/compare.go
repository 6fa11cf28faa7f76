package sites

import (
	"strings"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/kind"
)

// Comparison says which parts of an intent of one kind the adapter's
// search reads for each item, so that verification can compare them
// with the intent. A part not read is never compared: verification cannot
// see it, and an action whose intent fixes it must not be called verified
// on the search alone (see Uncompared). Like and follow read their
// control's state, not items: their Comparison is the zero value.
type Comparison struct {
	// Text: each item's text is read (with its title for a kind that
	// fills one). Always true for a kind that creates an item.
	Text bool
	// Author: each item's author is read, or implied by an own list (Own).
	Author bool
	// Own: the list is the actor's own; the author is not read per item.
	Own bool
	// Time: each item's time is read.
	Time bool
	// Link: each item's permalink is read. Always true for a kind that
	// creates an item.
	Link bool
	// Parent: each item's parent is read, per item or from the page
	// (ParentFromPage). Always true for reply and thread part (an adapter
	// without it is refused at load).
	Parent bool
	// ParentFromPage: the parent is the list page's own address
	// (parent: {page: true}), not read per item. It is compared only for an
	// intent whose target is that page itself; a target that names a part
	// of a page (a comment's #comment-2, a fragment the site's canonical
	// form keeps) cannot be compared (Uncompared names "parent").
	ParentFromPage bool
	// Media: each item's media (count and types) are read.
	Media bool
	// AltText: the media's alt texts are read too (the search does not
	// declare hides_alt).
	AltText bool
}

// Compares returns what the search that reconciles kind k reads per item.
func (d *Declarative) Compares(k kind.Kind) Comparison {
	a := d.spec.Actions.get(k)
	if a == nil || !k.Creates() {
		return Comparison{}
	}
	s := d.searchOf(a)
	if s == nil {
		return Comparison{}
	}
	c := Comparison{
		Text:           s.Text.set(),
		Author:         s.Own || s.Author.set(),
		Own:            s.Own,
		Time:           s.Time.set(),
		Link:           s.Link.set(),
		Parent:         s.Parent.set(),
		ParentFromPage: s.Parent != nil && s.Parent.Page,
		Media:          s.Media != nil,
		AltText:        s.Media != nil && !s.Media.HidesAlt,
	}
	if o := s.OpenEach; o != nil {
		// Read on each item's page instead, where declared there.
		c.Text = c.Text || o.Text.set()
		c.Author = c.Author || o.Author.set()
		c.Time = c.Time || o.Time.set()
		if o.Media != nil {
			c.Media, c.AltText = true, !o.Media.HidesAlt
		}
	}
	return c
}

// Uncompared names the parts the intent fixes that the search reconciling
// it cannot compare, in a fixed order: "parent" (a reply or thread part
// whose search reads no parent, or reads the page as every item's parent
// while the intent's target is a part of a page, see pageParentOf) and
// "media" (media the search does not read). nil when everything the intent
// fixes is compared. Alt texts a search does not show (hides_alt) are not
// named: the read-back before the click and the landed result cover them
// (docs/sites.md, Media). Fill refuses an intent with anything here, before
// anything is typed (ErrUnverifiable).
func (d *Declarative) Uncompared(in Intent) []string {
	if !in.Kind.Creates() || d.spec.Actions.get(in.Kind) == nil {
		return nil
	}
	c := d.Compares(in.Kind)
	var out []string
	if in.Kind.HasParent() && in.Target != "" {
		if !c.Parent || c.ParentFromPage && d.partOfPage(in.Kind, in.Target) {
			out = append(out, "parent")
		}
	}
	if len(in.Media) > 0 && !c.Media {
		out = append(out, "media")
	}
	return out
}

// partOfPage reports whether the canonical form of target, under kind k's
// rule, names a part of a page (it keeps a fragment): a comment on a
// post, not the post.
func (d *Declarative) partOfPage(k kind.Kind, target string) bool {
	return d.CanonicalFor(k, target) != d.CanonicalFor(k, withoutFragment(target))
}

// withoutFragment drops the fragment of a URL: what is left names the
// document a browser loads.
func withoutFragment(u string) string {
	if i := strings.IndexByte(u, '#'); i >= 0 {
		return u[:i]
	}
	return u
}

// pageParentOf returns the parent every item of a list on page has under
// parent: {page: true}, for the search q, or the problem that keeps it
// from being read. The parent is the page the list is on, which is the
// intent's target only when the target is that page itself: a target
// that names a part of a page (a comment's #comment-2) is not the parent
// of the page's comments, nor is the list on another page (a redirect,
// a second page the canonical form does not fold into the first). Its
// value is then the target's canonical form, which verification compares
// exactly; the problem reads as "parent unusable", so such items never
// match and the view is not complete.
func (d *Declarative) pageParentOf(page string, q Query) (parent, problem string) {
	switch {
	case !q.Kind.HasParent():
		return "", "parent: a " + string(q.Kind) + " has no parent, and the search reads the page as each item's"
	case q.Target == "":
		return "", "parent: no target to compare the list's page with"
	case d.partOfPage(q.Kind, q.Target):
		return "", "parent: the target is a part of a page (its fragment), and the search reads only the page as each item's parent"
	}
	want := d.CanonicalFor(q.Kind, q.Target)
	if browser.LooseURL(d.CanonicalFor(q.Kind, withoutFragment(page))) != browser.LooseURL(want) {
		return "", "parent: the list's page is not the target's page"
	}
	return want, ""
}
