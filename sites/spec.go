package sites

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
	_ "time/tzdata" // zones for declared time layouts on machines without tzdata

	"go.yaml.in/yaml/v3"

	"github.com/browserop/browserop/kind"
)

// Spec is the YAML schema of a declarative site adapter
// (bundled/sites/<name>.yaml). URL templates take the placeholders {origin}
// (the first origin), {actor} (the acting handle) and {target} (the intent's
// target URL, only as the whole template); field templates take {origin} and
// {value}. Every selector is CSS.
type Spec struct {
	// Origins are http(s) origins without a path; the first is primary.
	Origins  []string      `yaml:"origins"`
	Identity IdentitySpec  `yaml:"identity"`
	Blockers []BlockerSpec `yaml:"blockers"`
	Actions  ActionsSpec   `yaml:"actions"`
	Search   *SearchSpec   `yaml:"search"`
	// Ready, when set, is waited for on every page before anything is read
	// or filled: the page's scripts have run (an action's own ready
	// replaces it).
	Ready *ReadySpec `yaml:"ready"`
	// Accounts says, per login (the handle entries name as actor), the
	// account's URL slug and display name when they differ from the login.
	Accounts map[string]AccountSpec `yaml:"accounts"`
	// Canonical says which parts of a URL identify a result.
	Canonical *CanonicalSpec `yaml:"canonical"`
	// Transforms are the rewrites the site applies to a text when it shows
	// it, applied in order to the intended text before it is compared.
	Transforms []TransformSpec `yaml:"transforms"`
	// Refusals are the answers by which the site refuses a submission,
	// checked on what the committing click landed on.
	Refusals []RefusalSpec `yaml:"refusals"`
	// Moderation recognises, on the landed page, a created item held for
	// the site's moderation.
	Moderation *ModerationSpec `yaml:"moderation"`
}

// IdentitySpec says where the signed-in handle is: the element at Selector
// on the page at URL, its Attribute (or its text, without a leading "@").
// Shows says which of the account's names it is: "login" (the default),
// "slug" or "name" (see Spec.Accounts).
type IdentitySpec struct {
	URL string `yaml:"url"`
	// LoginURL, when set, is the site's sign-in page, which `browserop
	// login` shows the person (else it shows URL).
	LoginURL  string `yaml:"login_url"`
	Selector  string `yaml:"selector"`
	Attribute string `yaml:"attribute"`
	Shows     string `yaml:"shows"`
	// Wait, when set, is how long the identity element may take to show
	// (a single-page app draws the account after load); without it, it
	// is read at once, once the page is ready.
	Wait *Duration `yaml:"wait"`
	// Steps run before the identity is read, on the page it is read on:
	// open the account menu that holds it, and nothing else.
	Steps []StepSpec `yaml:"steps"`
	// JSON, instead of Selector, reads the identity from an endpoint of
	// the site, fetched from the page with its cookies.
	JSON *IdentityJSONSpec `yaml:"json"`
}

// IdentityJSONSpec reads the signed-in account from a JSON answer of the
// site: URL (a URL template on the site) answers an object, and Path
// ("user.username", "data.0.handle") names the string in it. An answer
// of 401 or 403, or a path that names nothing, is nobody signed in.
type IdentityJSONSpec struct {
	URL  string `yaml:"url"`
	Path string `yaml:"path"`
}

// AccountSpec names one account as the site shows it: Slug in URLs
// ({actor.slug}) and Name, the display name on items. Each defaults to the
// login.
type AccountSpec struct {
	Slug string `yaml:"slug"`
	Name string `yaml:"name"`
}

// ReadySpec says a page is ready: an element matching Selector is visible
// and, when Attribute is set, has Attribute equal to Value.
type ReadySpec struct {
	Selector  string `yaml:"selector"`
	Attribute string `yaml:"attribute"`
	Value     string `yaml:"value"`
}

// CanonicalSpec makes a site's URLs canonical. By default a URL keeps its
// path and whole query and loses its fragment. KeepFragment is a regular
// expression: a fragment that matches it whole identifies a result (a
// comment's "comment-12") and is kept. KeepQuery, when set, keeps only
// those query keys (in the URL's order); DropQuery drops those keys.
// Rewrite applies, last and in order, regular expression replacements to
// the whole URL (one address for one result). The site's rule applies to
// every kind whose action declares none of its own (ActionSpec.Canonical).
type CanonicalSpec struct {
	KeepFragment string          `yaml:"keep_fragment"`
	KeepQuery    []string        `yaml:"keep_query"`
	DropQuery    []string        `yaml:"drop_query"`
	Rewrite      []TransformSpec `yaml:"rewrite"`
}

// TransformSpec is one regular expression replacement (RE2 syntax; $1 in
// Replace is the first group). In a text's transforms (not a canonical
// rewrite) Replace may also name who acts and when: {actor}, {actor.slug},
// {actor.name} (see accounts) and {time:LAYOUT}, the moment the action
// went executing written with a Go time layout in Zone (UTC by default),
// as a signature the site expands shows them. Case, "upper" or "lower",
// replaces what Match matched with its upper- or lower-case form instead
// (a wiki shows a title's first letter capitalized: match '^\p{Ll}').
type TransformSpec struct {
	Match   string `yaml:"match"`
	Replace string `yaml:"replace"`
	Zone    string `yaml:"zone"`
	Case    string `yaml:"case"`
}

// RefusalSpec recognises one refusal of a submission: a Selector that
// matches on the landed page, the landing's HTTP Status (the document's, or
// the declared response's), or both. Message, when set, is the selector of
// the site's own message, recorded with the refusal. Text, when set, is a
// regular expression the message must match for the rule to hold (a site
// whose refusals share one class with every other warning): it is read
// from a Message element the page drew after the click. Declare only
// answers that prove nothing was created.
type RefusalSpec struct {
	Kind     string `yaml:"kind"`
	Selector string `yaml:"selector"`
	Status   int    `yaml:"status"`
	Message  string `yaml:"message"`
	Text     string `yaml:"text"`
}

// ModerationSpec recognises a created item held for moderation on the
// landed page: an element matching Selector.
type ModerationSpec struct {
	Selector string `yaml:"selector"`
}

// BlockerSpec recognises one blocker screen: by a selector that matches, by
// the document's HTTP status, or by both together.
type BlockerSpec struct {
	Kind     string `yaml:"kind"`
	Selector string `yaml:"selector"`
	Status   int    `yaml:"status"`
}

