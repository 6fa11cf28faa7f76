package sites

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/verify"
)

// Declarative is an Adapter built from a validated Spec. It is immutable and
// safe for concurrent use; each call works in the tab it is given.
type Declarative struct {
	name    string
	spec    Spec
	origins []string
	// now is the clock of the search window; tests replace it.
	now func() time.Time
	// Compiled from the spec, which validate checked.
	// canonical is the site's canonical rule; kindCanonical the actions'
	// own, for the kinds that declare one.
	canonical     canonicalRule
	kindCanonical map[kind.Kind]canonicalRule
	transforms    []rewrite
	// kindTransforms are the actions' own transforms, for the kinds that
	// declare them.
	kindTransforms map[kind.Kind][]rewrite
}

var _ Adapter = (*Declarative)(nil)

func newDeclarative(name string, spec Spec) *Declarative {
	d := &Declarative{name: name, spec: spec, origins: slices.Clone(spec.Origins), now: time.Now,
		transforms: compileRewrites(spec.Transforms), kindTransforms: map[kind.Kind][]rewrite{},
		canonical: compileCanonical(spec.Canonical), kindCanonical: map[kind.Kind]canonicalRule{}}
	for _, k := range kind.All {
		if a := spec.Actions.get(k); a != nil && a.Transforms != nil {
			d.kindTransforms[k] = compileRewrites(a.Transforms)
		}
		if a := spec.Actions.get(k); a != nil && a.Canonical != nil {
			d.kindCanonical[k] = compileCanonical(a.Canonical)
		}
	}
	return d
}

// Name returns the site's name.
func (d *Declarative) Name() string { return d.name }

// Origins returns the site's origins; the first is primary.
func (d *Declarative) Origins() []string { return slices.Clone(d.origins) }

// Spec returns a copy of the adapter's configuration.
func (d *Declarative) Spec() Spec { return d.spec }

// StateLabels returns the values of a like or follow control that mean
// done and not done, as the adapter declares them; ok is false for other
// kinds or when the site does not configure the kind.
func (d *Declarative) StateLabels(k kind.Kind) (done, notDone string, ok bool) {
	a := d.spec.Actions.get(k)
	if a == nil || a.State == nil {
		return "", "", false
	}
	return a.State.DoneValue, a.State.NotDoneValue, true
}

// Moderates reports whether the site may hold what an action of kind k
// creates for moderation (the action's moderation, else the site's).
func (d *Declarative) Moderates(k kind.Kind) bool {
	a := d.spec.Actions.get(k)
	return a != nil && k.Creates() && d.moderationOf(a) != nil
}

func (d *Declarative) moderationOf(a *ActionSpec) *ModerationSpec {
	if a.Moderation != nil {
		return a.Moderation
	}
	return d.spec.Moderation
}

// OpensPerIntent reports whether the page kind k opens is named by the
// intent (its open takes {title} or the target's parts): preflight then
// checks that the action landed on that page.
func (d *Declarative) OpensPerIntent(k kind.Kind) bool {
	a := d.spec.Actions.get(k)
	return a != nil && (a.opensByTitle() || a.opensByTarget())
}

// KeepsDrafts reports whether the site's editor for kind k saves drafts
// by itself (actions.KIND.drafts).
func (d *Declarative) KeepsDrafts(k kind.Kind) bool {
	a := d.spec.Actions.get(k)
	return a != nil && a.Drafts
}

// Supports reports whether the site configures the kind.
func (d *Declarative) Supports(k kind.Kind) bool { return d.spec.Actions.get(k) != nil }

// WithOrigins returns a copy of the adapter on other origins, for example a
// demosite on a random loopback port. The templates are checked again.
func (d *Declarative) WithOrigins(origins ...string) (*Declarative, error) {
	spec := d.spec
	spec.Origins = slices.Clone(origins)
	if p := spec.validate(); len(p) > 0 {
		return nil, fmt.Errorf("%w: %s: %s", ErrInvalid, d.name, strings.Join(p, "; "))
	}
	return newDeclarative(d.name, spec), nil
}

func (d *Declarative) action(k kind.Kind) (*ActionSpec, error) {
	a := d.spec.Actions.get(k)
	if a == nil {
		return nil, fmt.Errorf("%s: %w: %q", d.name, ErrUnsupported, k)
	}
	return a, nil
}

