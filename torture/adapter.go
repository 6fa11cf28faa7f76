package torture

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/browserop/browserop/demosite"
)

// Adapter faults: a seed may run every operator with the demo adapter
// perturbed the way people get adapters wrong, against a demosite whose
// behaviour exposes the mistake (docs/torture.md, "Adapter faults"). The
// invariants do not change: a wrong adapter may cost a person's attention
// (an action waits, ambiguous) or a publication, never a second effect,
// an effect of no intent, or a false "verified".

// AdapterFault is the wrong adapter a seed runs with.
type AdapterFault struct {
	// Name is one of AdapterFaultNames; Variant the form of the mistake.
	Name, Variant string
	// Site are the demosite switches on for the whole seed, chaos and
	// settle phases alike: how the site is.
	Site []Fault
	// Chaos are switches on through every run of the chaos phase, beside
	// the run's own (the settle phase turns them off).
	Chaos []Fault
	// Crash are crash points armed in the first chaos run too: a mistake
	// in the search shows only when a click's outcome must be found there.
	Crash []string
	// PersonPosts is how many posts the person makes on the actor's
	// account by hand when the settle phase begins (no intent's, and no
	// effect): newer items that push the seed's off a list that stops.
	PersonPosts int
}

func (f *AdapterFault) String() string { return f.Name + "(" + f.Variant + ")" }

// adapterFault is one kind of mistake: its variants, the site's behaviour
// that exposes it, and the edit of the adapter.
type adapterFault struct {
	name     string
	variants []string
	// mistake is what the adapter gets wrong, as the schedule prints it.
	mistake func(variant string) string
	site    func(variant string) []Fault
	chaos   func(variant string) []Fault
	// perturb edits the adapter (decoded YAML) in place.
	perturb func(a map[string]any, variant string) error
	// text, when set, is appended to every text of the seed, so that the
	// site's rewrite has something to act on.
	text func(variant string) string
	// searchOnly: the mistake is in the search (or readiness), read only
	// when a click's outcome is not known from its landing: the first
	// chaos run crashes right after its click returned (Crash).
	searchOnly bool
	// personPosts: see AdapterFault.PersonPosts.
	personPosts int
	// refusal: the mistake is a refusal rule that says the site created
	// nothing when it did. The operator has only the adapter's word, so an
	// action failed while its effect is on the site is counted
	// (ObsFalseFailedByAdapter), not a violation; a second effect still is.
	refusal bool
}