// ActionsSpec configures each action kind; a kind left out is unsupported.
type ActionsSpec struct {
	Post       *ActionSpec `yaml:"post"`
	Reply      *ActionSpec `yaml:"reply"`
	ThreadPart *ActionSpec `yaml:"thread_part"`
	Like       *ActionSpec `yaml:"like"`
	Follow     *ActionSpec `yaml:"follow"`
}

func (a *ActionsSpec) get(k kind.Kind) *ActionSpec {
	switch k {
	case kind.Post:
		return a.Post
	case kind.Reply:
		return a.Reply
	case kind.ThreadPart:
		return a.ThreadPart
	case kind.Like:
		return a.Like
	case kind.Follow:
		return a.Follow
	}
	return nil
}

// ActionSpec is one action: where to open it, when its page is ready, the
// steps before filling (Before), the fields to fill (Fill, or several in
// Fields: post, reply, thread part), the steps after filling (Steps), the
// one committing control to click (Submit), what shows the submission
// landed (Landed), and how to read the result (a post) or the control's
// state (like, follow). Search, when set, replaces the site's search for
// this kind.
type ActionSpec struct {
	Open string `yaml:"open"`
	// Target, for the kinds on an object, is what the action's templates
	// may take from the intent's target: the named groups of its pattern
	// ({target.NAME}).
	Target *TargetSpec `yaml:"target"`
	Ready  *ReadySpec  `yaml:"ready"`
	Before []StepSpec  `yaml:"before"`
	Fill   *FillSpec   `yaml:"fill"`
	Fields []FillSpec  `yaml:"fields"`
	// Media, when set, says how the action attaches media (post, reply,
	// thread part); without it the action takes none.
	Media  *MediaSpec   `yaml:"media"`
	Steps  []StepSpec   `yaml:"steps"`
	Submit SelectorSpec `yaml:"submit"`
	Landed *LandedSpec  `yaml:"landed"`
	// Moderation, when set, replaces the site's moderation for this kind.
	Moderation *ModerationSpec `yaml:"moderation"`
	// Refusals, when set, replace the site's refusals for this kind: a
	// status that proves a form refused may prove nothing for an editor
	// that retries by itself.
	Refusals []RefusalSpec `yaml:"refusals"`
	// Drafts says the site's editor saves a draft by itself while it is
	// filled (an autosave): a failure before the click then published
	// nothing, but may leave a draft on the site.
	Drafts bool `yaml:"drafts"`
	// Canonical, when set, replaces the site's canonical rule for this
	// kind: its target and the page it opens, its landed result, its
	// search's links and parents, and what is compared for it (a reply
	// keeps a revision's oldid, while a follow's control page keeps its
	// action=watch).
	Canonical *CanonicalSpec `yaml:"canonical"`
	// Transforms, when set (even empty), replace the site's transforms for
	// this kind's text.
	Transforms []TransformSpec `yaml:"transforms"`
	Result     *ResultSpec     `yaml:"result"`
	State      *StateSpec      `yaml:"state"`
	Search     *SearchSpec     `yaml:"search"`
	// EntryFields are the named entry fields the action takes beyond its
	// text (a category, tags: see EntryFieldSpec), by name; an intent
	// that sets another is refused.
	EntryFields map[string]*EntryFieldSpec `yaml:"entry_fields"`
}

// fills returns the fields the action fills, in order.
func (a *ActionSpec) fills() []FillSpec {
	if a.Fill != nil {
		return []FillSpec{*a.Fill}
	}
	return a.Fields
}

// TargetSpec reads parts of an intent's target URL: Pattern is a regular
// expression the whole target must match (it is anchored at both ends),
// whose named groups
// ((?P<page>…)) templates use as {target.page}. A target it does not
// match is refused before anything is opened.
type TargetSpec struct {
	Pattern string `yaml:"pattern"`
}

// whole is the pattern anchored at both ends: it matches the whole target
// or nothing.
func (t *TargetSpec) whole() string { return "^(?:" + t.Pattern + ")$" }

// groups returns the names of the pattern's named groups, as template
// placeholders (target.NAME); nil for no spec or a pattern that does not
// compile (reported by validate).
func (t *TargetSpec) groups() []string {
	if t == nil {
		return nil
	}
	re, err := regexp.Compile(t.Pattern)
	if err != nil {
		return nil
	}
	var out []string
	for _, n := range re.SubexpNames() {
		if n != "" {
			out = append(out, "target."+n)
		}
	}
	return out
}

// SelectorSpec names one element.
type SelectorSpec struct {
	Selector string `yaml:"selector"`
}

// FillSpec is one field an action fills: the one element matching Selector
// (inside the same-origin iframe matching Frame, when set), an input, a
// textarea or a contenteditable editor. Value is what it gets: "{text}"
// (the default: the intent's whole text), "{title}" (its first line),
// "{body}" (the rest, without the blank lines that start it), or a fixed
// text without braces. An action that uses {title} uses {body} too.
// Lines says how a contenteditable editor gets the lines of a text:
// "insert" (the default) inserts the text as one input, and the browser's
// own editing makes a paragraph of each newline; "enter" types each line
// and presses Enter between them, for an editor that makes a paragraph
// only of the key (see browser.EnterLines). An input or a textarea gets
// its newlines as newlines either way.
type FillSpec struct {
	Selector string    `yaml:"selector"`
	Frame    string    `yaml:"frame"`
	Value    string    `yaml:"value"`
	Lines    FillLines `yaml:"lines"`
}

// FillLines is how a field gets a text's lines: "" or "insert" (one
// input), or "enter" (typed, Enter between lines).
type FillLines string

// UnmarshalYAML takes insert or enter, and refuses anything else.
func (l *FillLines) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode || (n.Value != "insert" && n.Value != "enter") {
		return fmt.Errorf("line %d: %q: use insert (the default) or enter", n.Line, n.Value)
	}
	*l = FillLines(n.Value)
	return nil
}

// StepSpec is one step before the committing click: click the one element
// matching Click, then wait until Wait shows and until Gone matches
// nothing. With If set, the step runs only when the page shows that it is
// needed (a welcome dialog, a panel a setting can turn off), and If is
// waited for like any other element: the step waits until If or Unless
// matches an element. If alone: the step runs. Unless alone: it is
// skipped. Both at once: the page contradicts the adapter, and the step
// fails. Neither within Timeout: without Unless the step is skipped (If
// never showed); with Unless it fails (the page shows neither state the
// adapter knows). Declare Unless, the sign that the step is not needed,
// to decide without waiting out Timeout. Timeout bounds that wait and
// the step's Gone (15s by default) and its Wait (the browser's action
// timeout by default).
type StepSpec struct {
	Click string `yaml:"click"`
	// Type, instead of Click, types Value (a text, or a template of an
	// entry field: {fields.NAME}) into the one element it matches, reads
	// it back, and then presses Key when set (Enter, Tab, Escape, or a
	// comma: ","), as a person commits a tag. A step whose templates name
	// an entry field the intent does not set is skipped; one naming a
	// list field runs once for each of its texts.
	Type  string `yaml:"type"`
	Value string `yaml:"value"`
	Key   string `yaml:"key"`
	// Needs names entry fields the step is for (open the panel where a
	// category is picked): it is skipped unless the intent sets each.
	Needs   []string  `yaml:"needs"`
	If      string    `yaml:"if"`
	Unless  string    `yaml:"unless"`
	Wait    string    `yaml:"wait"`
	Gone    string    `yaml:"gone"`
	Timeout *Duration `yaml:"timeout"`
}