// checkOrigin returns a HardStop of kind offsite unless the tab shows a page
// on one of the site's origins.
func (d *Declarative) checkOrigin(ctx context.Context, tab *browser.Tab) (string, error) {
	u, err := tab.URL(ctx)
	if err != nil {
		return "", err
	}
	if err := d.onOrigin(u); err != nil {
		return u, hardStop(StopOffsite, err, "the tab left the site")
	}
	return u, nil
}

// OpenLogin navigates to the site's sign-in page (identity.login_url),
// else to the identity page, for a person to sign in.
func (d *Declarative) OpenLogin(ctx context.Context, tab *browser.Tab) (int, error) {
	if d.spec.Identity.LoginURL == "" {
		return d.OpenHome(ctx, tab)
	}
	u, err := d.expandURL(d.spec.Identity.LoginURL, "", "")
	if err != nil {
		return 0, err
	}
	return d.navigate(ctx, tab, u)
}

// OpenHome navigates to the identity page.
func (d *Declarative) OpenHome(ctx context.Context, tab *browser.Tab) (int, error) {
	u, err := d.expandURL(d.spec.Identity.URL, "", "")
	if err != nil {
		return 0, err
	}
	return d.navigate(ctx, tab, u)
}

func (d *Declarative) navigate(ctx context.Context, tab *browser.Tab, u string) (int, error) {
	status, err := tab.Navigate(ctx, u)
	if err != nil {
		return status, err
	}
	if _, err := d.checkOrigin(ctx, tab); err != nil {
		return status, err
	}
	return status, nil
}

// Identity reads the signed-in handle on the current page, the way every
// caller reads it (preflight, login, sites check): once the page is ready
// (the site's ready), after the identity's steps (opening an account
// menu), from the identity element (waited for up to identity.wait) or
// the site's JSON answer (identity.json). No identity is a HardStop of
// kind login that says what was looked for; several elements are one of
// kind selector_ambiguous.
func (d *Declarative) Identity(ctx context.Context, tab *browser.Tab) (string, error) {
	id := d.spec.Identity
	if err := d.waitReady(ctx, tab, nil); err != nil {
		return "", hardStop(StopLogin, err, "the page never became ready to show who is signed in")
	}
	if err := d.runSteps(ctx, tab, id.Steps, "identity.steps", nil); err != nil {
		return "", hardStop(StopLogin, err, "the steps that show who is signed in failed")
	}
	var v string
	var err error
	if id.JSON != nil {
		v, err = d.identityJSON(ctx, tab, id.JSON)
		if err != nil {
			return "", err
		}
	} else {
		if id.Wait != nil {
			// Drawn late: an element that never shows is nobody, below.
			_ = tab.WaitVisible(ctx, id.Selector, time.Duration(*id.Wait))
		}
		if id.Attribute != "" {
			v, err = tab.Attr(ctx, id.Selector, id.Attribute)
		} else {
			v, err = tab.Text(ctx, id.Selector)
		}
		switch {
		case errors.Is(err, browser.ErrNotFound):
			return "", hardStop(StopLogin, err, "no signed-in identity on the page (identity.selector %q matched nothing)", id.Selector)
		case errors.Is(err, browser.ErrSelectorAmbiguous):
			return "", hardStop(StopSelectorAmbiguous, err, "identity")
		case err != nil:
			return "", err
		}
	}
	v = strings.TrimPrefix(strings.TrimSpace(v), "@")
	if v == "" {
		return "", hardStop(StopLogin, nil, "empty identity on the page")
	}
	return d.loginOf(v, id.Shows), nil
}

// ReadsIdentityInPlace reports whether Identity only reads the page it is
// given: no steps that click, no answer to fetch. browserop login then
// reads it in the tab the person signs in with, sending nothing to the
// site.
func (d *Declarative) ReadsIdentityInPlace() bool {
	return len(d.spec.Identity.Steps) == 0 && d.spec.Identity.JSON == nil
}

// identityJSON fetches j's URL from the current page, with its cookies,
// and returns the string at j's path.
func (d *Declarative) identityJSON(ctx context.Context, tab *browser.Tab, j *IdentityJSONSpec) (string, error) {
	u, err := d.expandURL(j.URL, "", "")
	if err != nil {
		return "", err
	}
	status, body, err := tab.FetchText(ctx, u)
	if err != nil {
		return "", err
	}
	switch {
	case status == 401 || status == 403 || status >= 300 && status < 400:
		// Refused, or sent to sign in.
		return "", hardStop(StopLogin, nil, "identity.json answered %d: nobody signed in", status)
	case status != 200:
		return "", fmt.Errorf("identity.json answered %d", status)
	}
	var doc any
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		return "", fmt.Errorf("identity.json: the answer is not JSON: %v", err)
	}
	for _, key := range strings.Split(j.Path, ".") {
		switch node := doc.(type) {
		case map[string]any:
			doc = node[key]
		case []any:
			i, err := strconv.Atoi(key)
			if err != nil || i < 0 || i >= len(node) {
				doc = nil
			} else {
				doc = node[i]
			}
		default:
			doc = nil
		}
	}
	v, ok := doc.(string)
	if !ok || strings.TrimSpace(v) == "" {
		return "", hardStop(StopLogin, nil, "identity.json: no name at %s: nobody signed in", j.Path)
	}
	return v, nil
}