// The adapter faults, in a fixed order: a seed draws by index, so a fault
// added at the end leaves the earlier seeds' draws as they were.
var adapterFaults = []adapterFault{
	{
		name:     "transform_mismatch",
		variants: demosite.Rewrites,
		mistake: func(v string) string {
			return map[string]string{
				"signature":           `transforms predict the signature "\n-- sent from demosite" (the site writes "\n— sent from demosite")`,
				"shorten_links":       "no transform for the links the site shortens",
				"curly_quotes":        "a transform for ' only (the site curls \" too)",
				"collapse_whitespace": "a transform that collapses spaces only (the site collapses newlines too)",
				"prefix":              `transforms predict 'Created page with "TEXT"' (the site writes “TEXT”)`,
			}[v]
		},
		site: func(v string) []Fault { return []Fault{{"rewrite_text", v}} },
		perturb: func(a map[string]any, v string) error {
			var ts []any
			switch v {
			case "signature":
				ts = []any{transform("$", "\n-- sent from demosite")}
			case "curly_quotes":
				ts = []any{transform("'", "’")}
			case "collapse_whitespace":
				ts = []any{transform(" +", " ")}
			case "prefix":
				ts = []any{transform("^", `Created page with "`), transform("$", `"`)}
			}
			if ts != nil {
				a["transforms"] = ts
			}
			return nil
		},
		text: func(v string) string {
			switch v {
			case "shorten_links":
				return " https://example.com/torture/link"
			case "curly_quotes":
				return ` "quoted" it's`
			case "collapse_whitespace":
				return "  two  spaces\nand a line"
			}
			return ""
		},
	},
	{
		name:       "search_misses_fields",
		searchOnly: true,
		variants:   demosite.CompactFields,
		mistake: func(v string) string {
			return "the search reads every item's " + v + " where a full item shows it; the site shows replies compact, without it"
		},
		site: func(v string) []Fault { return []Fault{{"compact_replies", v}} },
	},
	{
		name:        "truncated_list",
		searchOnly:  true,
		personPosts: 2,
		variants:    []string{"1", "2"},
		mistake: func(v string) string {
			return "no complete_marker: the walk takes a page without a next link for the end; the site lists only the newest " + v
		},
		site: func(v string) []Fault { return []Fault{{"timeline_newest", v}} },
		perturb: func(a map[string]any, v string) error {
			s, err := node(a, "search")
			if err != nil {
				return err
			}
			delete(s, "complete_marker")
			return nil
		},
	},
	{
		name:     "refusal_resend",
		variants: []string{"duplicate_409", "validation_selector"},
		mistake: func(v string) string {
			if v == "duplicate_409" {
				return "refusal {kind: duplicate, status: 409}: the site answers a resent submission 409 after committing the first"
			}
			return "refusal {kind: validation, selector: #form-error}: the site answers a resent submission with an edit conflict after committing the first"
		},
		site: func(string) []Fault { return []Fault{{"resend_after_commit", "true"}} },
		perturb: func(a map[string]any, v string) error {
			if v == "duplicate_409" {
				return addRefusal(a, map[string]any{"kind": "duplicate", "status": 409, "message": "#form-error"})
			}
			return addRefusal(a, map[string]any{"kind": "validation", "selector": "#form-error", "message": "#form-error"})
		},
		refusal: true,
	},
	{
		name:     "refusal_success_page",
		variants: []string{"textarea", "submit_button"},
		mistake: func(v string) string {
			if v == "textarea" {
				return `refusal {kind: validation, selector: "textarea"} ("the form came back"): a permalink, the success page, has the reply form`
			}
			return `refusal {kind: validation, selector: "button[type=submit]"}: the success page has buttons too`
		},
		perturb: func(a map[string]any, v string) error {
			sel := "textarea"
			if v == "submit_button" {
				sel = "button[type=submit]"
			}
			return addRefusal(a, map[string]any{"kind": "validation", "selector": sel})
		},
		refusal: true,
	},
	{
		name:     "refusal_error_page",
		variants: []string{"status_500", "status_500_selector"},
		mistake: func(v string) string {
			return "refusal {status: 500}: the site commits, then answers 500 (error_500_after_commit in every chaos run)"
		},
		chaos: func(string) []Fault { return []Fault{{"error_500_after_commit", "true"}} },
		perturb: func(a map[string]any, v string) error {
			if v == "status_500" {
				return addRefusal(a, map[string]any{"kind": "rate_limit", "status": 500, "message": "h1#server-error"})
			}
			return addRefusal(a, map[string]any{"kind": "validation", "status": 500, "selector": "h1#server-error"})
		},
		refusal: true,
	},
	{
		name:       "theme_change",
		searchOnly: true,
		variants:   demosite.Themes,
		mistake: func(v string) string {
			return "the search's item selector (#timeline article.post) matches nothing: the site's theme lists article." + strings.TrimSuffix(v, "s")
		},
		site: func(v string) []Fault { return []Fault{{"theme", v}} },
	},
	{
		name:     "parent_not_read",
		variants: []string{"result", "result_and_search"},
		mistake: func(v string) string {
			if v == "result" {
				return "a reply's result reads no parent; the site attaches a reply to a reply to the thread's root"
			}
			return "neither a reply's result nor the search reads a parent; the site attaches a reply to a reply to the thread's root"
		},
		site: func(string) []Fault { return []Fault{{"flat_replies", "true"}} },
		perturb: func(a map[string]any, v string) error {
			for _, k := range []string{"reply", "thread_part"} {
				r, err := node(a, "actions", k, "result")
				if err != nil {
					return err
				}
				delete(r, "parent")
			}
			if v == "result_and_search" {
				s, err := node(a, "search")
				if err != nil {
					return err
				}
				delete(s, "parent")
			}
			return nil
		},
	},
	{
		name: "wrong_zone",
		// The landing's own post verifies whatever its time reads: the
		// times matter where the search reads them.
		searchOnly: true,
		variants:   []string{"America/New_York", "Asia/Tokyo"},
		mistake: func(v string) string {
			return "times read from the <time> text as UTC; the site shows them in " + v
		},
		site: func(v string) []Fault { return []Fault{{"time_zone", v}} },
		perturb: func(a map[string]any, v string) error {
			for _, path := range [][]string{{"search"}, {"actions", "post", "result"}, {"actions", "reply", "result"}, {"actions", "thread_part", "result"}} {
				n, err := node(a, path...)
				if err != nil {
					return err
				}
				n["time"] = map[string]any{"selector": "time", "layout": "2006-01-02 15:04:05.000", "zone": "UTC"}
			}
			return nil
		},
	},
	{
		name:     "canonical_drops_id",
		variants: []string{"keep_query", "drop_query", "rewrite"},
		mistake: func(v string) string {
			switch v {
			case "keep_query":
				return "canonical keep_query [page] drops the id of /post?id=N"
			case "drop_query":
				return "canonical drop_query [id] drops the id of /post?id=N"
			}
			return "canonical rewrite '/[0-9]+$' -> '' (meant for page numbers) drops the id of /p/N"
		},
		site: func(v string) []Fault {
			if v == "rewrite" {
				return nil
			}
			return []Fault{{"permalink_shape", "query"}}
		},
		perturb: func(a map[string]any, v string) error {
			switch v {
			case "keep_query":
				a["canonical"] = map[string]any{"keep_query": []any{"page"}}
			case "drop_query":
				a["canonical"] = map[string]any{"drop_query": []any{"id"}}
			case "rewrite":
				a["canonical"] = map[string]any{"rewrite": []any{transform("/[0-9]+$", "")}}
				return nil
			}
			// The rest of the adapter follows the site's shape: parents
			// are /post?id=N too.
			for _, path := range [][]string{{"search"}, {"actions", "post", "result"}, {"actions", "reply", "result"}, {"actions", "thread_part", "result"}} {
				n, err := node(a, path...)
				if err != nil {
					return err
				}
				n["parent"] = map[string]any{"attribute": "data-parent", "template": "{origin}/post?id={value}"}
			}
			return nil
		},
	},
	{
		name:       "ready_too_early",
		searchOnly: true,
		variants:   []string{"1s", "2s"},
		mistake: func(v string) string {
			return "ready {selector: #main} holds at once; the site draws its lists " + v + " later, an empty complete list until then"
		},
		site: func(v string) []Fault { return []Fault{{"late_list", v}} },
		perturb: func(a map[string]any, v string) error {
			a["ready"] = map[string]any{"selector": "#main"}
			return nil
		},
	},
	{
		name:     "late_if",
		variants: []string{"1s", "2s"},
		mistake: func(v string) string {
			return `a step {if: "#category-panel", click: "#category-news"} judged at once; the site draws the panel ` + v + " after the page loads"
		},
		site: func(v string) []Fault { return []Fault{{"late_panel", v}} },
		perturb: func(a map[string]any, v string) error {
			for _, k := range []string{"post", "reply", "thread_part"} {
				n, err := node(a, "actions", k)
				if err != nil {
					return err
				}
				n["steps"] = []any{map[string]any{"if": "#category-panel", "click": "#category-news", "wait": `#category-panel[data-chosen="news"]`}}
			}
			return nil
		},
	},
}

