// Package torture proves browserop's promises under abuse: no double
// posts, no lost actions, no false "verified".
//
// For each seed it draws (math/rand/v2, fully reproducible) a small
// content calendar and a schedule of faults, runs real `browserop run`
// processes against an in-process demosite and headless Chromium, does
// the faults to them (SIGKILL at crash points, every demosite fault
// switch, Chrome killed, tabs closed by the person, a second operator
// racing, an operator frozen past its lease and woken, the site's clock
// moved forward), then turns the faults off and runs operators until every
// intent has settled, with a person settling what stays ambiguous by
// looking at the site. Then it checks the demosite's oracle and the ledger
// against the invariants of docs/design.md (see Invariants) and reports each
// invariant's violations. See docs/torture.md.
package torture

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/browserop/browserop/operator"
)

// Options configure a torture run.
type Options struct {
	// Bin is the browserop binary the operators run.
	Bin string
	// Chrome is the Chrome or Chromium executable.
	Chrome string
	// Dir holds the seeds' directories ("" = the system's temp dir).
	Dir string
	// Seeds are the seeds to run.
	Seeds []uint64
	// Parallel is how many seeds run at once (default 1).
	Parallel int
	// KeepFailed keeps a failed seed's directory (ledger, profile, logs).
	KeepFailed bool
	// KeepAll keeps every seed's directory.
	KeepAll bool
	// Progress, when set, gets a line per seed as it ends (with its
	// observations), and the schedule, timeline and violations of a seed
	// that failed or made an observation.
	Progress io.Writer
	// Verbose prints every seed's schedule and timeline to Progress.
	Verbose bool
	// Load runs hog processes beside the operators for the whole run (a
	// busy machine); the summary line names it.
	Load Load
	// Adapter asks for adapter faults on every seed (by default only seeds
	// from AdapterFaultSeeds on may draw one).
	Adapter AdapterPolicy
}

// SeedResult is what one seed did and found.
type SeedResult struct {
	Seed     uint64        `json:"seed"`
	Mode     string        `json:"mode"`
	Entries  int           `json:"entries"`
	Runs     int           `json:"operator_runs"`
	Duration time.Duration `json:"duration_ns"`
	// CrashHits counts the crash points operators killed themselves at.
	CrashHits map[string]int `json:"crash_hits"`
	// Faults counts what was injected, by kind.
	Faults map[string]int `json:"faults"`
	// Violations lists each invariant's violations.
	Violations map[string][]string `json:"violations,omitempty"`
	// Observations counts what breaks no checked invariant but is worth
	// knowing (see ObsClosedWithBrowser, ObsLeakedTabs).
	Observations map[string]int `json:"observations,omitempty"`
	// AdapterFault and AdapterVariant name the wrong adapter the seed ran
	// with ("" when none).
	AdapterFault   string `json:"adapter_fault,omitempty"`
	AdapterVariant string `json:"adapter_variant,omitempty"`
	// Hung counts operators killed for running past the bound.
	Hung int `json:"hung,omitempty"`
	// Error is a failure of the harness itself (the seed proves nothing).
	Error    string `json:"error,omitempty"`
	Schedule string `json:"schedule"`
	Timeline string `json:"timeline,omitempty"`
	Dir      string `json:"dir,omitempty"`
}

// Failed reports whether the seed violated an invariant. A seed the
// harness could not run (Error) proves nothing either way: it is not a
// failed seed, and is reported apart (Errored).
func (r *SeedResult) Failed() bool { return len(r.Violations) > 0 }

// Errored reports whether the harness itself failed on the seed.
func (r *SeedResult) Errored() bool { return r.Error != "" }