// Blocker checks the blocker rules in order and returns the first that
// matches: its selector matches at least one element and, when it has a
// status, the document's status is that status.
func (d *Declarative) Blocker(ctx context.Context, tab *browser.Tab, status int) (Blocker, error) {
	for _, b := range d.spec.Blockers {
		if b.Status != 0 && b.Status != status {
			continue
		}
		detail := fmt.Sprintf("status %d", status)
		if b.Selector != "" {
			n, err := tab.Count(ctx, b.Selector)
			if err != nil {
				return Blocker{}, err
			}
			if n == 0 {
				continue
			}
			detail = fmt.Sprintf("%q on the page", b.Selector)
			if b.Status != 0 {
				detail += fmt.Sprintf(" with status %d", status)
			}
		}
		return Blocker{Kind: BlockerKind(b.Kind), Detail: detail}, nil
	}
	return Blocker{}, nil
}

// Open navigates to where the intent is performed. A target or landing page
// off the site's origins is a HardStop of kind target or offsite, and the
// target is refused before any navigation.
func (d *Declarative) Open(ctx context.Context, tab *browser.Tab, in Intent) (int, error) {
	u, err := d.OpenURL(in)
	if err != nil {
		return 0, err
	}
	return d.navigate(ctx, tab, u)
}

// OpenURL is the address Open navigates to for in: the action's open
// template filled for it.
func (d *Declarative) OpenURL(in Intent) (string, error) {
	a, err := d.action(in.Kind)
	if err != nil {
		return "", err
	}
	v := d.varsOf(a, in.Actor, in.Target, in.Text)
	v.fields = in.Fields
	return d.expand(a.Open, v)
}

// varsOf is what an action's templates are filled with.
func (d *Declarative) varsOf(a *ActionSpec, actor, target, text string) urlVars {
	v := urlVars{actor: actor, target: target, text: text}
	if a.Target != nil {
		v.pattern = compiled(a.Target.whole())
	}
	return v
}

// describeMismatch says where two texts part, without quoting them whole.
func describeMismatch(want, got string) string {
	w, g := []rune(want), []rune(got)
	i := 0
	for i < len(w) && i < len(g) && w[i] == g[i] {
		i++
	}
	return fmt.Sprintf("the page holds %d characters where %d were meant, differing from character %d", len(g), len(w), i)
}

// readState reads a toggle control. Anything but exactly one element with
// the done value or the not-done value is a HardStop.
func (d *Declarative) readState(ctx context.Context, tab *browser.Tab, st *StateSpec) (string, bool, error) {
	v, err := tab.Attr(ctx, st.Selector, st.Attribute)
	switch {
	case errors.Is(err, browser.ErrSelectorAmbiguous):
		return "", false, hardStop(StopStateUnknown, err, "control")
	case err != nil:
		return "", false, err
	}
	switch {
	case v == st.DoneValue:
		return v, true, nil
	case v == st.NotDoneValue:
		return v, false, nil
	}
	return v, false, hardStop(StopStateUnknown, nil, "control shows %q", excerpt(v))
}

// Result reads the page the submission landed on. Every failure wraps
// ErrOutcomeUnknown: a page off the site (HardStop offsite), a blocker screen
// (HardStop of its kind), or a result that cannot be read exactly.
func (d *Declarative) Result(ctx context.Context, tab *browser.Tab, in Intent) (Observed, error) {
	a, err := d.action(in.Kind)
	if err != nil {
		return Observed{}, err
	}
	obs, err := d.result(ctx, tab, in.Kind, a)
	return obs, ambiguous(err)
}

