package torture

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/browserop/browserop/demosite"
	"github.com/browserop/browserop/sites"
)

// Every adapter fault, in every variant, makes a change to the demo
// adapter that the loader takes (or none, where the site changes under an
// adapter written for it), and names demosite switches with values the
// site takes.
// refusedAtLoad are the adapter faults the loader refuses, with what it
// says: a refusal declared on a server error status (the site may have
// saved the item before it failed), a reply's search that reads no parent.
// The operator never runs them; the run counts such seeds as
// adapter_refused_at_load.
var refusedAtLoad = map[string]string{
	"refusal_error_page(status_500)":          "is a server error",
	"refusal_error_page(status_500_selector)": "is a server error",
	// A reply's search must read each item's parent.
	"parent_not_read(result_and_search)": "must read each item's parent",
}

func TestAdapterFaultsLoad(t *testing.T) {
	base, err := demoAdapter("http://127.0.0.1:9999")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range adapterFaults {
		if len(k.variants) == 0 || k.mistake == nil {
			t.Errorf("%s: no variants or no mistake", k.name)
		}
		for _, v := range k.variants {
			f := &AdapterFault{Name: k.name, Variant: v}
			if k.site != nil {
				f.Site = k.site(v)
			}
			if k.chaos != nil {
				f.Chaos = k.chaos(v)
			}
			y, err := perturbAdapter(base, f)
			if err != nil {
				t.Errorf("%s: %v", f, err)
				continue
			}
			_, err = sites.Parse("demo", []byte(y))
			refused := refusedAtLoad[k.name+"("+v+")"]
			switch {
			case refused != "" && err == nil:
				t.Errorf("%s: the loader takes an adapter it must refuse", f)
			case refused != "":
				if !strings.Contains(err.Error(), refused) {
					t.Errorf("%s: refused for another reason: %v", f, err)
				}
			case err != nil:
				t.Errorf("%s: the perturbed adapter does not load: %v\n%s", f, err, y)
			}
			if k.perturb != nil && y == base {
				t.Errorf("%s: the adapter did not change", f)
			}
			if k.perturb == nil && len(f.Site) == 0 {
				t.Errorf("%s: neither the adapter nor the site changes", f)
			}
			if f.mistake() == "" {
				t.Errorf("%s: no words for the mistake", f)
			}
			var sw demosite.Faults
			for _, x := range append(slices.Clone(f.Site), f.Chaos...) {
				if err := sw.Set(x.Name, x.Value); err != nil {
					t.Errorf("%s: %v", f, err)
				}
			}
		}
	}
}