// lateIfCategory is the category the late_if adapter's step chooses.
const lateIfCategory = "news"

// AdapterFaultNames lists every adapter fault, in the order seeds draw
// them.
func AdapterFaultNames() []string {
	var out []string
	for _, f := range adapterFaults {
		out = append(out, f.name)
	}
	return out
}

func lookupAdapterFault(name string) (adapterFault, bool) {
	for _, f := range adapterFaults {
		if f.name == name {
			return f, true
		}
	}
	return adapterFault{}, false
}

// AdapterFaultSeeds is the first seed of the adapter-fault range: from it
// on, by default, half the seeds draw an adapter fault. Below it a seed
// draws one only when asked (AdapterPolicy), so that the seeds of every
// earlier run keep their schedules.
const AdapterFaultSeeds = 2000000

// AdapterPolicy says which seeds run with a wrong adapter.
type AdapterPolicy struct {
	// All: every seed draws an adapter fault (`--adapter-faults`).
	All bool
	// Only, when set, is the fault every seed runs with, its variant drawn
	// (`--adapter-fault NAME`).
	Only string
	// Person, when set, is the person fault every seed runs
	// (`--person-fault NAME`; PersonFaultNames); by default one seed in
	// seven draws one (planPerson).
	Person string
}

// planAdapter draws, from a stream of its own (so that the rest of a
// seed's schedule is what it was without it), whether the seed runs with
// a wrong adapter and which, and applies it to the schedule: the texts the
// site's rewrite acts on, and for parent_not_read a thread with a reply to
// a reply. The runs are left as they are: the fault's switches are set
// beside theirs (world.setFaults).
func planAdapter(s *Schedule, p AdapterPolicy) {
	rng := rand.New(rand.NewPCG(s.Seed, 0x6164617074657221))
	coin := rng.IntN(2) == 0
	k := rng.IntN(len(adapterFaults))
	vr := rng.Uint64()
	if !p.All && p.Only == "" && (s.Seed < AdapterFaultSeeds || !coin) {
		return
	}
	kind := adapterFaults[k]
	if p.Only != "" {
		var ok bool
		if kind, ok = lookupAdapterFault(p.Only); !ok {
			return // refused by the caller (ValidAdapterFault)
		}
	}
	f := &AdapterFault{Name: kind.name, Variant: kind.variants[vr%uint64(len(kind.variants))]}
	if kind.site != nil {
		f.Site = kind.site(f.Variant)
	}
	if kind.chaos != nil {
		f.Chaos = kind.chaos(f.Variant)
	}
	if kind.searchOnly {
		f.Crash = []string{"after-click-returned"}
	}
	f.PersonPosts = kind.personPosts
	s.Adapter = f
	if kind.text != nil {
		if add := kind.text(f.Variant); add != "" {
			for i := range s.Entries {
				e := &s.Entries[i]
				if e.Text != "" {
					e.Text += add
				}
				for j := range e.Parts {
					e.Parts[j] += add
				}
			}
		}
	}
	if kind.name == "parent_not_read" && !hasReplyToReply(s.Entries) {
		// A reply to a reply is what the site attaches elsewhere: the seed
		// gets a thread with one.
		i := len(s.Entries)
		e := Entry{ID: fmt.Sprintf("s%d-e%d", s.Seed, i), Type: "thread"}
		for part := range 3 {
			e.Parts = append(e.Parts, text(rng, s.Seed, i, part))
		}
		s.Entries = append(s.Entries, e)
	}
}