// result reads the landed page of a, the action of kind k; its links are
// in k's canonical form.
func (d *Declarative) result(ctx context.Context, tab *browser.Tab, k kind.Kind, a *ActionSpec) (Observed, error) {
	page, err := d.checkOrigin(ctx, tab)
	if err != nil {
		return Observed{PageURL: page}, err
	}
	obs := Observed{PageURL: page}
	status, err := tab.Status(ctx)
	if err != nil {
		return obs, err
	}
	if blk, err := d.Blocker(ctx, tab, status); err != nil {
		return obs, err
	} else if blk.Blocked() {
		return obs, hardStop(StopKindOf(blk.Kind), nil, "%s", blk.Detail)
	}
	if a.State != nil {
		obs.State, obs.Done, err = d.readState(ctx, tab, a.State)
		return obs, err
	}
	r := a.Result
	if status >= 400 {
		return obs, fmt.Errorf("the landed page answered %d", status)
	}
	if m := d.moderationOf(a); m != nil {
		n, err := tab.Count(ctx, m.Selector)
		if err != nil {
			return obs, err
		}
		obs.Moderated = n > 0
	}
	if r.Item == "" {
		// The landed page's own address is the result (a comment's
		// permalink with its declared fragment).
		obs.URL, obs.Read = d.CanonicalFor(k, page), []string{"link"}
		return obs, nil
	}
	if err := tab.WaitVisible(ctx, r.Item, 0); err != nil {
		return obs, fmt.Errorf("no result on the landed page (status %d): %w", status, err)
	}
	// A parent read from the landed page is that page's document (its
	// fragment names the new item, not its parent).
	items, err := d.readItems(ctx, tab, page, itemFields{ItemSpec: r.ItemSpec, kind: k, pageParent: d.CanonicalFor(k, withoutFragment(page))})
	if err != nil {
		return obs, err
	}
	if len(items) != 1 {
		return obs, hardStop(StopSelectorAmbiguous, &browser.SelectorError{Selector: r.Item, Count: len(items)}, "result")
	}
	it := items[0]
	if !it.OK() {
		return obs, fmt.Errorf("result not readable: %s", strings.Join(it.Problems, "; "))
	}
	obs.URL, obs.Author, obs.Text, obs.Parent, obs.Time, obs.Media = it.Link, it.Author, it.Text, it.Parent, it.Time, it.Media
	obs.Fields = it.Fields
	for _, f := range []struct {
		name string
		fs   *FieldSpec
	}{{"link", r.Link}, {"text", r.Text}, {"author", r.Author}, {"time", r.Time}, {"parent", r.Parent}} {
		if f.fs.set() {
			obs.Read = append(obs.Read, f.name)
		}
	}
	if r.Media != nil {
		obs.Read = append(obs.Read, "media")
	}
	return obs, nil
}

// StopKindOf maps a blocker to the HardStop kind of the same name.
func StopKindOf(k BlockerKind) HardStopKind { return HardStopKind(k) }

// itemFields are the items readItems reads, a result's or a search's, and
// what the page implies of them. own: every item is the actor's (author
// implied by the page). kind is the action they are read for: its
// canonical rule puts their links and parents in canonical form.
type itemFields struct {
	ItemSpec
	own   bool
	actor string
	kind  kind.Kind
	// pageParent, for a parent read from the page (parent: {page: true}),
	// is every item's parent, unless pageProblem says why it cannot be
	// read (pageParentOf).
	pageParent, pageProblem string
}

