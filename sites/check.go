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
	// Skipped or Error say why the page was not read, or (Error) why
	// following its action stopped: a step that failed, a page that could
	// not be left.
	Skipped string `json:"skipped,omitempty"`
	Error   string `json:"error,omitempty"`
	// NotFollowed, on an action's page, says why check did not follow the
	// action to its click and went no further than the fields: no text,
	// an editor that keeps drafts (without FillDrafts), a like or follow
	// whose state control the page does not show (a target that does not
	// fit it). The later steps and the committing control were counted
	// where it stopped (CheckedBeforeText).
	NotFollowed string          `json:"not_followed,omitempty"`
	Selectors   []SelectorCount `json:"selectors,omitempty"`
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
	// several, that could not be filled or reads back other than what was
	// typed (after typing, or again at the click: a step changed it); a
	// committing control that is not one clickable element at the click.
	Problem string `json:"problem,omitempty"`
}

// When a selector of an action was counted.
const (
	// CheckedAtOpen: on the opened page, once ready.
	CheckedAtOpen = "at open"
	// CheckedAfterBefore: after the steps before filling, where the
	// fields must be.
	CheckedAfterBefore = "after before"
	// CheckedBeforeText: where the action would type its text, when
	// check did not type it (PageCheck.NotFollowed): the later steps and
	// the committing control come after it, and may show only then, so a
	// count of 0 there is no problem.
	CheckedBeforeText = "before the text"
	// CheckedAtStep: a later step's own selectors, counted just before
	// the step runs, after the text was typed and the steps before it
	// ran, where the step meets them.
	CheckedAtStep = "at the step"
	// CheckedAtClick: after the text and every step, where the committing
	// click would be made (check never makes it): the committing control
	// must be one clickable element there, and each field must still
	// read back what was typed.
	CheckedAtClick = "at the click"
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
// with as Check saw it: an identity not read, a page that failed to open,
// become ready or be left, a step that failed (before filling or after
// it), a field that is not one element where it is filled, could not be
// filled or reads back other than what was typed, a committing control
// that would not take the click where it is made, a selector that is not
// valid, and a search that failed or cannot prove absence. A skipped page
// or search, and an action not followed past its fields
// (PageCheck.NotFollowed), is no problem.
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

// CheckOption changes what Check does on an action's page.
type CheckOption func(*checkOptions)

type checkOptions struct {
	fillDrafts bool
}

// FillDrafts makes Check type its text into the fields of an action whose
// editor keeps drafts by itself too (actions.KIND.drafts): the site may
// then keep a draft of that text. Without it Check types nothing there.
func FillDrafts() CheckOption {
	return func(o *checkOptions) { o.fillDrafts = true }
}

// Check opens, in tab, each page the adapter names and counts what each
// selector matches there, reads the signed-in identity, and runs each
// search as actor. On an action's page it follows what an action does up
// to its committing click, and no further: it waits until the page is
// ready, runs the steps before filling, types text into the fields and
// reads each back, then counts each later step's selectors and runs it,
// and counts the committing control where the click would be made, which
// it never makes; it attaches no media. It then leaves the page (a page
// that asks before it is left is answered "leave"). Each selector is
// counted where the action meets it (SelectorCount.When). Without text
// it types nothing, and neither into an editor that keeps drafts
// (actions.KIND.drafts) unless FillDrafts is given: the later steps and
// the committing control are then counted where it stopped, and the page
// says why (PageCheck.NotFollowed). An action without fields (like,
// follow) is followed to its click without text, unless its state
// control matches nothing at open. target is the object
// for the actions and searches that need one ("" skips them). Errors of a
// page are in the report (CheckReport.Problems); only a lost tab or
// browser (tab.Err) is returned. A search that cannot prove absence is
// marked (SearchCheck.Blind, CheckReport.Blind).
//
// text is an intent's text: the one typed, and the one for the templates
// that take one ({title} in a post's open or a search's URL, {text}): a
// post's open with {title} opens the page for it (a wiki's edit page of
// that title, where nothing is saved), a search that takes one is
// skipped without it.
func (d *Declarative) Check(ctx context.Context, tab *browser.Tab, actor, target, text string, opts ...CheckOption) (CheckReport, error) {
	var o checkOptions
	for _, opt := range opts {
		opt(&o)
	}
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
			d.followAction(ctx, tab, &pc, a, "actions."+string(k), text, o)
		}
		if tab.Err() == nil {
			// Leave what was typed without submitting it: a page that asks
			// whether to leave (beforeunload) is answered "leave" by the
			// tab, and the next page starts from a blank one.
			if _, err := tab.Navigate(ctx, "about:blank"); err != nil && tab.Err() == nil {
				pc.Error = joinErr(pc.Error, "the page could not be left without submitting: "+err.Error())
			}
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

// followAction follows an action on its ready page as far as its
// committing click, never making it, and records in pc what it met: each
// step before filling counted and then run; the fields counted where they
// are filled (each must be one element there), then filled with text and
// read back; each later step counted and then run; and the committing
// control counted and waited for until it would take the click. Without
// text, or on an editor that keeps drafts without o.fillDrafts, it types
// nothing and counts the later steps and the committing control where it
// stopped (pc.NotFollowed says why). A step that fails ends the follow
// (pc.Error, naming it), and the selectors after it are not counted.
func (d *Declarative) followAction(ctx context.Context, tab *browser.Tab, pc *PageCheck, a *ActionSpec, path, text string, o checkOptions) {
	count := func(when string, sels ...SelectorCount) {
		pc.Selectors = append(pc.Selectors, countAll(ctx, tab, sels, when)...)
	}
	if a.Ready != nil {
		count(CheckedAtOpen, SelectorCount{Key: path + ".ready.selector", Selector: a.Ready.Selector})
	}
	shown := true
	if a.State != nil {
		count(CheckedAtOpen, SelectorCount{Key: path + ".state.selector", Selector: a.State.Selector})
		st := pc.Selectors[len(pc.Selectors)-1]
		shown = st.Error != "" || st.Count > 0
	}
	fields := a.fills()
	switch {
	case !shown:
		// One --target serves every action: a post's page holds no
		// follow control on a site that follows from profiles.
		pc.NotFollowed = fmt.Sprintf("the page shows no control (%s.state.selector matches nothing): the target may not be one this action takes; give --target one it takes to follow it to its click", path)
	case len(fields) > 0 && text == "":
		pc.NotFollowed = "check typed nothing: give --text, a text to type into the fields, to follow the action up to its committing click (which check never makes)"
	case a.Drafts && !o.fillDrafts:
		pc.NotFollowed = fmt.Sprintf("check typed nothing: the editor keeps a draft of what is typed (%s.drafts); give --fill to type --text there anyway, and the site may keep a draft of it", path)
	}
	follow := pc.NotFollowed == ""
	when := CheckedAtOpen
	// What the page sends from the first step on is watched as an
	// action's preparation is (Fill): a step that sends what could be the
	// submission ends the follow with an error saying so.
	sends, err := tab.WatchSends(ctx, signsOf(a.Landed))
	if err != nil {
		pc.Error = err.Error()
		return
	}
	defer sends.Stop()
	for i, st := range a.Before {
		if len(st.needsFields()) > 0 {
			// It takes an entry field, and check sets none: an action
			// whose entry sets none skips it too.
			continue
		}
		if st.Type != "" && !follow {
			// A step that types waits for the text, as the fields do.
			pc.NotFollowed += fmt.Sprintf("; before[%d] types, so check stopped there", i)
			return
		}
		count(when, stepSelectors(st, fmt.Sprintf("%s.before[%d]", path, i))...)
		if err := d.checkStep(ctx, tab, a, st, "before", i); err != nil {
			pc.Error = err.Error()
			return
		}
		when = CheckedAfterBefore
	}
	keys := make([]string, len(fields))
	typed := make([]bool, len(fields))
	want := make([]string, len(fields))
	stopped := false
	for i, f := range fields {
		keys[i] = fmt.Sprintf("%s.fields[%d]", path, i)
		if a.Fill != nil {
			keys[i] = path + ".fill"
		}
		c := countAll(ctx, tab, []SelectorCount{fieldSelector(f, keys[i])}, when)[0]
		if c.Error == "" && c.Count != 1 {
			c.Problem = fmt.Sprintf("matches %d elements where the text is typed, want exactly 1", c.Count)
		}
		switch {
		case !follow || stopped:
		case c.Error != "" || c.Problem != "":
			// The action would stop at this field: so does check.
			stopped = true
		default:
			v, skip := entryFieldFill(f, Intent{Text: text})
			if skip {
				break // an entry field check does not set
			}
			want[i] = v
			got, err := fillField(ctx, tab, f, v)
			switch {
			case err != nil && tab.Err() != nil:
				return
			case err != nil:
				c.Problem = "could not be filled: " + err.Error()
				stopped = true
			case !sameFill(want[i], got):
				c.Problem = "reads back other than what was typed: " + describeMismatch(want[i], got)
			default:
				typed[i] = true
			}
		}
		pc.Selectors = append(pc.Selectors, c)
	}
	if stopped {
		return
	}
	if !follow {
		for i, st := range a.Steps {
			count(CheckedBeforeText, stepSelectors(st, fmt.Sprintf("%s.steps[%d]", path, i))...)
		}
		count(CheckedBeforeText, SelectorCount{Key: path + ".submit.selector", Selector: a.Submit.Selector})
		return
	}
	for i, st := range a.Steps {
		if len(st.needsFields()) > 0 {
			continue
		}
		count(CheckedAtStep, stepSelectors(st, fmt.Sprintf("%s.steps[%d]", path, i))...)
		if err := d.checkStep(ctx, tab, a, st, "steps", i); err != nil {
			pc.Error = err.Error()
			return
		}
	}
	for i, f := range fields {
		if !typed[i] || len(a.Steps) == 0 {
			continue
		}
		// A step must not change what was typed: the action reads every
		// field again before its click.
		c := fieldSelector(f, keys[i])
		c.When = CheckedAtClick
		got, err := readField(ctx, tab, f)
		switch {
		case err != nil:
			c.Problem = "could not be read after the steps: " + err.Error()
		case !sameFill(want[i], got):
			c.Problem = "reads back other than what was typed after the steps: " + describeMismatch(want[i], got)
		default:
			continue
		}
		c.Count, _ = tab.Count(ctx, c.Selector)
		pc.Selectors = append(pc.Selectors, c)
	}
	c := countAll(ctx, tab, []SelectorCount{{Key: path + ".submit.selector", Selector: a.Submit.Selector}}, CheckedAtClick)[0]
	if c.Error == "" {
		// As the committing click would wait for it; no input is sent.
		if err := tab.WaitClickable(ctx, a.Submit.Selector, 0); err != nil {
			if tab.Err() != nil {
				return
			}
			c.Problem = "would not take the committing click there: " + err.Error()
		}
	}
	pc.Selectors = append(pc.Selectors, c)
}

// checkStep runs an action's step i of phase ("before", "steps") as the
// action runs it, and returns its failure, naming it and its page.
func (d *Declarative) checkStep(ctx context.Context, tab *browser.Tab, a *ActionSpec, st StepSpec, phase string, i int) error {
	// runSteps names a step by its index in the steps it is given: the
	// steps before this one, already run, are given as empty steps, which
	// do nothing, so that the error names phase[i].
	steps := append(make([]StepSpec, i, i+1), st)
	err := onPage(ctx, tab, d.runSteps(ctx, tab, steps, phase, a.Ready))
	if w := tab.ArmedSends(); w != nil {
		if why := sentBefore(ctx, w, signsOf(a.Landed)); why != "" {
			return fmt.Errorf("%w: %s[%d]: %s: a step must not send the submission (an action whose steps send is never clicked: only a search can verify it, else it stays ambiguous)", ErrSentBeforeClick, phase, i, why)
		}
	}
	return err
}

// fieldSelector is the selector a field is counted by under key: its
// frame when it has one, else its own.
func fieldSelector(f FillSpec, key string) SelectorCount {
	if f.Frame != "" {
		return SelectorCount{Key: key + ".frame", Selector: f.Frame}
	}
	return SelectorCount{Key: key + ".selector", Selector: f.Selector}
}

// joinErr joins two page errors into one line.
func joinErr(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// stepSelectors lists a step's selectors under path.
func stepSelectors(st StepSpec, path string) []SelectorCount {
	var out []SelectorCount
	for _, s := range []struct{ key, sel string }{{"if", st.If}, {"unless", st.Unless}, {"click", st.Click}, {"type", st.Type}} {
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
