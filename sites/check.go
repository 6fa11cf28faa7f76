package sites

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/kind"
)

// CheckReport is what Check saw on a signed-in profile: each page the
// adapter names, how many elements each selector matched there, the
// identity read, and the first items each search read.
type CheckReport struct {
	Site     string `json:"site"`
	Identity string `json:"identity,omitempty"`
	// IdentityError says why no identity was read.
	IdentityError string        `json:"identity_error,omitempty"`
	Pages         []PageCheck   `json:"pages"`
	Searches      []SearchCheck `json:"searches"`
}

// PageCheck is one page Check opened.
type PageCheck struct {
	// Key names where the adapter names the page ("identity.url",
	// "actions.reply.open").
	Key    string `json:"key"`
	URL    string `json:"url,omitempty"`
	Status int    `json:"status,omitempty"`
	// Skipped or Error say why the page was not read.
	Skipped   string          `json:"skipped,omitempty"`
	Error     string          `json:"error,omitempty"`
	Selectors []SelectorCount `json:"selectors,omitempty"`
}

// SelectorCount is how many elements a selector matched on a page, and
// when it was counted.
type SelectorCount struct {
	Key      string `json:"key"`
	Selector string `json:"selector"`
	Count    int    `json:"count"`
	Error    string `json:"error,omitempty"`
	// When says at which point of the action it was counted (Checked*):
	// where it must exist, or before the point where it would.
	When string `json:"when,omitempty"`
	// Problem, when set, says why the selector fails where it is used: a
	// field that after the steps before filling matches no element, or
	// several.
	Problem string `json:"problem,omitempty"`
}

// When a selector of an action was counted.
const (
	// CheckedAtOpen: on the opened page, once ready.
	CheckedAtOpen = "at open"
	// CheckedAfterBefore: after the steps before filling, where the
	// fields must be.
	CheckedAfterBefore = "after before"
	// CheckedBeforeText: where the action would type its text; steps
	// and the committing control come after it, and may show only then
	// (check does not type): a count of 0 there is no problem.
	CheckedBeforeText = "before the text"
)

// SearchCheck is one search Check ran: its first items and why any of
// them could not be read.
type SearchCheck struct {
	Kind     kind.Kind `json:"kind"`
	URL      string    `json:"url,omitempty"`
	Pages    int       `json:"pages"`
	Complete bool      `json:"complete"`
	Items    []Item    `json:"items"`
	// Total is how many items the search read in all.
	Total   int    `json:"total"`
	Skipped string `json:"skipped,omitempty"`
	Error   string `json:"error,omitempty"`
	// Counted is the search's SearchResult.Counted: its count (search.count)
	// agreed with the items read on every page.
	Counted bool `json:"counted"`
	// Blind, when set, says why the search cannot prove that an item is
	// absent (see blindness): sites check then fails.
	Blind string `json:"blind,omitempty"`
}

// Problems lists, one line each, what makes the adapter unfit to publish
// with as Check saw it: an identity not read, a page that failed to open
// or become ready, a step before filling that failed, a field that is not
// one element where it is filled, a selector that is not valid, and a
// search that failed or cannot prove absence. A skipped page or search is
// no problem.
func (r CheckReport) Problems() []string {
	var out []string
	if r.IdentityError != "" {
		out = append(out, "identity: "+r.IdentityError)
	}
	for _, p := range r.Pages {
		if p.Error != "" {
			out = append(out, p.Key+": "+p.Error)
		}
		for _, s := range p.Selectors {
			switch {
			case s.Error != "":
				out = append(out, fmt.Sprintf("%s %q: %s", s.Key, s.Selector, s.Error))
			case s.Problem != "":
				out = append(out, fmt.Sprintf("%s %q: %s", s.Key, s.Selector, s.Problem))
			}
		}
	}
	for _, s := range r.Searches {
		switch {
		case s.Blind != "":
			out = append(out, fmt.Sprintf("search %s cannot prove absence: %s", s.Kind, s.Blind))
		case s.Error != "":
			out = append(out, fmt.Sprintf("search %s: %s", s.Kind, s.Error))
		}
	}
	return out
}

// Blind returns the searches of the report that cannot prove absence.
func (r CheckReport) Blind() []SearchCheck {
	var out []SearchCheck
	for _, s := range r.Searches {
		if s.Blind != "" {
			out = append(out, s)
		}
	}
	return out
}