// readItems reads every item on the page (f.Item) and checks each field:
// exactly one element (or the item itself), a parsable time, links on the
// site.
func (d *Declarative) readItems(ctx context.Context, tab *browser.Tab, pageURL string, f itemFields) ([]Item, error) {
	var fields []browser.Field
	add := func(name string, fs *FieldSpec) {
		if fs.set() && !fs.Page {
			fields = append(fields, browser.Field{Name: name, Selector: fs.Selector, Attr: fs.Attribute})
		}
	}
	add("title", f.Title)
	add("text", f.Text)
	add("author", f.Author)
	add("time", f.Time)
	add("parent", f.Parent)
	add("link", f.Link)
	fields = append(fields, mediaFields(f.Media)...)
	fields = append(fields, entryFieldExtract(f.EntryFields)...)
	raw, err := tab.Extract(ctx, f.Item, fields)
	if err != nil {
		return nil, err
	}
	items := make([]Item, 0, len(raw))
	for _, m := range raw {
		var it Item
		get := func(name string, fs *FieldSpec) (string, bool) {
			if !fs.set() || fs.Page {
				return "", false
			}
			v := m[name]
			switch {
			case v.Count == 0 || !v.Present:
				it.Problems = append(it.Problems, name+" missing")
				return "", false
			case v.Count > 1:
				it.Problems = append(it.Problems, fmt.Sprintf("%s matched %d elements", name, v.Count))
				return "", false
			}
			got, ok := fs.capture(v.Value)
			if !ok {
				it.Problems = append(it.Problems, fmt.Sprintf("%s %q does not match its pattern", name, excerpt(v.Value)))
			}
			return got, ok
		}
		if v, ok := get("text", f.Text); ok {
			it.Text = v
			if t, ok := get("title", f.Title); ok {
				it.Text = strings.TrimSpace(t) + "\n" + strings.TrimSpace(v)
			}
		}
		if f.own {
			it.Author = f.actor
		} else if v, ok := get("author", f.Author); ok {
			it.Author = d.loginOf(strings.TrimPrefix(strings.TrimSpace(v), "@"), f.Author.Shows)
		}
		if v, ok := get("time", f.Time); ok {
			t, err := parseTime(f.Time, strings.TrimSpace(v))
			if err != nil {
				it.Problems = append(it.Problems, "time unparsable")
			} else {
				it.Time = t
			}
		}
		if f.Parent != nil && f.Parent.Page {
			if f.pageProblem != "" {
				it.Problems = append(it.Problems, f.pageProblem)
			} else {
				it.Parent = f.pageParent
			}
		} else if v, ok := get("parent", f.Parent); ok && strings.TrimSpace(v) != "" {
			if u, _, err := d.fieldURL(f.kind, pageURL, f.Parent, strings.TrimSpace(v)); err != nil {
				it.Problems = append(it.Problems, "parent: "+err.Error())
			} else {
				it.Parent = u
			}
		}
		if f.Link != nil && f.Link.Page {
			it.Link, it.RawLink = d.CanonicalFor(f.kind, pageURL), pageURL
		} else if v, ok := get("link", f.Link); ok {
			if u, raw, err := d.fieldURL(f.kind, pageURL, f.Link, strings.TrimSpace(v)); err != nil {
				it.Problems = append(it.Problems, "link: "+err.Error())
			} else {
				it.Link, it.RawLink = u, raw
			}
		}
		it.Media = readMedia(f.Media, m)
		var fieldProblems []string
		it.Fields, fieldProblems = readEntryFields(f.EntryFields, m)
		it.Problems = append(it.Problems, fieldProblems...)
		items = append(items, it)
	}
	return items, nil
}

// capture is the value a field reads from what the page shows: v itself,
// or, with a Pattern, what its one group captured in v trimmed (false
// when it does not match).
func (f *FieldSpec) capture(v string) (string, bool) {
	if f.Pattern == "" {
		return v, true
	}
	got := compiled(f.Pattern).FindStringSubmatch(strings.TrimSpace(v))
	if got == nil {
		return "", false
	}
	return got[1], true
}

// parseTime reads a time as a field declares it: RFC 3339 by default, or
// its layout in its zone.
func parseTime(f *FieldSpec, v string) (time.Time, error) {
	if f.Layout == "" {
		return time.Parse(time.RFC3339Nano, v)
	}
	loc := time.UTC
	if f.Zone != "" {
		l, err := time.LoadLocation(f.Zone)
		if err != nil {
			return time.Time{}, err
		}
		loc = l
	}
	return time.ParseInLocation(f.Layout, v, loc)
}

// fieldURL turns a link field's value into an absolute URL on the site,
// in kind k's canonical form, and returns as raw the same URL before the
// canonical rule (Item.RawLink).
func (d *Declarative) fieldURL(k kind.Kind, pageURL string, fs *FieldSpec, v string) (canonical, raw string, err error) {
	if fs.Template != "" {
		u, err := d.expandValue(fs.Template, v)
		if err != nil {
			return "", "", err
		}
		v = u
	}
	return d.resolveRaw(k, pageURL, v)
}

// Search finds the live results of q. For like and follow it opens the
// target and reads the control. For the kinds that create posts it walks the
// actor's timeline from the newest item, page by page, until an item of the
// actor older than the window's start (Complete), the last page (Complete),
// or max_pages (not Complete). Items are every item on the pages read, with
// the author the page states; filtering and exact matching are verify's.
// With search.count, the site's count is read on every page and compared
// with the items read there (SearchResult.Counted; a disagreement leaves
// the result not Complete).
func (d *Declarative) Search(ctx context.Context, tab *browser.Tab, q Query) (SearchResult, error) {
	a, err := d.action(q.Kind)
	if err != nil {
		return SearchResult{}, err
	}
	if a.State != nil {
		return d.searchState(ctx, tab, q, a)
	}
	s := d.searchOf(a)
	agreed := true
	res, err := d.searchList(ctx, tab, q, s, &agreed)
	if err == nil && s.OpenEach != nil {
		err = d.openEach(ctx, tab, q, s, &res)
	}
	markMergedLinks(res.Items)
	if s.Count != "" {
		// The site's own count must agree with what was read on every
		// page read: a disagreement means the item selector misses
		// items (or sees others), and the view proves nothing.
		res.Counted = agreed && err == nil && res.Pages > 0
		if !agreed {
			res.Complete = false
		}
	}
	return res, err
}