// Report is the outcome of a torture run.
type Report struct {
	Seeds  int `json:"seeds"`
	Passed int `json:"passed"`
	// Failed counts the seeds that violated an invariant; Errors the seeds
	// the harness could not run (a failure of the harness, not of
	// browserop: neither passed nor failed).
	Failed       int            `json:"failed"`
	Errors       int            `json:"harness_errors"`
	CrashHits    map[string]int `json:"crash_hits"`
	Faults       map[string]int `json:"faults"`
	Violations   map[string]int `json:"violations"`
	Observations map[string]int `json:"observations"`
	Runs         int            `json:"operator_runs"`
	Hung         int            `json:"hung"`
	// AdapterFaults counts the seeds run with each adapter fault, and
	// AdapterFaultViolations each invariant's violations under each
	// ("fault.invariant").
	AdapterFaults          map[string]int `json:"adapter_faults"`
	AdapterFaultViolations map[string]int `json:"adapter_fault_violations"`
	// Parallel and Load say how busy the machine was: seeds at once, and
	// the hogs beside them.
	Parallel int           `json:"parallel"`
	Load     Load          `json:"load"`
	Duration time.Duration `json:"duration_ns"`
	// FailedSeeds lists the seeds that failed, each reproducible alone;
	// ErrorSeeds the seeds the harness could not run.
	FailedSeeds []uint64      `json:"failed_seeds"`
	ErrorSeeds  []uint64      `json:"harness_error_seeds,omitempty"`
	Results     []*SeedResult `json:"results"`
}

// Run runs every seed and returns the report. It returns an error only
// when it cannot run at all.
func Run(ctx context.Context, o Options) (*Report, error) {
	if o.Bin == "" || o.Chrome == "" {
		return nil, fmt.Errorf("torture: the browserop binary and Chrome are required")
	}
	if o.Parallel < 1 {
		o.Parallel = 1
	}
	if o.Dir == "" {
		o.Dir = os.TempDir()
	}
	// The seeds' worlds are made inside Dir: a folder that is not there
	// yet is made, and one that cannot be is refused before any seed runs.
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("torture: the directory for the seeds' worlds: %w", err)
	}
	if o.Load.CPU > 0 || o.Load.IO {
		_, stop, err := startLoad(ctx, o.Load, o.Dir)
		if err != nil {
			return nil, err
		}
		defer stop()
		time.Sleep(loadSettleTime)
	}
	start := time.Now()
	results := make([]*SeedResult, len(o.Seeds))
	next := make(chan int)
	var wg sync.WaitGroup
	var pmu sync.Mutex
	done := 0
	for range o.Parallel {
		wg.Go(func() {
			for i := range next {
				r := RunSeed(ctx, &o, o.Seeds[i])
				results[i] = r
				pmu.Lock()
				done++
				if o.Progress != nil {
					writeProgress(o.Progress, r, done, len(o.Seeds), o.Verbose)
				}
				pmu.Unlock()
			}
		})
	}
	for i := range o.Seeds {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	rep := &Report{
		CrashHits:              map[string]int{},
		Faults:                 map[string]int{},
		Violations:             map[string]int{},
		Observations:           map[string]int{ObsClosedWithBrowser: 0, ObsLeakedTabs: 0, ObsOtherAccount: 0, ObsAmbiguousByAdapter: 0},
		Duration:               time.Since(start),
		Parallel:               o.Parallel,
		Load:                   o.Load,
		AdapterFaults:          map[string]int{},
		AdapterFaultViolations: map[string]int{},
	}
	for _, name := range AdapterFaultNames() {
		rep.AdapterFaults[name] = 0
	}
	for _, inv := range Invariants {
		rep.Violations[inv] = 0
	}
	for _, r := range results {
		if r == nil || ctx.Err() != nil && r.Error != "" {
			continue // not run, or cut short by the cancellation
		}
		rep.Results = append(rep.Results, r)
		rep.Seeds++
		rep.Runs += r.Runs
		rep.Hung += r.Hung
		for k, v := range r.CrashHits {
			rep.CrashHits[k] += v
		}
		for k, v := range r.Faults {
			rep.Faults[k] += v
		}
		for k, v := range r.Violations {
			rep.Violations[k] += len(v)
			if r.AdapterFault != "" {
				rep.AdapterFaultViolations[r.AdapterFault+"."+k] += len(v)
			}
		}
		if r.AdapterFault != "" {
			rep.AdapterFaults[r.AdapterFault]++
		}
		for k, v := range r.Observations {
			rep.Observations[k] += v
		}
		switch {
		case r.Failed():
			// Violations found before the harness failed still count.
			rep.Failed++
			rep.FailedSeeds = append(rep.FailedSeeds, r.Seed)
		case r.Errored():
		default:
			rep.Passed++
		}
		if r.Errored() {
			rep.Errors++
			rep.ErrorSeeds = append(rep.ErrorSeeds, r.Seed)
		}
	}
	return rep, ctx.Err()
}