// LandedSpec says what shows a submission landed; the first sign that
// holds ends the wait. Navigation: the page loads a new document (a form
// post). Selector: an element that was not there before the click shows (a
// snackbar, a new list item). URLChange: the address changes without a
// load. Response: the site answers the declared request. Without a
// LandedSpec, a navigation. A navigation always counts, declared or not.
type LandedSpec struct {
	Navigation bool          `yaml:"navigation"`
	Selector   string        `yaml:"selector"`
	URLChange  bool          `yaml:"url_change"`
	Response   *ResponseSpec `yaml:"response"`
}

// ResponseSpec names a request the page sends on submission: its Method
// and a regular expression its URL matches.
type ResponseSpec struct {
	Method string `yaml:"method"`
	URL    string `yaml:"url"`
	// Body, when set, is a regular expression the request's body must
	// match too: publishing and autosaving may both PUT the same URL.
	Body string `yaml:"body"`
	// Answer, when set, is a regular expression the site's answer body
	// must match for the answer to be the landing (only the publish's
	// answer says "status":"publish"): an answer that does not match, or
	// cannot be read, is not the landing, and the wait goes on. Every
	// request of the method and URL still counts as one of the
	// submission's, whatever its body or answer.
	Answer string `yaml:"answer"`
}

// FieldSpec reads one value: the first element matching Selector inside the
// item ("" is the item itself), its Attribute (or its text). Template, when
// set, turns the value into a URL, such as "{origin}/p/{value}". Page, for
// a link or parent, takes the URL of the page read instead (a comment's
// parent is the post whose page lists it). Layout and Zone read a time
// written as the page shows it (a Go time layout, an IANA zone name);
// without them a time is RFC 3339. Shows, for an author, says which of the
// account's names the page shows: "login" (the default), "slug" or "name".
// Pattern, when set, is a regular expression with one capture group: the
// value is what the group captured ("By (.+)" reads "Alice" from "By
// Alice"), and a value it does not match is a problem of the item, never
// a value.
type FieldSpec struct {
	Selector  string `yaml:"selector"`
	Attribute string `yaml:"attribute"`
	Pattern   string `yaml:"pattern"`
	Template  string `yaml:"template"`
	Page      bool   `yaml:"page"`
	Layout    string `yaml:"layout"`
	Zone      string `yaml:"zone"`
	Shows     string `yaml:"shows"`
}

func (f *FieldSpec) set() bool { return f != nil && (f.Selector != "" || f.Attribute != "" || f.Page) }

// ItemSpec reads items on a page: each element matching Item, and in it
// the fields declared. A field declared is compared with the intent; one
// left out proves nothing. Title, when set, is the first line of the text
// (see FillSpec). ResultSpec and SearchSpec embed it, inline: a landed
// result and a search's items are read alike, under the same keys.
type ItemSpec struct {
	Item   string     `yaml:"item"`
	Title  *FieldSpec `yaml:"title"`
	Text   *FieldSpec `yaml:"text"`
	Author *FieldSpec `yaml:"author"`
	Time   *FieldSpec `yaml:"time"`
	Parent *FieldSpec `yaml:"parent"`
	Link   *FieldSpec `yaml:"link"`
	// Media reads the item's media; required when an action the item is
	// read for takes media.
	Media *MediaReadSpec `yaml:"media"`
	// EntryFields read the entry fields the item shows, by name: every
	// element each selector matches in the item (a post's category links,
	// its tags), compared with what the intent set.
	EntryFields map[string]*FieldSpec `yaml:"entry_fields"`
}

// ResultSpec reads the created item on the landed page: the one element
// Item, and its fields. Link is required. A Link with Page set needs no
// Item: the landed page's own URL is the result.
type ResultSpec struct {
	ItemSpec `yaml:",inline"`
}

// OpenEachSpec reads, for each item a search's list shows, the fields it
// names on the item's own page (its link, opened in the same tab): the
// one element Item there, and in it Title, Text, Author, Time, Media, as
// an ItemSpec reads them. A field it names replaces the list's. Max bounds
// how many items a walk opens (1 to 20): those past it are read with the
// problem "not opened", so they never match and the view is not complete.
type OpenEachSpec struct {
	ItemSpec `yaml:",inline"`
	Max      int `yaml:"max"`
}

// EmptySpec recognises a page where the site says a list has no item
// (a wiki's history of a page that does not exist): its HTTP Status, a
// client error, together with one element Selector whose text matches
// Text, a regular expression, and no item on the page. Such a page ends
// the walk, complete, without an item.
type EmptySpec struct {
	Status   int    `yaml:"status"`
	Selector string `yaml:"selector"`
	Text     string `yaml:"text"`
}

// StateSpec reads a toggle control: the Attribute of the one element at
// Selector is DoneValue when the action's effect is present and
// NotDoneValue (required) when it is absent; anything else is an unknown
// state, which stops the run before a click and proves nothing after it.
type StateSpec struct {
	Selector     string `yaml:"selector"`
	Attribute    string `yaml:"attribute"`
	DoneValue    string `yaml:"done_value"`
	NotDoneValue string `yaml:"not_done_value"`
}