// The adapter's mistake is what the fault says: spot checks of the YAML.
func TestPerturbAdapter(t *testing.T) {
	base, err := demoAdapter("http://127.0.0.1:9999")
	if err != nil {
		t.Fatal(err)
	}
	load := func(name, variant string) *sites.Declarative {
		t.Helper()
		y, err := perturbAdapter(base, &AdapterFault{Name: name, Variant: variant})
		if err != nil {
			t.Fatal(err)
		}
		d, err := sites.Parse("demo", []byte(y))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	d := load("canonical_drops_id", "keep_query")
	if got := d.Canonical("http://127.0.0.1:9999/post?id=12"); got != "http://127.0.0.1:9999/post" {
		t.Errorf("keep_query: canonical %q", got)
	}
	d = load("canonical_drops_id", "rewrite")
	if got := d.Canonical("http://127.0.0.1:9999/p/12"); got != "http://127.0.0.1:9999/p" {
		t.Errorf("rewrite: canonical %q", got)
	}
	text := `it's "quoted"`
	d = load("transform_mismatch", "curly_quotes")
	if got, site := d.Expected("post", "alice", text, time.Now()), demosite.Rewrite("curly_quotes", text); got == site || got == text {
		t.Errorf("curly_quotes: expected %q, the site shows %q", got, site)
	}
	d = load("transform_mismatch", "signature")
	if got, site := d.Expected("post", "alice", "x", time.Now()), demosite.Rewrite("signature", "x"); got == site || got != "x\n-- sent from demosite" {
		t.Errorf("signature: expected %q, the site shows %q", got, site)
	}
	for _, v := range []string{"duplicate_409", "validation_selector"} {
		y, _ := perturbAdapter(base, &AdapterFault{Name: "refusal_resend", Variant: v})
		if !strings.Contains(y, "rate_limit") || strings.Count(y, "kind:") < 7 {
			t.Errorf("refusal_resend %s: the site's refusals are kept and one added:\n%s", v, y)
		}
	}
}

// Below AdapterFaultSeeds no seed draws an adapter fault unless asked:
// every earlier seed keeps its schedule. From it on about half draw one.
// With --adapter-faults every seed draws one, and with its adapter fault
// taken out a seed's schedule is the one Plan draws without it.
func TestPlanAdapterFaults(t *testing.T) {
	for seed := range uint64(400) {
		if Plan(seed).Adapter != nil {
			t.Fatalf("seed %d draws an adapter fault by default", seed)
		}
	}
	n := 0
	for seed := uint64(AdapterFaultSeeds); seed < AdapterFaultSeeds+400; seed++ {
		if Plan(seed).Adapter != nil {
			n++
		}
	}
	if n < 150 || n > 250 {
		t.Errorf("%d of 400 seeds from %d draw an adapter fault, want about half", n, AdapterFaultSeeds)
	}
	drawn := map[string]bool{}
	for seed := range uint64(600) {
		base := Plan(seed)
		s := PlanWith(seed, AdapterPolicy{All: true})
		if s.Adapter == nil {
			t.Fatalf("seed %d: --adapter-faults drew none", seed)
		}
		drawn[s.Adapter.String()] = true
		if got := withoutAdapter(s); !reflect.DeepEqual(got, base) {
			t.Fatalf("seed %d: without its adapter fault the schedule changed:\n got: %s\nwant: %s", seed, got, base)
		}
		if !strings.Contains(s.String(), "adapter fault "+s.Adapter.String()+": ") ||
			!strings.Contains(s.String(), "--adapter-fault "+s.Adapter.Name+")") {
			t.Fatalf("seed %d: the schedule does not print its adapter fault:\n%s", seed, s)
		}
		only := PlanWith(seed, AdapterPolicy{Only: s.Adapter.Name})
		if !reflect.DeepEqual(only, s) {
			t.Fatalf("seed %d: --adapter-fault %s does not reproduce its --adapter-faults schedule", seed, s.Adapter.Name)
		}
	}
	for _, k := range adapterFaults {
		for _, v := range k.variants {
			if !drawn[k.name+"("+v+")"] {
				t.Errorf("adapter fault %s(%s) never drawn", k.name, v)
			}
		}
	}
	// A default seed of the range reproduces with its fault named.
	for seed := uint64(AdapterFaultSeeds); seed < AdapterFaultSeeds+20; seed++ {
		if s := Plan(seed); s.Adapter != nil && !reflect.DeepEqual(PlanWith(seed, AdapterPolicy{Only: s.Adapter.Name}), s) {
			t.Errorf("seed %d: --adapter-fault %s does not reproduce it", seed, s.Adapter.Name)
		}
	}
	// parent_not_read always has a reply to a reply to attach elsewhere.
	for seed := range uint64(100) {
		if s := PlanWith(seed, AdapterPolicy{Only: "parent_not_read"}); !hasReplyToReply(s.Entries) {
			t.Errorf("seed %d: parent_not_read without a reply to a reply", seed)
		}
	}
}

// withoutAdapter is s without what planAdapter added.
func withoutAdapter(s Schedule) Schedule {
	f := s.Adapter
	s.Adapter = nil
	if f == nil {
		return s
	}
	kind, _ := lookupAdapterFault(f.Name)
	add := ""
	if kind.text != nil {
		add = kind.text(f.Variant)
	}
	base := planBase(s.Seed)
	s.Entries = slices.Clone(s.Entries)
	if len(s.Entries) > len(base.Entries) {
		s.Entries = s.Entries[:len(base.Entries)]
	}
	for i := range s.Entries {
		e := &s.Entries[i]
		e.Text = strings.TrimSuffix(e.Text, add)
		e.Parts = slices.Clone(e.Parts)
		for j := range e.Parts {
			e.Parts[j] = strings.TrimSuffix(e.Parts[j], add)
		}
	}
	return s
}