// problemMergedLink is the problem of items whose canonical links are one
// although they are different items.
const problemMergedLink = "link: its canonical form is another item's too: the site's canonical rule drops what tells them apart"

// markMergedLinks marks the items read without problems whose canonical
// link is that of another item with another author, text or parent, or
// that the page linked under another address: the adapter's canonical
// form drops what identifies an item (a comment's fragment, the post's
// id), so a link cannot tell this action's result from an older twin (the
// baseline would call it old, verification one match of two). Each
// becomes an item with a problem ("link unusable"): never a match, and
// the view is not complete. The same item listed twice (a post that moved
// to the next page during the walk) is not marked: it is the same
// address both times.
func markMergedLinks(items []Item) {
	type seen struct{ author, text, parent, raw string }
	first := map[string]seen{}
	merged := map[string]bool{}
	for _, it := range items {
		if !it.OK() || it.Link == "" {
			continue
		}
		s := seen{it.Author, it.Text, it.Parent, verify.NormalizeURL(it.RawLink)}
		if f, ok := first[it.Link]; !ok {
			first[it.Link] = s
		} else if f != s {
			merged[it.Link] = true
		}
	}
	for i := range items {
		if merged[items[i].Link] && items[i].OK() {
			items[i].Problems = append(items[i].Problems, problemMergedLink)
		}
	}
}

// readCount reads a search's count on the current page: the first integer
// in the text of the one element sel matches. ok is false when sel does
// not match exactly one element or its text holds no integer.
func readCount(ctx context.Context, tab *browser.Tab, sel string) (n int, ok bool, err error) {
	texts, err := tab.Texts(ctx, sel)
	if err != nil || len(texts) != 1 {
		return 0, false, err
	}
	m := firstInt.FindString(texts[0])
	if m == "" {
		return 0, false, nil
	}
	n, err = strconv.Atoi(m)
	if err != nil {
		return 0, false, nil // more digits than an int holds
	}
	return n, true, nil
}

// firstInt finds the first run of ASCII digits ("1,234" reads as 1).
var firstInt = regexp.MustCompile(`[0-9]+`)