// RunSeed runs one seed.
func RunSeed(ctx context.Context, o *Options, seed uint64) *SeedResult {
	return RunSchedule(ctx, o, PlanWith(seed, o.Adapter))
}

// RunSchedule runs one schedule: a seed's, or one a regression test wrote.
func RunSchedule(ctx context.Context, o *Options, sch Schedule) *SeedResult {
	seed := sch.Seed
	res := &SeedResult{Seed: seed, Mode: sch.Mode, Entries: len(sch.Entries), CrashHits: map[string]int{},
		Faults: map[string]int{}, Violations: map[string][]string{}, Observations: map[string]int{}, Schedule: sch.String()}
	if sch.Adapter != nil {
		res.AdapterFault = sch.Adapter.Name
		res.AdapterVariant = sch.Adapter.Variant
	}
	start := time.Now()
	w := &world{opts: o, sch: sch, res: res, tl: &timeline{start: start}, ctx: ctx}
	defer func() {
		res.Duration = time.Since(start)
		res.Runs = len(w.procs)
		keep := o.KeepAll || o.KeepFailed && (res.Failed() || res.Errored())
		if keep {
			res.Dir = w.dir
		}
		res.Timeline = w.tl.String()
		w.cleanup(keep)
		if len(res.Violations) == 0 {
			res.Violations = nil
		}
	}()
	if err := w.setup(); err != nil {
		res.Error = "setup: " + err.Error()
		return res
	}
	if w.refusedAtLoad != "" {
		// No operator runs with an adapter it refuses: nothing can be
		// published, and there is nothing to check.
		res.Observations[ObsRefusedAtLoad]++
		return res
	}
	for i, r := range sch.Runs {
		if ctx.Err() != nil {
			res.Error = ctx.Err().Error()
			return res
		}
		w.chaosRun(i, r)
	}
	w.settle()
	if sch.Person != nil && w.ctx.Err() == nil {
		// On a settled world: the task's post is handed over at once, and
		// a settle phase follows what the person did.
		w.personPhase()
		w.settledOK, w.waitsForPerson = false, false
		w.settle()
	}
	if err := w.check(); err != nil {
		res.Error = "check: " + err.Error()
	}
	return res
}

func writeProgress(w io.Writer, r *SeedResult, done, total int, verbose bool) {
	status := "ok"
	if r.Failed() {
		status = "FAIL"
	} else if r.Errored() {
		status = "HARNESS ERROR"
	}
	hits := slices.Sorted(maps.Keys(r.CrashHits))
	var obs []string
	notable := false // an observation worth the seed's schedule and timeline
	for _, k := range slices.Sorted(maps.Keys(r.Observations)) {
		if r.Observations[k] > 0 {
			obs = append(obs, fmt.Sprintf("%s=%d", k, r.Observations[k]))
			// A wrong adapter is expected to cost a person's attention.
			notable = notable || k != ObsAmbiguousByAdapter && k != ObsRefusedAtLoad
		}
	}
	fmt.Fprintf(w, "[%d/%d] seed %d %s (%s, %d entries, %d operator runs, %s) crashes=%s", done, total, r.Seed, status,
		r.Mode, r.Entries, r.Runs, r.Duration.Round(100*time.Millisecond), strings.Join(hits, ","))
	if r.AdapterFault != "" {
		fmt.Fprintf(w, " adapter_fault=%s(%s)", r.AdapterFault, r.AdapterVariant)
	}
	if len(obs) > 0 {
		fmt.Fprintf(w, " observations=%s", strings.Join(obs, ","))
	}
	fmt.Fprintln(w)
	if !r.Failed() && !r.Errored() && !notable && !verbose {
		return
	}
	fmt.Fprint(w, indent(r.Schedule))
	if r.Error != "" {
		fmt.Fprintf(w, "    harness error: %s\n", r.Error)
	}
	for _, inv := range Invariants {
		for _, v := range r.Violations[inv] {
			fmt.Fprintf(w, "    VIOLATION %s: %s\n", inv, v)
		}
	}
	fmt.Fprintf(w, "    timeline:\n%s\n", indent(indent(r.Timeline)))
	if r.Dir != "" {
		fmt.Fprintf(w, "    kept in %s\n", r.Dir)
	}
}