// blindness says why a search, as Check ran it for actor, cannot prove an
// item of kind k absent, or "": a search that failed; one whose items miss
// a field it compares (text, author, link, and the parent for the kinds
// that have one), which no count makes up for, since the count says how
// many items there are, not what they say; and, unless its count
// (search.count) agreed on every page, one that read no item (a selector
// that matches nothing reads as an empty list) or no item of the actor (it
// cannot show that it would see one).
func blindness(k kind.Kind, res SearchResult, err error, actor string) string {
	if err != nil {
		return "the search failed, so it proves nothing"
	}
	compared := []string{"title", "text", "author", "link"}
	if k.HasParent() {
		compared = append(compared, "parent")
	}
	missing := map[string]int{}
	short := 0
	for _, it := range res.Items {
		hit := false
		for _, pr := range it.Problems {
			for _, f := range compared {
				if strings.HasPrefix(pr, f+" ") || strings.HasPrefix(pr, f+":") {
					missing[problemClass(pr)]++
					hit = true
				}
			}
		}
		if hit {
			short++
		}
	}
	if short > 0 {
		var parts []string
		for _, c := range slices.Sorted(maps.Keys(missing)) {
			parts = append(parts, fmt.Sprintf("%s: %d", c, missing[c]))
		}
		return fmt.Sprintf("%d of its %d items lack a field it compares (%s): such an item never matches, so its absence proves nothing", short, len(res.Items), strings.Join(parts, ", "))
	}
	if len(res.Items) == 0 {
		if res.Counted {
			return "" // the site says the list is empty
		}
		return "it read no item: a list it cannot see (an item selector that matches nothing) reads the same as an empty one; declare search.count, the site's own count of the items it shows, to tell them apart"
	}
	if !slices.ContainsFunc(res.Items, func(it Item) bool { return it.OK() && it.Author == actor }) {
		// A count shows the items are seen, not that their authors are
		// read as the site names the actor.
		return fmt.Sprintf("none of its %d items is by @%s, so it does not show that it would see one of theirs (an author field that reads a display name reads every item as someone else's); check again once the account has published there", len(res.Items), actor)
	}
	return ""
}

// checkItems is how many items of each search a CheckReport keeps.
const checkItems = 5