// searchList walks a list search (see Search); agreed is cleared when the
// search's count disagrees with the items read on a page.
func (d *Declarative) searchList(ctx context.Context, tab *browser.Tab, q Query, s *SearchSpec, agreed *bool) (SearchResult, error) {
	res := SearchResult{Settle: time.Duration(*s.Settle), Since: q.Since}
	if s.SurfaceWithin != nil {
		res.SurfaceWithin = time.Duration(*s.SurfaceWithin)
	}
	if res.Since.IsZero() {
		res.Since = d.now().Add(-time.Duration(s.Lookback))
	}
	a, err := d.action(q.Kind)
	if err != nil {
		return res, err
	}
	next, err := d.expand(s.URL, d.varsOf(a, q.Actor, q.Target, q.Text))
	if err != nil {
		return res, err
	}
	fields := itemFields{ItemSpec: s.ItemSpec, own: s.Own, actor: q.Actor, kind: q.Kind}
	for res.Pages < s.MaxPages {
		status, err := d.navigate(ctx, tab, next)
		if err != nil {
			return res, err
		}
		res.Pages++
		if blk, err := d.Blocker(ctx, tab, status); err != nil {
			return res, err
		} else if blk.Blocked() {
			return res, hardStop(StopKindOf(blk.Kind), nil, "%s", blk.Detail)
		}
		if e := s.Empty; e != nil && status == e.Status {
			empty, err := d.saysEmpty(ctx, tab, s)
			if err != nil {
				return res, err
			}
			if empty {
				// The site says the list has no item (more): what was
				// read is the whole of it, and the site counted it, as
				// a count would.
				res.Complete, res.Counted = true, len(res.Items) == 0
				return res, nil
			}
		}
		if status != 200 {
			return res, fmt.Errorf("search page answered %d", status)
		}
		if err := d.waitReady(ctx, tab, nil); err != nil {
			return res, err
		}
		page, err := tab.URL(ctx)
		if err != nil {
			return res, err
		}
		if s.Parent != nil && s.Parent.Page {
			fields.pageParent, fields.pageProblem = d.pageParentOf(page, q)
		}
		items, err := d.readItems(ctx, tab, page, fields)
		if err != nil {
			return res, err
		}
		if s.Count != "" {
			n, ok, err := readCount(ctx, tab, s.Count)
			if err != nil {
				return res, err
			}
			if !ok || n != len(items) {
				*agreed = false
			}
		}
		res.Items = append(res.Items, items...)
		// The list is newest first, so once an item of the actor is older
		// than the window, the window is covered. Items of other authors
		// (injected or shared) do not count: their times prove nothing
		// about the actor's list. Items without a time never end the walk.
		for _, it := range items {
			if it.OK() && it.Author == q.Actor && !it.Time.IsZero() && it.Time.Before(res.Since) {
				res.Complete = true
			}
		}
		if res.Complete {
			return res, nil
		}
		if s.CompleteMarker != "" {
			n, err := tab.Count(ctx, s.CompleteMarker)
			if err != nil {
				return res, err
			}
			if n > 0 {
				// The last page, unless it links a next one: a marker
				// that matches on every page would end every walk at its
				// first page and call it whole.
				more := 0
				if s.Next != "" {
					if more, err = tab.Count(ctx, s.Next); err != nil {
						return res, err
					}
				}
				res.Complete = more == 0
				return res, nil
			}
		}
		if s.Next == "" {
			return res, nil
		}
		href, err := tab.Attr(ctx, s.Next, "href")
		if errors.Is(err, browser.ErrNotFound) {
			if s.CompleteMarker == "" {
				// No next link and no marker to say otherwise: the end.
				res.Complete = true
			}
			return res, nil
		}
		if err != nil {
			return res, err
		}
		if next, err = d.resolvePage(page, href); err != nil {
			return res, hardStop(StopOffsite, err, "next page link")
		}
	}
	return res, nil
}

// saysEmpty reports whether the page, once ready, is the site's word that
// s's list is empty: exactly one element of s.Empty.Selector, whose text
// matches s.Empty.Text, and no item (and, with a count, a count of none)
// on it. An answer that shows an item is no empty list, whatever else it
// says.
func (d *Declarative) saysEmpty(ctx context.Context, tab *browser.Tab, s *SearchSpec) (bool, error) {
	if err := d.waitReady(ctx, tab, nil); err != nil {
		return false, err
	}
	e := s.Empty
	texts, err := tab.Texts(ctx, e.Selector)
	if err != nil || len(texts) != 1 || !compiled(e.Text).MatchString(cleanMessage(texts[0])) {
		return false, err
	}
	if n, err := tab.Count(ctx, s.Item); err != nil || n != 0 {
		return false, err
	}
	if s.Count != "" {
		n, ok, err := readCount(ctx, tab, s.Count)
		if err != nil || (ok && n != 0) {
			return false, err
		}
	}
	return true, nil
}

// Problems of an item that open_each could not read on its own page.
const (
	problemNotOpened  = "text not read: the walk opens at most open_each.max items"
	problemOpenedElse = "text not read: its page opened at another address"
)

// openEach reads, for the items of res in order, the fields s.OpenEach
// names on each item's own page (its link), and puts them in the item in
// place of the list's. An item without a usable link, or past max, is not
// opened: it keeps a problem, never matches, and the view is not
// complete. An item whose page redirects elsewhere, or does not show
// exactly one OpenEach.Item, gets a problem too. A failure to open or
// read a page ends the walk with its error.
func (d *Declarative) openEach(ctx context.Context, tab *browser.Tab, q Query, s *SearchSpec, res *SearchResult) error {
	o := s.OpenEach
	fields := itemFields{ItemSpec: o.ItemSpec, own: s.Own && !o.Author.set(), actor: q.Actor, kind: q.Kind}
	fields.Link, fields.Parent = nil, nil
	opened := 0
	for i := range res.Items {
		it := &res.Items[i]
		if it.Link == "" || !it.OK() {
			continue // already unusable: nothing to read for it
		}
		if opened == o.Max {
			it.Problems = append(it.Problems, problemNotOpened)
			res.Complete = false
			continue
		}
		opened++
		at := cmp.Or(it.RawLink, it.Link)
		status, err := d.navigate(ctx, tab, at)
		if err != nil {
			return err
		}
		if blk, err := d.Blocker(ctx, tab, status); err != nil {
			return err
		} else if blk.Blocked() {
			return hardStop(StopKindOf(blk.Kind), nil, "%s", blk.Detail)
		}
		if status != 200 {
			return fmt.Errorf("the page of search item %s answered %d", at, status)
		}
		if err := d.waitReady(ctx, tab, nil); err != nil {
			return err
		}
		page, err := tab.URL(ctx)
		if err != nil {
			return err
		}
		if browser.LooseURL(d.CanonicalFor(q.Kind, page)) != browser.LooseURL(it.Link) {
			it.Problems = append(it.Problems, problemOpenedElse)
			continue
		}
		got, err := d.readItems(ctx, tab, page, fields)
		if err != nil {
			return err
		}
		if len(got) != 1 {
			it.Problems = append(it.Problems, fmt.Sprintf("text not read: its page shows %d elements of open_each.item, want exactly 1", len(got)))
			continue
		}
		mergeOpened(it, got[0], o)
	}
	return nil
}