func indent(s string) string {
	var b strings.Builder
	for line := range strings.Lines(s) {
		b.WriteString("    " + line)
	}
	if !strings.HasSuffix(b.String(), "\n") {
		b.WriteString("\n")
	}
	return b.String()
}

// SummaryLine is the one line of figures: seeds, crash points hit out of
// all, faults injected by kind, and each invariant's violation count.
func (r *Report) SummaryLine() string {
	var b strings.Builder
	hit := 0
	for _, p := range operator.CrashPoints {
		if r.CrashHits[p] > 0 {
			hit++
		}
	}
	fmt.Fprintf(&b, "torture: seeds=%d passed=%d failed=%d parallel=%d load=%s cores=%d operator_runs=%d crash_points_hit=%d/%d", r.Seeds, r.Passed, r.Failed,
		r.Parallel, r.Load, runtime.NumCPU(), r.Runs, hit, len(operator.CrashPoints))
	var hits []string
	for _, p := range operator.CrashPoints {
		hits = append(hits, fmt.Sprintf("%s=%d", p, r.CrashHits[p]))
	}
	fmt.Fprintf(&b, " crashes{%s}", strings.Join(hits, " "))
	var faults []string
	keys := slices.Collect(maps.Keys(r.Faults))
	sort.Strings(keys)
	for _, k := range keys {
		faults = append(faults, fmt.Sprintf("%s=%d", k, r.Faults[k]))
	}
	fmt.Fprintf(&b, " faults{%s}", strings.Join(faults, " "))
	var inv []string
	for _, k := range Invariants {
		inv = append(inv, fmt.Sprintf("%s=%d", k, r.Violations[k]))
	}
	fmt.Fprintf(&b, " violations{%s}", strings.Join(inv, " "))
	var obs []string
	for _, k := range slices.Sorted(maps.Keys(r.Observations)) {
		obs = append(obs, fmt.Sprintf("%s=%d", k, r.Observations[k]))
	}
	fmt.Fprintf(&b, " observations{%s}", strings.Join(obs, " "))
	ran := 0
	var af []string
	for _, name := range AdapterFaultNames() {
		ran += r.AdapterFaults[name]
		af = append(af, fmt.Sprintf("%s=%d", name, r.AdapterFaults[name]))
	}
	fmt.Fprintf(&b, " adapter_faults{%s}", strings.Join(af, " "))
	if ran > 0 {
		var av []string
		for _, k := range slices.Sorted(maps.Keys(r.AdapterFaultViolations)) {
			if r.AdapterFaultViolations[k] > 0 {
				av = append(av, fmt.Sprintf("%s=%d", k, r.AdapterFaultViolations[k]))
			}
		}
		fmt.Fprintf(&b, " adapter_fault_violations{%s}", strings.Join(av, " "))
	}
	if r.Errors > 0 || r.Hung > 0 {
		fmt.Fprintf(&b, " harness_errors=%d hung=%d", r.Errors, r.Hung)
	}
	per := time.Duration(0)
	if r.Seeds > 0 {
		per = r.Duration / time.Duration(r.Seeds)
	}
	fmt.Fprintf(&b, " time=%s per_seed=%s", r.Duration.Round(time.Second), per.Round(100*time.Millisecond))
	return b.String()
}

// ClosingLine is the plain form: "torture: N passed, M failed", and, when
// the harness could not run some seeds, how many (they are neither passed
// nor failed).
func (r *Report) ClosingLine() string {
	s := fmt.Sprintf("torture: %d passed, %d failed", r.Passed, r.Failed)
	if r.Errors > 0 {
		s += fmt.Sprintf(", %d harness errors (seeds not run: %s)", r.Errors, seedList(r.ErrorSeeds))
	}
	return s
}

func seedList(seeds []uint64) string {
	var parts []string
	for i, s := range seeds {
		if i == 10 {
			parts = append(parts, fmt.Sprintf("and %d more", len(seeds)-i))
			break
		}
		parts = append(parts, fmt.Sprint(s))
	}
	return strings.Join(parts, " ")
}

// JSON is the report as JSON, without the passing seeds' timelines.
func (r *Report) JSON() ([]byte, error) {
	out := *r
	out.Results = nil
	for _, s := range r.Results {
		c := *s
		if !c.Failed() && !c.Errored() {
			c.Timeline = ""
		}
		out.Results = append(out.Results, &c)
	}
	return json.MarshalIndent(out, "", "  ")
}