// SearchSpec says how to find an exact live result: the list at URL (the
// actor's timeline, the target's page for comments, a site search for the
// exact text), newest first, read item by item, following Next for up to
// MaxPages pages, back to Lookback before now; CompleteMarker matches on the
// last page. Own says the list is the actor's own: every item's author is
// the actor, whether or not it shows one. Settle is how long the site may
// take to show a new post; SurfaceWithin, the longest a submission can take
// to surface at all (none when unset).
type SearchSpec struct {
	URL string `yaml:"url"`
	Own bool   `yaml:"own"`
	// ItemSpec reads each item: Text and Link are required, and Author
	// unless the list is Own.
	ItemSpec `yaml:",inline"`
	// Count, when set, is the one element whose text holds, as its first
	// integer, how many items the list shows on the page ("3 posts",
	// "Showing 0 items"): on every page read it must equal the items
	// Item matched there, so that a list that shows nothing is told from
	// a selector that sees nothing (SearchResult.Counted).
	// OpenEach, when set, reads fields the list does not show (a
	// history's or a contributions list's summary is not the text) on
	// each item's own page: see OpenEachSpec.
	OpenEach *OpenEachSpec `yaml:"open_each"`
	// Empty is the site's own answer that the list has no item at all.
	Empty          *EmptySpec `yaml:"empty"`
	Count          string     `yaml:"count"`
	Next           string     `yaml:"next"`
	CompleteMarker string     `yaml:"complete_marker"`
	MaxPages       int        `yaml:"max_pages"`
	Lookback       Duration   `yaml:"lookback"`
	Settle         *Duration  `yaml:"settle"`
	SurfaceWithin  *Duration  `yaml:"surface_within"`
}

// Duration is a time.Duration written as a Go duration string ("48h").
type Duration time.Duration

// UnmarshalYAML parses a Go duration string; negative durations are refused.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want a duration such as 30s or 48h", n.Line)
	}
	v, err := time.ParseDuration(n.Value)
	if err != nil || v < 0 {
		return fmt.Errorf("line %d: %q is not a duration such as 30s or 48h", n.Line, n.Value)
	}
	*d = Duration(v)
	return nil
}

// problems collects validation errors as "path: problem".
type problems []string

func (p *problems) add(path, format string, args ...any) {
	*p = append(*p, path+": "+fmt.Sprintf(format, args...))
}

var blockerKinds = map[string]bool{"login": true, "captcha": true, "rate_limit": true, "restricted": true}

// validate checks the whole spec and returns every problem found.
func (s *Spec) validate() problems {
	var p problems
	origins := map[string]bool{}
	if len(s.Origins) == 0 {
		p.add("origins", "required: at least one http(s) origin such as https://example.com")
	}
	for i, o := range s.Origins {
		path := fmt.Sprintf("origins[%d]", i)
		if err := checkOrigin(o); err != nil {
			p.add(path, "%v", err)
			continue
		}
		if origins[o] {
			p.add(path, "%q is listed twice", o)
		}
		origins[o] = true
	}

	if s.Identity.URL == "" {
		p.add("identity.url", "required")
	} else {
		checkTemplate(&p, "identity.url", s.Identity.URL, origins, false)
	}
	if s.Identity.LoginURL != "" {
		checkTemplate(&p, "identity.login_url", s.Identity.LoginURL, origins, false)
		if strings.Contains(s.Identity.LoginURL, "{actor") {
			p.add("identity.login_url", "the sign-in page is the same for every account: no {actor}")
		}
	}
	checkSelector(&p, "identity.selector", s.Identity.Selector, s.Identity.JSON == nil)
	checkName(&p, "identity.attribute", s.Identity.Attribute)
	if j := s.Identity.JSON; j != nil {
		if s.Identity.Selector != "" || s.Identity.Attribute != "" {
			p.add("identity.json", "reads the identity instead of selector: leave selector and attribute out")
		}
		if j.URL == "" {
			p.add("identity.json.url", "required")
		} else {
			checkTemplate(&p, "identity.json.url", j.URL, origins, false)
			if strings.Contains(j.URL, "{actor") {
				p.add("identity.json.url", "asks who is signed in: no {actor}")
			}
		}
		if j.Path == "" || strings.HasPrefix(j.Path, ".") || strings.HasSuffix(j.Path, ".") || strings.Contains(j.Path, "..") {
			p.add("identity.json.path", "required: the keys to the name, joined by dots, such as user.username")
		}
	}
	if w := s.Identity.Wait; w != nil && (*w <= 0 || time.Duration(*w) > time.Minute) {
		p.add("identity.wait", "must be more than 0s and at most 1m")
	}
	for i, st := range s.Identity.Steps {
		path := fmt.Sprintf("identity.steps[%d]", i)
		st.validate(&p, path)
		if st.Type != "" {
			p.add(path+".type", "identity steps only open what shows the account (a menu): they type nothing")
		}
		if len(st.fieldRefs()) > 0 {
			p.add(path, "identity steps take no entry fields")
		}
	}

	for i, b := range s.Blockers {
		path := fmt.Sprintf("blockers[%d]", i)
		if !blockerKinds[b.Kind] {
			p.add(path+".kind", "%q is not one of login, captcha, rate_limit, restricted", b.Kind)
		}
		if b.Selector == "" && b.Status == 0 {
			p.add(path, "needs a selector, a status or both")
		}
		checkSelector(&p, path+".selector", b.Selector, false)
		if b.Status != 0 && (b.Status < 100 || b.Status > 599) {
			p.add(path+".status", "%d is not an HTTP status", b.Status)
		}
	}

	configured := false
	for _, k := range kind.All {
		a := s.Actions.get(k)
		if a == nil {
			continue
		}
		configured = true
		a.validate(&p, "actions."+string(k), k, origins)
	}
	if !configured {
		p.add("actions", "required: configure at least one of post, reply, thread_part, like, follow")
	}
	for _, k := range kind.All {
		if a := s.Actions.get(k); a != nil && k.Creates() && a.Search == nil && s.Search == nil {
			p.add("search", "required: %s needs a search to reconcile (here or in actions.%s.search)", k, k)
		}
		if a := s.Actions.get(k); a != nil && a.Media != nil {
			switch {
			case a.Search != nil && a.Search.Media == nil:
				p.add("actions."+string(k)+".search.media", "required: %s takes media, and its search must read them", k)
			case a.Search == nil && s.Search != nil && s.Search.Media == nil:
				p.add("search.media", "required: %s takes media, and the search that reconciles it must read them", k)
			}
		}
	}
	for _, k := range kind.All {
		a := s.Actions.get(k)
		if a == nil || !k.HasParent() {
			continue
		}
		srch, path := a.Search, "actions."+string(k)+".search"
		if srch == nil {
			srch, path = s.Search, "search"
		}
		if srch != nil && !srch.Parent.set() {
			// Without it every item reads as top-level: the reply never
			// matches, and a complete view would prove it absent.
			p.add(path+".parent", "required: %s replies to a parent, and the search that reconciles it must read each item's parent (or parent: {page: true} on a list of the target's own page)", k)
		}
	}
	if s.Search != nil {
		s.Search.validate(&p, "search", origins, "title")
	}
	s.Ready.validate(&p, "ready")
	if s.Identity.Shows != "" && !accountNames[s.Identity.Shows] {
		p.add("identity.shows", "%q is not one of login, slug, name", s.Identity.Shows)
	}
	seen := map[string]string{}
	for login, a := range s.Accounts {
		path := "accounts." + login
		for _, n := range []string{"slug:" + a.Slug, "name:" + a.Name} {
			if strings.HasSuffix(n, ":") {
				continue
			}
			if other, dup := seen[n]; dup {
				p.add(path, "%s is also %s's: each account's slug and name must be its own", n, other)
			}
			seen[n] = login
		}
		if !handleRE.MatchString(login) {
			p.add(path, "%q is not a login (letters, digits, _ . -)", login)
		}
		if a.Slug != "" && !handleRE.MatchString(a.Slug) {
			p.add(path+".slug", "%q does not fit a URL (letters, digits, _ . -)", a.Slug)
		}
		if strings.TrimSpace(a.Name) != a.Name || strings.ContainsAny(a.Name, "\x00\n\r") {
			p.add(path+".name", "must be one line without surrounding space")
		}
	}
	s.Canonical.validate(&p, "canonical")
	checkTransforms(&p, "transforms", s.Transforms, true)
	checkRefusals(&p, "refusals", s.Refusals)
	if m := s.Moderation; m != nil {
		checkSelector(&p, "moderation.selector", m.Selector, true)
	}
	return p
}

