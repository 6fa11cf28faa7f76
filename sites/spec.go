package sites

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/browserop/browserop/kind"
)

// Spec is the YAML schema of a declarative site adapter
// (configs/sites/<name>.yaml). URL templates take the placeholders {origin}
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
}

// IdentitySpec says where the signed-in handle is: the element at Selector
// on the page at URL, its Attribute (or its text, without a leading "@").
type IdentitySpec struct {
	URL       string `yaml:"url"`
	Selector  string `yaml:"selector"`
	Attribute string `yaml:"attribute"`
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

// ActionSpec is one action: where to open it, the editor to fill (post,
// reply, thread part), the one control to click, and how to read the result
// (a post) or the control's state (like, follow).
type ActionSpec struct {
	Open   string        `yaml:"open"`
	Fill   *SelectorSpec `yaml:"fill"`
	Submit SelectorSpec  `yaml:"submit"`
	Result *ResultSpec   `yaml:"result"`
	State  *StateSpec    `yaml:"state"`
}

// SelectorSpec names one element.
type SelectorSpec struct {
	Selector string `yaml:"selector"`
}

// FieldSpec reads one value: the first element matching Selector inside the
// item ("" is the item itself), its Attribute (or its text). Template, when
// set, turns the value into a URL, such as "{origin}/p/{value}".
type FieldSpec struct {
	Selector  string `yaml:"selector"`
	Attribute string `yaml:"attribute"`
	Template  string `yaml:"template"`
}

func (f *FieldSpec) set() bool { return f != nil && (f.Selector != "" || f.Attribute != "") }

// ResultSpec reads the created post on the landed page: the one element
// Item, and its fields.
type ResultSpec struct {
	Item   string     `yaml:"item"`
	Text   *FieldSpec `yaml:"text"`
	Author *FieldSpec `yaml:"author"`
	Time   *FieldSpec `yaml:"time"`
	Parent *FieldSpec `yaml:"parent"`
	Link   *FieldSpec `yaml:"link"`
}

// StateSpec reads a toggle control: the Attribute of the one element at
// Selector is DoneValue when the action's effect is present and, when
// NotDoneValue is set, NotDoneValue when it is absent; anything else is an
// unknown state.
type StateSpec struct {
	Selector     string `yaml:"selector"`
	Attribute    string `yaml:"attribute"`
	DoneValue    string `yaml:"done_value"`
	NotDoneValue string `yaml:"not_done_value"`
}

// SearchSpec says how to find an exact live result: the actor's timeline at
// URL, newest first, read item by item, following Next for up to MaxPages
// pages, back to Lookback before now; CompleteMarker matches on the last
// page. Settle is how long the site may take to show a new post.
type SearchSpec struct {
	URL            string     `yaml:"url"`
	Item           string     `yaml:"item"`
	Text           *FieldSpec `yaml:"text"`
	Author         *FieldSpec `yaml:"author"`
	Time           *FieldSpec `yaml:"time"`
	Parent         *FieldSpec `yaml:"parent"`
	Link           *FieldSpec `yaml:"link"`
	Next           string     `yaml:"next"`
	CompleteMarker string     `yaml:"complete_marker"`
	MaxPages       int        `yaml:"max_pages"`
	Lookback       Duration   `yaml:"lookback"`
	Settle         *Duration  `yaml:"settle"`
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
	checkSelector(&p, "identity.selector", s.Identity.Selector, true)
	checkName(&p, "identity.attribute", s.Identity.Attribute)

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
	creates := false
	for _, k := range kind.All {
		a := s.Actions.get(k)
		if a == nil {
			continue
		}
		configured = true
		if k.Creates() {
			creates = true
		}
		a.validate(&p, "actions."+string(k), k, origins)
	}
	if !configured {
		p.add("actions", "required: configure at least one of post, reply, thread_part, like, follow")
	}
	if creates && s.Search == nil {
		p.add("search", "required: post, reply and thread_part need a search to reconcile")
	}
	if s.Search != nil {
		s.Search.validate(&p, "search", origins)
	}
	return p
}

func (a *ActionSpec) validate(p *problems, path string, k kind.Kind, origins map[string]bool) {
	if a.Open == "" {
		p.add(path+".open", "required")
	} else {
		checkTemplate(p, path+".open", a.Open, origins, k != kind.Post)
		if k != kind.Post && !strings.Contains(a.Open, "{target}") {
			p.add(path+".open", "must open the intent's {target}")
		}
	}
	checkSelector(p, path+".submit.selector", a.Submit.Selector, true)
	if k.Creates() {
		if a.Fill == nil {
			p.add(path+".fill.selector", "required")
		} else {
			checkSelector(p, path+".fill.selector", a.Fill.Selector, true)
		}
		if a.State != nil {
			p.add(path+".state", "only like and follow have a state")
		}
		if a.Result == nil {
			p.add(path+".result", "required")
			return
		}
		r := a.Result
		checkSelector(p, path+".result.item", r.Item, true)
		checkField(p, path+".result.text", r.Text, true, origins)
		checkField(p, path+".result.author", r.Author, true, origins)
		checkField(p, path+".result.link", r.Link, true, origins)
		checkField(p, path+".result.time", r.Time, false, origins)
		checkField(p, path+".result.parent", r.Parent, k != kind.Post, origins)
		return
	}
	if a.Fill != nil {
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
	if st.NotDoneValue != "" && st.NotDoneValue == st.DoneValue {
		p.add(path+".state.not_done_value", "must differ from done_value")
	}
}

func (s *SearchSpec) validate(p *problems, path string, origins map[string]bool) {
	if s.URL == "" {
		p.add(path+".url", "required")
	} else {
		checkTemplate(p, path+".url", s.URL, origins, false)
		if !strings.Contains(s.URL, "{actor}") {
			p.add(path+".url", "must contain {actor}: the search walks the actor's own timeline")
		}
	}
	checkSelector(p, path+".item", s.Item, true)
	checkField(p, path+".text", s.Text, true, origins)
	checkField(p, path+".author", s.Author, true, origins)
	checkField(p, path+".time", s.Time, true, origins)
	checkField(p, path+".link", s.Link, true, origins)
	checkField(p, path+".parent", s.Parent, false, origins)
	checkSelector(p, path+".next", s.Next, false)
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
	}
}

func checkField(p *problems, path string, f *FieldSpec, required bool, origins map[string]bool) {
	if !f.set() {
		if required {
			p.add(path, "required: give a selector, an attribute or both")
		}
		return
	}
	checkSelector(p, path+".selector", f.Selector, false)
	checkName(p, path+".attribute", f.Attribute)
	if f.Template != "" {
		checkFieldTemplate(p, path+".template", f.Template, origins)
	}
}
