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

// SelectorCount is how many elements a selector matched on a page.
type SelectorCount struct {
	Key      string `json:"key"`
	Selector string `json:"selector"`
	Count    int    `json:"count"`
	Error    string `json:"error,omitempty"`
}

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
	if res.Counted {
		return ""
	}
	if len(res.Items) == 0 {
		return "it read no item: a list it cannot see (an item selector that matches nothing) reads the same as an empty one; declare search.count, the site's own count of the items it shows, to tell them apart"
	}
	if !slices.ContainsFunc(res.Items, func(it Item) bool { return it.OK() && it.Author == actor }) {
		return fmt.Sprintf("none of its %d items is by @%s, so it does not show that it would see one of theirs; check again once the account has published there, or declare search.count", len(res.Items), actor)
	}
	return ""
}

// checkItems is how many items of each search a CheckReport keeps.
const checkItems = 5

// Check opens, in tab, each page the adapter names and counts what each
// selector matches there, reads the signed-in identity, and runs each
// search as actor, without filling or clicking anything: it only navigates
// and reads. target is the object for the actions and searches that need
// one ("" skips them). Selectors that only show after a submission (the
// landing, refusals, moderation) and those after a step are counted where
// they are, which may be 0 before any click. Errors of a page are in the
// report; only a lost tab or browser (tab.Err) is returned. A search that
// cannot prove absence is marked (SearchCheck.Blind, CheckReport.Blind).
func (d *Declarative) Check(ctx context.Context, tab *browser.Tab, actor, target string) (CheckReport, error) {
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
		home.Selectors = countAll(ctx, tab, sels)
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
		if a.Open == "{target}" && target == "" {
			pc.Skipped = "needs a target (--target URL)"
			rep.Pages = append(rep.Pages, pc)
			continue
		}
		if pc.URL, err = d.expandURL(a.Open, actor, target); err == nil {
			pc.Status, err = d.navigate(ctx, tab, pc.URL)
		}
		if err == nil {
			err = d.waitReady(ctx, tab, a.Ready)
		}
		if err != nil {
			pc.Error = err.Error()
		} else {
			pc.Selectors = countAll(ctx, tab, actionSelectors(a, "actions."+string(k)))
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
		if s.URL == "{target}" && target == "" {
			sc.Skipped = "needs a target (--target URL)"
			rep.Searches = append(rep.Searches, sc)
			continue
		}
		sc.URL, _ = d.expandSearchURL(s.URL, actor, target, "")
		res, err := d.Search(ctx, tab, Query{Kind: k, Actor: actor, Target: target})
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

// actionSelectors lists the selectors of an action, keyed by where the
// adapter declares them.
func actionSelectors(a *ActionSpec, path string) []SelectorCount {
	var out []SelectorCount
	add := func(key, sel string) {
		if sel != "" {
			out = append(out, SelectorCount{Key: path + "." + key, Selector: sel})
		}
	}
	if a.Ready != nil {
		add("ready.selector", a.Ready.Selector)
	}
	for i, st := range a.Before {
		add(fmt.Sprintf("before[%d].if", i), st.If)
		add(fmt.Sprintf("before[%d].unless", i), st.Unless)
		add(fmt.Sprintf("before[%d].click", i), st.Click)
	}
	for i, f := range a.fills() {
		key := fmt.Sprintf("fields[%d]", i)
		if a.Fill != nil {
			key = "fill"
		}
		if f.Frame != "" {
			add(key+".frame", f.Frame)
			continue
		}
		add(key+".selector", f.Selector)
	}
	for i, st := range a.Steps {
		add(fmt.Sprintf("steps[%d].if", i), st.If)
		add(fmt.Sprintf("steps[%d].unless", i), st.Unless)
		add(fmt.Sprintf("steps[%d].click", i), st.Click)
	}
	add("submit.selector", a.Submit.Selector)
	if a.State != nil {
		add("state.selector", a.State.Selector)
	}
	return out
}

func countAll(ctx context.Context, tab *browser.Tab, sels []SelectorCount) []SelectorCount {
	for i := range sels {
		n, err := tab.Count(ctx, sels[i].Selector)
		sels[i].Count = n
		if err != nil {
			sels[i].Error = err.Error()
		}
	}
	return sels
}