// validate checks a canonical rule, the site's or a kind's, at path.
func (c *CanonicalSpec) validate(p *problems, path string) {
	if c == nil {
		return
	}
	if c.KeepFragment != "" {
		if _, err := regexp.Compile(c.KeepFragment); err != nil {
			p.add(path+".keep_fragment", "not a regular expression: %v", err)
		}
	}
	if len(c.KeepQuery) > 0 && len(c.DropQuery) > 0 {
		p.add(path, "give keep_query or drop_query, not both")
	}
	checkTransforms(p, path+".rewrite", c.Rewrite, false)
}

func checkRefusals(p *problems, at string, rs []RefusalSpec) {
	for i, r := range rs {
		path := fmt.Sprintf("%s[%d]", at, i)
		if !slices.Contains(RefusalKinds, RefusalKind(r.Kind)) {
			p.add(path+".kind", "%q is not one of duplicate, rate_limit, login, validation", r.Kind)
		}
		if r.Selector == "" && r.Status == 0 {
			p.add(path, "needs a selector, a status or both")
		}
		checkSelector(p, path+".selector", r.Selector, false)
		checkSelector(p, path+".message", r.Message, false)
		if r.Text != "" {
			if _, err := regexp.Compile(r.Text); err != nil {
				p.add(path+".text", "not a regular expression: %v", err)
			}
			if r.Message == "" {
				p.add(path+".text", "needs message: the element whose text it matches")
			}
		}
		switch {
		case r.Status >= 500 && r.Status <= 599:
			// A server error may come after the site wrote (a fatal error
			// in a hook that runs after the insert): it never proves that
			// nothing was created.
			p.add(path+".status", "%d is a server error, which may come after the site saved the item: a refusal needs a 4xx status (400 to 499)", r.Status)
		case r.Status != 0 && (r.Status < 400 || r.Status > 499):
			p.add(path+".status", "%d is not an HTTP client error status (400 to 499)", r.Status)
		}
	}
}

// checkTransforms validates rewrites; names says whether Replace may name
// the actor and the time (a text's transforms), or not (canonical rules).
func checkTransforms(p *problems, path string, ts []TransformSpec, names bool) {
	for i, t := range ts {
		tp := fmt.Sprintf("%s[%d]", path, i)
		if t.Match == "" {
			p.add(tp+".match", "required")
			continue
		}
		if _, err := regexp.Compile(t.Match); err != nil {
			p.add(tp+".match", "not a regular expression: %v", err)
		}
		if t.Zone != "" {
			if _, err := time.LoadLocation(t.Zone); err != nil {
				p.add(tp+".zone", "%q is not a time zone name such as UTC or Europe/Paris", t.Zone)
			}
		}
		switch t.Case {
		case "":
		case "upper", "lower":
			if t.Replace != "" || t.Zone != "" {
				p.add(tp+".case", "replaces the match with its %s-case form: leave replace and zone out", t.Case)
			}
		default:
			p.add(tp+".case", "%q is not upper or lower", t.Case)
		}
		// ${1} and ${name} are the regular expression's groups, not
		// placeholders.
		own := groupRefRE.ReplaceAllString(t.Replace, "")
		if !names {
			if strings.ContainsAny(own, "{}") || t.Zone != "" {
				p.add(tp+".replace", "a canonical rewrite names no actor or time")
			}
			continue
		}
		ps, err := placeholders(own)
		if err != nil {
			p.add(tp+".replace", "%q: %v", t.Replace, err)
			continue
		}
		for _, n := range ps {
			switch {
			case n == "actor", n == "actor.slug", n == "actor.name":
			case strings.HasPrefix(n, "time:") && len(n) > len("time:"):
			default:
				p.add(tp+".replace", "unknown placeholder {%s} (use {actor}, {actor.slug}, {actor.name} or {time:LAYOUT})", n)
			}
		}
	}
}