// hasReplyToReply reports whether an entry publishes a reply to a reply:
// a thread's third part, or the second part of a thread that answers a
// post.
func hasReplyToReply(es []Entry) bool {
	for _, e := range es {
		if e.Type == "thread" && (len(e.Parts) > 2 || len(e.Parts) > 1 && e.Target != "") {
			return true
		}
	}
	return false
}

// ValidAdapterFault reports whether name is an adapter fault.
func ValidAdapterFault(name string) error {
	if _, ok := lookupAdapterFault(name); !ok {
		return fmt.Errorf("unknown adapter fault %q (known: %s)", name, strings.Join(AdapterFaultNames(), ", "))
	}
	return nil
}

// perturbAdapter returns the adapter y (YAML) with f's mistake made in it.
func perturbAdapter(y string, f *AdapterFault) (string, error) {
	kind, ok := lookupAdapterFault(f.Name)
	if !ok {
		return "", fmt.Errorf("unknown adapter fault %q", f.Name)
	}
	if kind.perturb == nil {
		return y, nil // the adapter is right for the site it was written for
	}
	var a map[string]any
	if err := yaml.Unmarshal([]byte(y), &a); err != nil {
		return "", err
	}
	if err := kind.perturb(a, f.Variant); err != nil {
		return "", fmt.Errorf("adapter fault %s: %w", f, err)
	}
	out, err := yaml.Marshal(a)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("# The demo adapter with the adapter fault %s: %s\n%s", f, kind.mistake(f.Variant), out), nil
}

// node returns the mapping at path in a decoded adapter.
func node(a map[string]any, path ...string) (map[string]any, error) {
	cur := a
	for i, k := range path {
		next, ok := cur[k].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("the demo adapter has no mapping %s", strings.Join(path[:i+1], "."))
		}
		cur = next
	}
	return cur, nil
}

func transform(match, replace string) map[string]any {
	return map[string]any{"match": quoted(match), "replace": quoted(replace)}
}

// quoted is a string written as a double-quoted YAML scalar (yaml.v3
// writes one that starts with a newline as a block it cannot read back).
type quoted string

func (q quoted) MarshalYAML() (any, error) {
	return &yaml.Node{Kind: yaml.ScalarNode, Style: yaml.DoubleQuotedStyle, Value: string(q)}, nil
}

func addRefusal(a map[string]any, r map[string]any) error {
	rs, _ := a["refusals"].([]any)
	a["refusals"] = append(rs, r)
	return nil
}

// mistake is what the seed's adapter gets wrong, in words.
func (f *AdapterFault) mistake() string {
	kind, ok := lookupAdapterFault(f.Name)
	if !ok {
		return ""
	}
	return kind.mistake(f.Variant)
}

// refusalMistake reports whether f's mistake is a refusal rule.
func (f *AdapterFault) refusalMistake() bool {
	kind, ok := lookupAdapterFault(f.Name)
	return ok && kind.refusal
}