// mergeOpened puts into it what its own page showed (from), for the
// fields o reads there.
func mergeOpened(it *Item, from Item, o *OpenEachSpec) {
	if o.Text.set() {
		it.Text = from.Text
	}
	if o.Author.set() {
		it.Author = from.Author
	}
	if o.Time.set() {
		it.Time = from.Time
	}
	if o.Media != nil {
		it.Media = from.Media
	}
	for n, texts := range from.Fields {
		if it.Fields == nil {
			it.Fields = map[string][]string{}
		}
		it.Fields[n] = texts
	}
	for _, pr := range from.Problems {
		it.Problems = append(it.Problems, pr+" (on its page)")
	}
}

// searchOf returns the search of an action that creates an item: its own,
// else the site's.
func (d *Declarative) searchOf(a *ActionSpec) *SearchSpec {
	if a.Search != nil {
		return a.Search
	}
	return d.spec.Search
}

// searchState reads a like or follow control on the target.
func (d *Declarative) searchState(ctx context.Context, tab *browser.Tab, q Query, a *ActionSpec) (SearchResult, error) {
	res := SearchResult{Since: q.Since, Settle: 0}
	if d.spec.Search != nil && d.spec.Search.Settle != nil {
		res.Settle = time.Duration(*d.spec.Search.Settle)
	}
	u, err := d.expand(a.Open, d.varsOf(a, q.Actor, q.Target, ""))
	if err != nil {
		return res, err
	}
	status, err := d.navigate(ctx, tab, u)
	if err != nil {
		return res, err
	}
	res.Pages = 1
	if blk, err := d.Blocker(ctx, tab, status); err != nil {
		return res, err
	} else if blk.Blocked() {
		return res, hardStop(StopKindOf(blk.Kind), nil, "%s", blk.Detail)
	}
	if err := d.waitReady(ctx, tab, a.Ready); err != nil {
		return res, err
	}
	state, done, err := d.readState(ctx, tab, a.State)
	if err != nil {
		return res, err
	}
	page, err := tab.URL(ctx)
	if err != nil {
		return res, err
	}
	res.Items = []Item{{Link: page, Author: q.Actor, State: state, Done: done}}
	res.Complete = true
	return res, nil
}

// Preflight runs the checks due before every mutation on the current page:
// the page is on the site's origins, no blocker screen shows (given the
// document's status), and the signed-in identity is actor. Each failure is a
// *HardStop of kind offsite, the blocker's kind, login or identity_mismatch.
func Preflight(ctx context.Context, a Adapter, tab *browser.Tab, actor string, status int) error {
	_, err := PreflightURL(ctx, a, tab, actor, status)
	return err
}

// PreflightURL is Preflight that also returns the URL of the page it
// checked, so the caller can tell later whether a submission navigated on.
func PreflightURL(ctx context.Context, a Adapter, tab *browser.Tab, actor string, status int) (string, error) {
	u, err := tab.URL(ctx)
	if err != nil {
		return "", err
	}
	origin := browser.Origin(u)
	if !slices.Contains(a.Origins(), origin) {
		return "", hardStop(StopOffsite, nil, "the page is on %q, not on the site", origin)
	}
	blk, err := a.Blocker(ctx, tab, status)
	if err != nil {
		return "", err
	}
	if blk.Blocked() {
		return "", hardStop(StopKindOf(blk.Kind), nil, "%s", blk.Detail)
	}
	who, err := a.Identity(ctx, tab)
	if err != nil {
		return "", err
	}
	if who != actor {
		return "", hardStop(StopIdentityMismatch, nil, "signed in as %q, the action is for %q", who, actor)
	}
	return u, nil
}