func (a *ActionSpec) validate(p *problems, path string, k kind.Kind, origins map[string]bool) {
	if t := a.Target; t != nil {
		switch re, err := regexp.Compile(t.Pattern); {
		case k == kind.Post:
			p.add(path+".target", "a post has no target")
		case t.Pattern == "":
			p.add(path+".target.pattern", "required: a regular expression with named groups, such as 'title=(?P<page>[^&#]+)'")
		case err != nil:
			p.add(path+".target.pattern", "not a regular expression: %v", err)
		case len(t.groups()) == 0:
			p.add(path+".target.pattern", "%q has no named group (?P<NAME>…) for the templates to use", t.Pattern)
		default:
			for _, n := range re.SubexpNames() {
				if n != "" && !groupRE.MatchString(n) {
					p.add(path+".target.pattern", "group name %q: use lower-case letters, digits and _", n)
				}
			}
		}
	}
	extra := a.Target.groups()
	if k == kind.Post {
		extra = []string{"title"}
	}
	extra = append(extra, a.entryFieldURLNames()...)
	a.validateEntryFields(p, path, k)
	if a.Open == "" {
		p.add(path+".open", "required")
	} else {
		checkTemplate(p, path+".open", a.Open, origins, k != kind.Post, extra...)
		if k != kind.Post && !a.opensByTarget() {
			p.add(path+".open", "must open the intent's {target}, or a page named by its parts ({target.NAME})")
		}
	}
	a.Ready.validate(p, path+".ready")
	for i, st := range a.Before {
		st.validate(p, fmt.Sprintf("%s.before[%d]", path, i))
	}
	for i, st := range a.Steps {
		st.validate(p, fmt.Sprintf("%s.steps[%d]", path, i))
	}
	checkSelector(p, path+".submit.selector", a.Submit.Selector, true)
	a.Landed.validate(p, path+".landed")
	checkRefusals(p, path+".refusals", a.Refusals)
	checkTransforms(p, path+".transforms", a.Transforms, true)
	a.Canonical.validate(p, path+".canonical")
	if a.Drafts && !k.Creates() {
		p.add(path+".drafts", "%s has no editor to save a draft", k)
	}
	if a.Transforms != nil && !k.Creates() {
		p.add(path+".transforms", "%s has no text", k)
	}
	if a.Moderation != nil {
		checkSelector(p, path+".moderation.selector", a.Moderation.Selector, true)
		if !k.Creates() {
			p.add(path+".moderation", "%s creates nothing a site could hold", k)
		}
	}
	if a.Search != nil {
		if !k.Creates() {
			p.add(path+".search", "like and follow read their control on the target")
		} else {
			a.Search.validate(p, path+".search", origins, append(a.Target.groups(), "title")...)
		}
	}
	if k.Creates() {
		a.validateFills(p, path)
		if a.State != nil {
			p.add(path+".state", "only like and follow have a state")
		}
		if a.Result == nil {
			p.add(path+".result", "required")
			return
		}
		r := a.Result
		r.validate(p, path+".result", origins)
		if a.Media != nil {
			a.Media.validate(p, path+".media")
			if r.Media == nil {
				p.add(path+".result.media", "required: an action that takes media reads them on its result")
			}
			if r.Item == "" {
				p.add(path+".result.item", "required to read the result's media")
			}
		}
		return
	}
	if a.Media != nil {
		p.add(path+".media", "%s attaches no media", k)
	}
	if a.Fill != nil || len(a.Fields) > 0 {
		p.add(path+".fill", "%s has nothing to fill", k)
	}
	if a.Result != nil {
		p.add(path+".result", "%s reads its result from state", k)
	}
	if a.State == nil {
		p.add(path+".state", "required")
		return
	}
	st := a.State
	checkSelector(p, path+".state.selector", st.Selector, true)
	if st.Attribute == "" {
		p.add(path+".state.attribute", "required")
	}
	checkName(p, path+".state.attribute", st.Attribute)
	if st.DoneValue == "" {
		p.add(path+".state.done_value", "required")
	}
	switch {
	case st.NotDoneValue == "":
		// Without it any other value reads as "not done": a control still
		// loading, or a state the adapter does not know, would be clicked
		// (undoing a like in place) or prove the like absent after the
		// click.
		p.add(path+".state.not_done_value", "required: the value that shows the action is not done, so that any other is an unknown state")
	case st.NotDoneValue == st.DoneValue:
		p.add(path+".state.not_done_value", "must differ from done_value")
	}
}

// validateFills checks the fields of an action that creates an item: one
// fill or a list of fields, whose values take the whole text once, or its
// title and body once each.
func (a *ActionSpec) validateFills(p *problems, path string) {
	switch {
	case a.Fill != nil && len(a.Fields) > 0:
		p.add(path, "give fill or fields, not both")
		return
	case a.Fill == nil && len(a.Fields) == 0:
		p.add(path+".fill.selector", "required (or fields)")
		return
	}
	uses := map[string]int{}
	for i, f := range a.fills() {
		fp := fmt.Sprintf("%s.fields[%d]", path, i)
		if a.Fill != nil {
			fp = path + ".fill"
		}
		checkSelector(p, fp+".selector", f.Selector, true)
		checkSelector(p, fp+".frame", f.Frame, false)
		v := f.Value
		if v == "" {
			v = "{text}"
		}
		switch v {
		case "{text}", "{title}", "{body}":
			uses[v]++
		default:
			if _, ok := fillEntryField(v); ok {
				break // checked with the entry fields
			}
			if strings.ContainsAny(v, "{}") {
				p.add(fp+".value", "%q: use {text}, {title}, {body}, {fields.NAME} or a fixed text without braces", v)
			}
		}
	}
	if a.opensByTitle() {
		// The page's address carries the title (a wiki's page name): it
		// is the title's one use, and preflight checks the page opened.
		uses["{title}"]++
	}
	for v, n := range uses {
		if n > 1 {
			p.add(path+".fields", "%s is filled %d times", v, n)
		}
	}
	switch {
	case uses["{text}"] == 1 && uses["{title}"]+uses["{body}"] == 0:
	case uses["{text}"] == 0 && uses["{title}"] == 1 && uses["{body}"] == 1:
	default:
		p.add(path+".fields", "must fill the whole text: {text} once, or {title} and {body} once each ({title} may be in open instead)")
	}
}

// splitsText reports whether the action fills the text as a title and a
// body.
func (a *ActionSpec) splitsText() bool {
	for _, f := range a.fills() {
		if f.Value == "{title}" || f.Value == "{body}" {
			return true
		}
	}
	return a.opensByTitle()
}

// opensByTitle reports whether the action's page is named by the text's
// title (a wiki page), and opensByTarget whether by its target or the
// target's parts.
func (a *ActionSpec) opensByTitle() bool  { return strings.Contains(a.Open, "{title}") }
func (a *ActionSpec) opensByTarget() bool { return strings.Contains(a.Open, "{target") }

func (r *ReadySpec) validate(p *problems, path string) {
	if r == nil {
		return
	}
	checkSelector(p, path+".selector", r.Selector, true)
	checkName(p, path+".attribute", r.Attribute)
	if r.Value != "" && r.Attribute == "" {
		p.add(path+".value", "needs an attribute")
	}
}

func (s StepSpec) validate(p *problems, path string) {
	checkSelector(p, path+".click", s.Click, false)
	checkSelector(p, path+".if", s.If, false)
	checkSelector(p, path+".unless", s.Unless, false)
	if s.Unless != "" && s.If == "" {
		p.add(path+".unless", "needs if: unless is the sign that the step if names is not needed")
	}
	if s.Timeout != nil && (*s.Timeout <= 0 || time.Duration(*s.Timeout) > 10*time.Minute) {
		p.add(path+".timeout", "must be more than 0s and at most 10m")
	}
	checkSelector(p, path+".wait", s.Wait, false)
	checkSelector(p, path+".gone", s.Gone, false)
	checkSelector(p, path+".type", s.Type, false)
	switch {
	case s.Click == "" && s.Type == "" && s.Wait == "" && s.Gone == "":
		p.add(path, "needs click, type, wait or gone")
	case s.Click != "" && s.Type != "":
		p.add(path, "give click or type, not both")
	case s.Type != "" && s.Value == "":
		p.add(path+".value", "required: what type types")
	case s.Type == "" && (s.Value != "" || s.Key != ""):
		p.add(path+".type", "required: value and key are typed into the element type names")
	case s.Key != "" && !stepKeys[s.Key]:
		p.add(path+".key", "%q is not one of Enter, Tab, Escape, \",\"", s.Key)
	case strings.ContainsAny(s.Value, "\x00\n\r"):
		p.add(path+".value", "must be one line")
	}
}