// Check opens, in tab, each page the adapter names and counts what each
// selector matches there, reads the signed-in identity, and runs each
// search as actor. On an action's page it follows what an action does up
// to its text, and no further: it waits until the page is ready, runs the
// steps before filling (which the adapter declares commit nothing) and
// counts the fields where they are filled; it types nothing, attaches
// nothing, runs no later step and never clicks the committing control.
// Selectors that only show after the text or the click (the later steps,
// the committing control, the landing, refusals, moderation) are counted
// where check stopped, which may be 0. target is the object for the
// actions and searches that need one ("" skips them). Errors of a page are
// in the report (CheckReport.Problems); only a lost tab or browser
// (tab.Err) is returned. A search that cannot prove absence is marked
// (SearchCheck.Blind, CheckReport.Blind).
//
// text is an intent's text for the templates that take one ({title} in a
// post's open or a search's URL, {text}): a post's open with {title}
// opens the page for it (a wiki's edit page of that title, where nothing
// is saved), a search that takes one is skipped without it.
func (d *Declarative) Check(ctx context.Context, tab *browser.Tab, actor, target, text string) (CheckReport, error) {
	rep := CheckReport{Site: d.name}
	home := PageCheck{Key: "identity.url"}
	var err error
	if home.URL, err = d.expandURL(d.spec.Identity.URL, actor, target); err == nil {
		home.Status, err = d.navigate(ctx, tab, home.URL)
	}
	if err != nil {
		home.Error = err.Error()
	} else {
		sels := []SelectorCount{{Key: "identity.selector", Selector: d.spec.Identity.Selector}}
		if d.spec.Ready != nil {
			sels = append(sels, SelectorCount{Key: "ready.selector", Selector: d.spec.Ready.Selector})
		}
		for i, b := range d.spec.Blockers {
			if b.Selector != "" {
				sels = append(sels, SelectorCount{Key: fmt.Sprintf("blockers[%d] (%s)", i, b.Kind), Selector: b.Selector})
			}
		}
		home.Selectors = countAll(ctx, tab, sels, CheckedAtOpen)
		if who, err := d.Identity(ctx, tab); err != nil {
			rep.IdentityError = err.Error()
		} else {
			rep.Identity = who
		}
	}
	rep.Pages = append(rep.Pages, home)
	if err := tab.Err(); err != nil {
		return rep, err
	}

	for _, k := range kind.All {
		a := d.spec.Actions.get(k)
		if a == nil {
			continue
		}
		pc := PageCheck{Key: "actions." + string(k) + ".open"}
		if a.opensByTarget() && target == "" {
			pc.Skipped = "needs a target (--target URL)"
			rep.Pages = append(rep.Pages, pc)
			continue
		}
		if a.opensByTitle() && text == "" {
			pc.Skipped = "needs a text whose first line names the page (--text)"
			rep.Pages = append(rep.Pages, pc)
			continue
		}
		if pc.URL, err = d.OpenURL(Intent{Kind: k, Actor: actor, Target: target, Text: text}); err == nil {
			pc.Status, err = d.navigate(ctx, tab, pc.URL)
		}
		if err == nil {
			err = d.waitReady(ctx, tab, a.Ready)
		}
		if err != nil {
			pc.Error = err.Error()
		} else {
			pc.Selectors, pc.Error = d.followAction(ctx, tab, a, "actions."+string(k))
		}
		rep.Pages = append(rep.Pages, pc)
		if err := tab.Err(); err != nil {
			return rep, err
		}
	}

	for _, k := range kind.All {
		a := d.spec.Actions.get(k)
		if a == nil || !k.Creates() {
			continue
		}
		sc := SearchCheck{Kind: k}
		s := d.searchOf(a)
		if actor == "" && strings.Contains(s.URL, "{actor") {
			sc.Skipped = "needs an account: sign in (browserop login), or give --actor"
			rep.Searches = append(rep.Searches, sc)
			continue
		}
		if strings.Contains(s.URL, "{target") && target == "" {
			sc.Skipped = "needs a target (--target URL)"
			rep.Searches = append(rep.Searches, sc)
			continue
		}
		if (strings.Contains(s.URL, "{title}") || strings.Contains(s.URL, "{text}")) && text == "" {
			sc.Skipped = "needs a text: give --text, a text published there"
			rep.Searches = append(rep.Searches, sc)
			continue
		}
		sc.URL, _ = d.expand(s.URL, d.varsOf(a, actor, target, text))
		res, err := d.Search(ctx, tab, Query{Kind: k, Actor: actor, Target: target, Text: text})
		if err != nil {
			sc.Error = err.Error()
		}
		sc.Pages, sc.Complete, sc.Total, sc.Counted = res.Pages, res.Complete, len(res.Items), res.Counted
		sc.Blind = blindness(k, res, err, actor)
		sc.Items = res.Items[:min(len(res.Items), checkItems)]
		rep.Searches = append(rep.Searches, sc)
		if err := tab.Err(); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// followAction counts an action's selectors on its ready page as the
// action meets them: each step before filling counted and then run, the
// fields counted where they are filled (each must be one element there),
// and the later steps and the committing control counted where check
// stops, before the text. It returns why a step failed, if one did; the
// selectors after it are not counted then.
func (d *Declarative) followAction(ctx context.Context, tab *browser.Tab, a *ActionSpec, path string) ([]SelectorCount, string) {
	var out []SelectorCount
	count := func(when string, sels ...SelectorCount) {
		out = append(out, countAll(ctx, tab, sels, when)...)
	}
	if a.Ready != nil {
		count(CheckedAtOpen, SelectorCount{Key: path + ".ready.selector", Selector: a.Ready.Selector})
	}
	when := CheckedAtOpen
	for i, st := range a.Before {
		count(when, stepSelectors(st, fmt.Sprintf("%s.before[%d]", path, i))...)
		if err := d.runSteps(ctx, tab, []StepSpec{st}, fmt.Sprintf("before[%d]", i), a.Ready); err != nil {
			return out, err.Error()
		}
		when = CheckedAfterBefore
	}
	for i, f := range a.fills() {
		key := fmt.Sprintf("%s.fields[%d]", path, i)
		if a.Fill != nil {
			key = path + ".fill"
		}
		sel := SelectorCount{Key: key + ".selector", Selector: f.Selector}
		if f.Frame != "" {
			sel = SelectorCount{Key: key + ".frame", Selector: f.Frame}
		}
		c := countAll(ctx, tab, []SelectorCount{sel}, when)[0]
		if c.Error == "" && c.Count != 1 {
			c.Problem = fmt.Sprintf("matches %d elements where the text is typed, want exactly 1", c.Count)
		}
		out = append(out, c)
	}
	for i, st := range a.Steps {
		count(CheckedBeforeText, stepSelectors(st, fmt.Sprintf("%s.steps[%d]", path, i))...)
	}
	count(CheckedBeforeText, SelectorCount{Key: path + ".submit.selector", Selector: a.Submit.Selector})
	if a.State != nil {
		count(CheckedAtOpen, SelectorCount{Key: path + ".state.selector", Selector: a.State.Selector})
	}
	return out, ""
}

// stepSelectors lists a step's selectors under path.
func stepSelectors(st StepSpec, path string) []SelectorCount {
	var out []SelectorCount
	for _, s := range []struct{ key, sel string }{{"if", st.If}, {"unless", st.Unless}, {"click", st.Click}} {
		if s.sel != "" {
			out = append(out, SelectorCount{Key: path + "." + s.key, Selector: s.sel})
		}
	}
	return out
}

func countAll(ctx context.Context, tab *browser.Tab, sels []SelectorCount, when string) []SelectorCount {
	for i := range sels {
		n, err := tab.Count(ctx, sels[i].Selector)
		sels[i].Count, sels[i].When = n, when
		if err != nil {
			sels[i].Error = err.Error()
		}
	}
	return sels
}