func (l *LandedSpec) validate(p *problems, path string) {
	if l == nil {
		return
	}
	checkSelector(p, path+".selector", l.Selector, false)
	if !l.Navigation && l.Selector == "" && !l.URLChange && l.Response == nil {
		p.add(path, "needs navigation, selector, url_change or response")
	}
	if r := l.Response; r != nil {
		if r.Method != "" && !methodRE.MatchString(r.Method) {
			p.add(path+".response.method", "%q is not an HTTP method in capitals", r.Method)
		}
		if r.URL == "" {
			p.add(path+".response.url", "required: a regular expression the request's URL matches")
		} else if _, err := regexp.Compile(r.URL); err != nil {
			p.add(path+".response.url", "not a regular expression: %v", err)
		}
		if r.Body != "" {
			if _, err := regexp.Compile(r.Body); err != nil {
				p.add(path+".response.body", "not a regular expression: %v", err)
			}
		}
		if r.Answer != "" {
			if _, err := regexp.Compile(r.Answer); err != nil {
				p.add(path+".response.answer", "not a regular expression: %v", err)
			}
		}
	}
}

var (
	methodRE = regexp.MustCompile(`^[A-Z]{3,7}$`)
	groupRE  = regexp.MustCompile(`^[a-z][a-z0-9_]{0,30}$`)
	// groupRefRE is a replacement's reference to a group: ${1}, ${name}.
	groupRefRE = regexp.MustCompile(`\$\{[^{}]*\}`)
)

// itemNeeds says which parts of an ItemSpec a reader requires (the link
// always) and which it refuses.
type itemNeeds struct {
	item, text, author bool
	// noAuthor, when set, is why the author must be left out.
	noAuthor string
}

// validate checks the item selector and every field under path (the
// result's or the search's key), as need says; the rules of one reader
// (a page link, an own list, paging) are its own.
func (it *ItemSpec) validate(p *problems, path string, need itemNeeds, origins map[string]bool) {
	checkSelector(p, path+".item", it.Item, need.item)
	checkField(p, path+".title", it.Title, false, origins)
	checkField(p, path+".text", it.Text, need.text, origins)
	checkField(p, path+".author", it.Author, need.author, origins)
	if need.noAuthor != "" && it.Author.set() {
		p.add(path+".author", "%s", need.noAuthor)
	}
	checkField(p, path+".time", it.Time, false, origins)
	checkField(p, path+".link", it.Link, true, origins)
	checkField(p, path+".parent", it.Parent, false, origins)
	// Page is only for the fields that are URLs.
	for _, f := range []*FieldSpec{it.Text, it.Title, it.Author, it.Time} {
		if f != nil && f.Page {
			p.add(path, "page is only for link and parent")
			break
		}
	}
	it.Media.validate(p, path+".media")
}

// validate checks the result of an action: its item, unless the link is
// the landed page's own, and a title only with the text it starts.
func (r *ResultSpec) validate(p *problems, path string, origins map[string]bool) {
	pageLink := r.Link != nil && r.Link.Page
	r.ItemSpec.validate(p, path, itemNeeds{item: !pageLink}, origins)
	if r.Title.set() && !r.Text.set() {
		p.add(path+".title", "needs result.text too: the title is the text's first line")
	}
	if r.Item == "" && (r.Title.set() || r.Text.set() || r.Author.set() || r.Time.set() || r.Parent.set()) {
		p.add(path+".item", "required to read fields other than a page link")
	}
}

func (s *SearchSpec) validate(p *problems, path string, origins map[string]bool, extra ...string) {
	if s.URL == "" {
		p.add(path+".url", "required")
	} else {
		checkSearchTemplate(p, path+".url", s.URL, origins, extra...)
		if s.Own && !strings.Contains(s.URL, "{actor") {
			p.add(path+".url", "an own list is the actor's: its URL needs {actor} or {actor.slug}")
		}
	}
	need := itemNeeds{item: true, text: true, author: !s.Own}
	if s.Own {
		need.noAuthor = "an own list has the actor as every item's author: leave author out"
	}
	if o := s.OpenEach; o != nil {
		// The text (and the author) may come from the item's page.
		need.text = !o.Text.set()
		need.author = need.author && !o.Author.set()
		checkSelector(p, path+".open_each.item", o.Item, true)
		for _, f := range []struct {
			key string
			f   *FieldSpec
		}{{"title", o.Title}, {"text", o.Text}, {"author", o.Author}, {"time", o.Time}} {
			checkField(p, path+".open_each."+f.key, f.f, false, origins)
			if f.f != nil && f.f.Page {
				p.add(path+".open_each."+f.key, "page is only for link and parent")
			}
		}
		if o.Link.set() || o.Parent.set() {
			p.add(path+".open_each", "reads title, text, author, time and media: the link and the parent are the list's")
		}
		o.Media.validate(p, path+".open_each.media")
		if !o.Title.set() && !o.Text.set() && !o.Author.set() && !o.Time.set() && o.Media == nil {
			p.add(path+".open_each", "names no field to read on the item's page")
		}
		if o.Max < 1 || o.Max > 20 {
			p.add(path+".open_each.max", "required: how many items a walk opens, 1 to 20")
		}
		if o.Text.set() && s.Title.set() && !o.Title.set() {
			p.add(path+".title", "open_each reads the text: read the title there too (open_each.title)")
		}
		if o.Title.set() && !o.Text.set() {
			p.add(path+".open_each.title", "needs open_each.text too: the title is the text's first line, read with it")
		}
	}
	s.ItemSpec.validate(p, path, need, origins)
	if s.Link != nil && s.Link.Page {
		p.add(path+".link", "each item needs its own link: page is only for parent")
	}
	if s.Parent != nil && s.Parent.Page && s.URL != "{target}" {
		p.add(path+".parent", "page: the page is the parent only of a list on the target's own page: url must be {target}")
	}
	if e := s.Empty; e != nil {
		if e.Status < 400 || e.Status > 499 {
			// A page that answers 200 is where lists are drawn: a
			// placeholder there, or a text that happens to match, is no
			// proof that the list is empty.
			p.add(path+".empty.status", "required: the client error status (400 to 499) of the site's answer that the list does not exist")
		}
		checkSelector(p, path+".empty.selector", e.Selector, true)
		if e.Text == "" {
			p.add(path+".empty.text", "required: a regular expression of what the site says (an element matching selector alone proves nothing)")
		} else if _, err := regexp.Compile(e.Text); err != nil {
			p.add(path+".empty.text", "not a regular expression: %v", err)
		}
	}
	checkSelector(p, path+".next", s.Next, false)
	checkSelector(p, path+".count", s.Count, false)
	checkSelector(p, path+".complete_marker", s.CompleteMarker, false)
	if s.Next == "" && s.CompleteMarker == "" {
		p.add(path, "needs next or complete_marker, or the walk can never be complete")
	}
	if s.MaxPages < 1 || s.MaxPages > 100 {
		p.add(path+".max_pages", "required: 1 to 100")
	}
	if s.Lookback <= 0 {
		p.add(path+".lookback", "required: a duration such as 48h")
	}
	if s.Settle == nil {
		p.add(path+".settle", "required: how long a new post may stay hidden, such as 10s (0s if never)")
	}
	if s.SurfaceWithin != nil && s.Settle != nil && *s.SurfaceWithin < *s.Settle {
		p.add(path+".surface_within", "must be at least settle")
	}
}

func checkOrigin(o string) error {
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return fmt.Errorf("%q is not an http(s) URL", o)
	}
	if u.User != nil || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(o, "?") || strings.HasSuffix(o, "#") {
		return fmt.Errorf("%q must be an origin only (scheme://host[:port]), without user, path, query or fragment", o)
	}
	if u.Scheme != strings.ToLower(u.Scheme) || u.Host != strings.ToLower(u.Host) {
		return fmt.Errorf("%q must be lower case", o)
	}
	if p := u.Port(); (u.Scheme == "http" && p == "80") || (u.Scheme == "https" && p == "443") {
		return fmt.Errorf("%q must leave out the default port", o)
	}
	if u.Hostname() == "" {
		return fmt.Errorf("%q has no host", o)
	}
	return nil
}

var nameRE = regexp.MustCompile(`^[A-Za-z_:][A-Za-z0-9_.:-]*$`)

func checkName(p *problems, path, name string) {
	if name != "" && (!nameRE.MatchString(name) || len(name) > 100) {
		p.add(path, "%q is not an attribute name", name)
	}
}

func checkSelector(p *problems, path, sel string, required bool) {
	switch {
	case sel == "" && required:
		p.add(path, "required")
	case len(sel) > 500:
		p.add(path, "longer than 500 characters")
	case strings.ContainsAny(sel, "\x00\n\r"):
		p.add(path, "must be one line")
	case sel != "" && strings.TrimSpace(sel) != sel:
		p.add(path, "has leading or trailing space")
	case (strings.Contains(sel, ":text(") || strings.Contains(sel, ":name(")) && !wordsSelectorRE.MatchString(sel):
		p.add(path, "%q: :text(\"…\") or :name(\"…\") comes once, at the end, its words in double quotes", sel)
	case wordsSelectorRE.MatchString(sel) && !validWords(sel):
		p.add(path, "%q: the words of :text or :name are a JSON string: escape only \\\" \\\\ \\n \\t \\uXXXX", sel)
	}
}

// validWords reports whether the quoted words ending sel read as the page
// reads them (browser's jsQuery: a JSON string).
func validWords(sel string) bool {
	i := max(strings.LastIndex(sel, `:text("`), strings.LastIndex(sel, `:name("`))
	var s string
	return i >= 0 && json.Unmarshal([]byte(sel[i+len(`:text(`):len(sel)-1]), &s) == nil
}

// wordsSelectorRE is a selector that ends in one :text("…") or
// :name("…") (browser's jsQuery reads it so), with nothing of either
// before it.
var wordsSelectorRE = regexp.MustCompile(`^(?:[^:]|:[^tn]|:t[^e]|:n[^a])*?\s*:(?:text|name)\("(?:[^"\\]|\\.)*"\)$`)

func checkField(p *problems, path string, f *FieldSpec, required bool, origins map[string]bool) {
	if !f.set() {
		if required {
			p.add(path, "required: give a selector, an attribute or both")
		}
		return
	}
	checkSelector(p, path+".selector", f.Selector, false)
	checkName(p, path+".attribute", f.Attribute)
	if f.Pattern != "" {
		if re, err := regexp.Compile(f.Pattern); err != nil {
			p.add(path+".pattern", "not a regular expression: %v", err)
		} else if re.NumSubexp() != 1 {
			p.add(path+".pattern", "%q has %d capture groups: give exactly one, the part that is the value (use (?:…) for the others)", f.Pattern, re.NumSubexp())
		}
	}
	if f.Template != "" {
		checkFieldTemplate(p, path+".template", f.Template, origins)
	}
	if f.Page && (f.Selector != "" || f.Attribute != "" || f.Template != "" || f.Pattern != "") {
		p.add(path+".page", "takes the page's URL: leave selector, attribute, pattern and template out")
	}
	if f.Shows != "" && !accountNames[f.Shows] {
		p.add(path+".shows", "%q is not one of login, slug, name", f.Shows)
	}
	if f.Zone != "" {
		if _, err := time.LoadLocation(f.Zone); err != nil {
			p.add(path+".zone", "%q is not a time zone name such as UTC or Europe/Paris", f.Zone)
		}
		if f.Layout == "" {
			p.add(path+".zone", "needs a layout")
		}
	}
	if f.Layout != "" {
		if _, err := time.Parse(f.Layout, time.Date(2026, 11, 30, 23, 41, 5, 0, time.UTC).Format(f.Layout)); err != nil {
			p.add(path+".layout", "%q is not a Go time layout that reads back what it writes (such as \"2006/01/02 at 3:04 pm\")", f.Layout)
		} else if f.Zone == "" && !layoutHasZone(f.Layout) {
			p.add(path+".layout", "%q has no time zone: give zone too", f.Layout)
		}
	}
}

var accountNames = map[string]bool{"login": true, "slug": true, "name": true}

// layoutHasZone reports whether a Go time layout reads a zone or offset.
func layoutHasZone(layout string) bool {
	for _, z := range []string{"MST", "Z07", "-07", "-0700", "Z0700"} {
		if strings.Contains(layout, z) {
			return true
		}
	}
	return false
}
