package torture

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// Browser modes of a seed.
const (
	// ModeLaunch: each operator launches its own Chrome on the dedicated
	// profile (the default configuration).
	ModeLaunch = "launch"
	// ModeAttach: the harness keeps the person's Chrome running on the
	// profile, with a tab of the person's open in it; operators attach to
	// it through its DevToolsActivePort file.
	ModeAttach = "attach"
)

// Entry is one calendar entry of a schedule.
type Entry struct {
	ID   string
	Type string // post, reply, thread, like, follow
	Text string
	// Parts are a thread's texts.
	Parts []string
	// Target names a seeded object: "post:N" (the N-th seeded post, from 0)
	// for replies, likes and threads that answer a post, "user:HANDLE" for
	// follows; "" for posts and new threads.
	Target string
	// OlderTwin: an identical older post by the actor is seeded before the
	// first run (only for posts and a thread's first part). It is not an
	// effect, and it is never this entry's result.
	OlderTwin bool
	// Due is when the entry falls due, after the first run starts: later
	// runs find new work.
	Due time.Duration
	// Media are the images the entry attaches: a post's or a reply's, a
	// thread's first part's. Drawn by the media stream (planMedia).
	Media []MediaItem
}

// MediaItem is one image of an entry, written to the media directory
// before the first run: its bytes are drawn from the seed, unique to the
// seed, the entry and the item.
type MediaItem struct {
	Name string // the file's name in the media directory
	Type string // png, gif or jpeg: the type its bytes are
	Alt  string
}

// texts returns the texts the entry publishes, in order.
func (e Entry) texts() []string {
	if e.Type == "thread" {
		return e.Parts
	}
	if e.Text != "" {
		return []string{e.Text}
	}
	return nil
}

// Fault is one demosite fault switch and its value, as Faults.Set takes it.
type Fault struct{ Name, Value string }

func (f Fault) String() string { return f.Name + "=" + f.Value }

// Event kinds injected while an operator runs.
const (
	EvChromeKill = "chrome_kill"   // SIGKILL Chrome's process tree
	EvTabClose   = "tab_close"     // the person closes one of browserop's tabs
	EvPause      = "pause"         // SIGSTOP the operator past its lease, start another, SIGCONT
	EvFaultFlip  = "fault_flip"    // change the site's fault switches mid-run
	EvClock      = "clock_forward" // move the site's clock forward mid-run
)

// Event is something done to a running operator, At after it started, or
// (OnExecuting) the moment the ledger shows it marked an action executing:
// between that write and the click.
type Event struct {
	Kind        string
	At          time.Duration
	OnExecuting bool
	// Hold is how long a pause lasts.
	Hold time.Duration
	// Faults replace the site's switches (fault_flip).
	Faults []Fault
	// Clock is how far the site's clock moves (clock_forward).
	Clock time.Duration
}

func (ev Event) String() string {
	s := fmt.Sprintf("%s@%s", ev.Kind, ev.At)
	if ev.OnExecuting {
		s = ev.Kind + "@executing"
	}
	switch ev.Kind {
	case EvPause:
		s += fmt.Sprintf("(hold %s)", ev.Hold)
	case EvFaultFlip:
		s += "(" + faultList(ev.Faults) + ")"
	case EvClock:
		s += fmt.Sprintf("(+%s)", ev.Clock)
	}
	return s
}

// RunSpec is one operator run of the chaos phase.
type RunSpec struct {
	// Faults are the site's switches for the run, set before it starts.
	Faults []Fault
	// Clock moves the site's clock forward before the run.
	Clock time.Duration
	// LocalAhead puts browserop's clock ahead of the site's by this much
	// before the run. browserop has no clock hook for its processes, so
	// the site's clock moves back instead: for every comparison of the
	// site's timestamps with browserop's it is the same.
	LocalAhead time.Duration
	// Crash arms these crash points in the operator (BROWSEROP_CRASH_AT).
	Crash []string
	// Race starts a second operator RaceDelay after the first, with
	// RaceCrash armed.
	Race      bool
	RaceDelay time.Duration
	RaceCrash []string
	// UserTab (launch mode): the person opens a tab in the operator's
	// Chrome while it runs; it must never be closed or navigated by it.
	UserTab bool
	Events  []Event
}

// Schedule is everything a seed does, drawn from the seed alone.
type Schedule struct {
	Seed uint64
	Mode string
	// SiteAhead starts the site's clock this far ahead of browserop's:
	// the site stamped everything before the seed (an older twin too) on
	// that clock.
	SiteAhead time.Duration
	Entries   []Entry
	Runs      []RunSpec
	// Adapter, when set, is the wrong adapter every operator of the seed
	// runs with (planAdapter).
	Adapter *AdapterFault
	// Person, when set, is what the person does with a tab handed to
	// them (planPerson).
	Person *PersonFault
	// PersonEdits: the person types into the editor browserop filled, in
	// every chaos run (person_edits_field, planEdits).
	PersonEdits bool
	// CleanupUnknown: the person never chose a cleanup preference for the
	// profile, so browserop closes none of its tabs and records each one
	// kept. Otherwise the world chooses submitted_and_probe_blockers
	// before the first run. Drawn from the seed alone (one in five), so
	// that the rest of the schedule is what it was.
	CleanupUnknown bool
}

// Plan draws the schedule of a seed: fully reproducible, the same seed
// gives the same schedule on any machine. A seed from AdapterFaultSeeds on
// may run with a wrong adapter; PlanWith asks for one on any seed.
func Plan(seed uint64) Schedule { return PlanWith(seed, AdapterPolicy{}) }

// PlanWith is Plan with the adapter faults p asks for.
func PlanWith(seed uint64, p AdapterPolicy) Schedule {
	s := planBase(seed)
	planAdapter(&s, p)
	planPerson(&s, p.Person)
	return s
}

// planBase is a seed's schedule without adapter faults.
func planBase(seed uint64) Schedule {
	rng := rand.New(rand.NewPCG(seed, 0x746f727475726521))
	s := Schedule{Seed: seed, Mode: ModeLaunch, CleanupUnknown: seed%5 == 2}
	if rng.IntN(2) == 0 {
		s.Mode = ModeAttach
	}
	if rng.IntN(10) == 0 {
		s.SiteAhead = []time.Duration{10 * time.Second, 3 * time.Hour}[rng.IntN(2)]
	}
	// Seeded objects: posts 0 (bob), 1 (carol), 2 (bob) to reply to and
	// like; bob, carol and mallory to follow. Like and follow targets are
	// used once each: a second like of a liked post is no intent of its own.
	likeTargets := rng.Perm(3)
	followTargets := []string{"bob", "carol", "mallory"}
	rng.Shuffle(len(followTargets), func(i, j int) { followTargets[i], followTargets[j] = followTargets[j], followTargets[i] })
	n := 1 + rng.IntN(3)
	for i := range n {
		e := Entry{ID: fmt.Sprintf("s%d-e%d", seed, i)}
		if i > 0 {
			e.Due = []time.Duration{0, 0, 2 * time.Second, 5 * time.Second}[rng.IntN(4)]
		}
		kinds := []string{"post", "post", "thread", "thread", "reply", "reply", "like", "follow"}
		e.Type = kinds[rng.IntN(len(kinds))]
		if e.Type == "like" && len(likeTargets) == 0 || e.Type == "follow" && len(followTargets) == 0 {
			e.Type = "post"
		}
		switch e.Type {
		case "post":
			e.Text = text(rng, seed, i, 0)
			e.OlderTwin = rng.IntN(6) == 0
		case "thread":
			parts := 2 + rng.IntN(2)
			for p := range parts {
				e.Parts = append(e.Parts, text(rng, seed, i, p))
			}
			if rng.IntN(3) == 0 {
				e.Target = fmt.Sprintf("post:%d", rng.IntN(3))
			} else {
				e.OlderTwin = rng.IntN(6) == 0
			}
		case "reply":
			e.Text = text(rng, seed, i, 0)
			e.Target = fmt.Sprintf("post:%d", rng.IntN(3))
		case "like":
			e.Target = fmt.Sprintf("post:%d", likeTargets[0])
			likeTargets = likeTargets[1:]
		case "follow":
			e.Target = "user:" + followTargets[0]
			followTargets = followTargets[1:]
		}
		s.Entries = append(s.Entries, e)
	}
	runs := 1 + rng.IntN(3)
	for range runs {
		s.Runs = append(s.Runs, planRun(rng, s.Mode))
	}
	planMedia(&s)
	return s
}

// mediaFaults are the site's media switches.
var mediaFaults = []string{"upload_fail", "upload_delay", "drop_alt", "reencode"}

// planMedia draws, from a stream of its own (so that the rest of a seed's
// schedule is what it was before media were drawn), the images entries
// attach and, for a schedule with any, the media switches of its runs and
// the crash point between an upload and its click.
func planMedia(s *Schedule) {
	rng := rand.New(rand.NewPCG(s.Seed, 0x6d65646961212121))
	types := []string{"png", "png", "gif", "jpeg"}
	attached := false
	for i := range s.Entries {
		e := &s.Entries[i]
		if e.Type != "post" && e.Type != "reply" && e.Type != "thread" || rng.IntN(3) != 0 {
			continue
		}
		for k := range 1 + rng.IntN(2) {
			t := types[rng.IntN(len(types))]
			ext := map[string]string{"png": "png", "gif": "gif", "jpeg": "jpg"}[t]
			alt := fmt.Sprintf("torture image %d/%d/%d: %s", s.Seed, i, k, words[rng.IntN(len(words))])
			if rng.IntN(5) == 0 {
				alt = ""
			}
			e.Media = append(e.Media, MediaItem{Name: fmt.Sprintf("%s-%d.%s", e.ID, k, ext), Type: t, Alt: alt})
		}
		attached = true
	}
	if !attached {
		return
	}
	for i := range s.Runs {
		r := &s.Runs[i]
		if rng.IntN(4) == 0 {
			r.Crash = appendUnique(r.Crash, "after-upload")
		}
		if rng.IntN(3) == 0 {
			name := mediaFaults[rng.IntN(len(mediaFaults))]
			v := "true"
			if name == "upload_delay" {
				v = (time.Duration(200+rng.IntN(1800)) * time.Millisecond).String()
			}
			r.Faults = append(r.Faults, Fault{Name: name, Value: v})
			slices.SortFunc(r.Faults, func(a, b Fault) int { return strings.Compare(a.Name, b.Name) })
		}
	}
}

// drawnCrashPoints are the crash points a run draws from: the ones every
// action reaches, in a fixed list, so that a seed's schedule stays the
// same when a point is added (the regression tests replay seeds).
// "after-upload" is armed by the media stream (planMedia).
var drawnCrashPoints = []string{
	"after-reserve",
	"after-executing",
	"after-click-sent",
	"after-click-returned",
	"after-verification",
	"after-verified",
	"before-budget-commit",
	"tab-created",
	"tab-close",
}

func planRun(rng *rand.Rand, mode string) RunSpec {
	var r RunSpec
	if rng.IntN(2) == 0 {
		r.Faults = drawFaults(rng, 1+rng.IntN(2), false)
	}
	if rng.IntN(6) == 0 {
		r.Clock = drawClock(rng)
	}
	if rng.IntN(12) == 0 {
		r.LocalAhead = []time.Duration{10 * time.Second, 2 * time.Minute, time.Hour}[rng.IntN(3)]
	}
	if rng.IntN(100) < 60 {
		r.Crash = []string{drawnCrashPoints[rng.IntN(len(drawnCrashPoints))]}
		if rng.IntN(6) == 0 {
			r.Crash = appendUnique(r.Crash, drawnCrashPoints[rng.IntN(len(drawnCrashPoints))])
		}
	}
	if rng.IntN(5) == 0 {
		r.Race = true
		r.RaceDelay = time.Duration(rng.IntN(800)) * time.Millisecond
		if rng.IntN(3) == 0 {
			r.RaceCrash = []string{drawnCrashPoints[rng.IntN(len(drawnCrashPoints))]}
		}
	}
	if mode == ModeLaunch && rng.IntN(5) < 2 {
		r.UserTab = true
	}
	// Runs take one to a few seconds: most events come early.
	at := func(lo, hi int) time.Duration {
		return time.Duration(lo+rng.IntN(hi-lo)) * time.Millisecond
	}
	if rng.IntN(7) == 0 {
		r.Events = append(r.Events, Event{Kind: EvChromeKill, At: at(200, 2000), OnExecuting: rng.IntN(2) == 0})
	}
	if rng.IntN(5) == 0 {
		r.Events = append(r.Events, Event{Kind: EvTabClose, At: at(150, 2000), OnExecuting: rng.IntN(2) == 0})
	}
	if rng.IntN(6) == 0 {
		r.Events = append(r.Events, Event{Kind: EvPause, At: at(100, 1500), Hold: leaseTTL + at(300, 1500), OnExecuting: rng.IntN(2) == 0})
	}
	if rng.IntN(6) == 0 {
		r.Events = append(r.Events, Event{Kind: EvFaultFlip, At: at(100, 1500), Faults: drawFaults(rng, rng.IntN(3), true)})
	}
	if rng.IntN(20) == 0 {
		r.Events = append(r.Events, Event{Kind: EvClock, At: at(100, 1500), Clock: drawClock(rng)})
	}
	// Events at executing come first, each at the first executing after the
	// previous event; timed events follow in time order.
	slices.SortStableFunc(r.Events, func(a, b Event) int {
		if a.OnExecuting != b.OnExecuting {
			if a.OnExecuting {
				return -1
			}
			return 1
		}
		return int(a.At - b.At)
	})
	return r
}

func drawClock(rng *rand.Rand) time.Duration {
	return []time.Duration{30 * time.Second, 10 * time.Minute, 3 * time.Hour, 80 * time.Hour}[rng.IntN(4)]
}

// midRunUnsafe are the switches never flipped while an operator runs:
// switch_account makes the site commit a mutation as another account after
// browserop's preflight proved the actor, which no client can prevent.
var midRunUnsafe = map[string]bool{"switch_account": true}

// drawnFaults are the switches a run draws from, in a fixed list: a seed's
// schedule stays the same when the site gains a switch (the regression
// tests replay seeds). The media switches are drawn by the media stream
// (planMedia).
var drawnFaults = []string{"editor_append", "visibility_delay", "drop_after_commit", "hang_after_commit",
	"error_500_after_commit", "slow", "session_expired", "captcha", "rate_limit", "restricted", "switch_account",
	"offsite_redirect", "injection", "refuse_duplicates"}

// drawFaults draws n distinct fault switches with values.
func drawFaults(rng *rand.Rand, n int, midRun bool) []Fault {
	var names []string
	for _, name := range drawnFaults {
		if !midRun || !midRunUnsafe[name] {
			names = append(names, name)
		}
	}
	rng.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	var out []Fault
	for _, name := range names[:min(n, len(names))] {
		out = append(out, Fault{Name: name, Value: faultValue(rng, name)})
	}
	slices.SortFunc(out, func(a, b Fault) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// faultValue draws a value for a switch. Durations stay within what the
// adapter's contract allows: a post shows within the settle time.
func faultValue(rng *rand.Rand, name string) string {
	switch name {
	case "visibility_delay":
		return (time.Duration(200+rng.IntN(800)) * time.Millisecond).String()
	case "slow":
		if rng.IntN(5) == 0 {
			return (actionTimeout + time.Second).String() // past the action timeout
		}
		return (time.Duration(100+rng.IntN(600)) * time.Millisecond).String()
	case "switch_account":
		return []string{"bob", "carol"}[rng.IntN(2)]
	case "offsite_redirect":
		return "http://127.0.0.1:9/elsewhere"
	}
	return "true"
}

var words = []string{"ledger", "once", "verified", "crash", "lease", "tab", "reconcile", "never", "twice",
	"ambiguous", "fence", "chrome", "thread", "reply", "budget", "proof", "café", "naïve", "🙂", "日本語",
	"<b>bold</b>", "a&b", "\"quoted\"", "it's", "50%", "#tag", "@bob"}

// text draws a post text, unique to its seed, entry and part.
func text(rng *rand.Rand, seed uint64, entry, part int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "torture %d/%d/%d:", seed, entry, part)
	for range 2 + rng.IntN(8) {
		sep := " "
		switch rng.IntN(12) {
		case 0:
			sep = "  "
		case 1:
			sep = "\n"
		}
		b.WriteString(sep)
		b.WriteString(words[rng.IntN(len(words))])
	}
	return b.String()
}

func appendUnique(xs []string, x string) []string {
	if slices.Contains(xs, x) {
		return xs
	}
	return append(xs, x)
}

func faultList(fs []Fault) string {
	if len(fs) == 0 {
		return "none"
	}
	var parts []string
	for _, f := range fs {
		if f.Value == "true" {
			parts = append(parts, f.Name)
		} else {
			parts = append(parts, f.String())
		}
	}
	return strings.Join(parts, ",")
}

// String prints the schedule, one line per entry and per run.
func (s Schedule) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d: mode %s, %d entries, %d runs", s.Seed, s.Mode, len(s.Entries), len(s.Runs))
	if s.SiteAhead > 0 {
		fmt.Fprintf(&b, ", site clock %s ahead", s.SiteAhead)
	}
	if s.CleanupUnknown {
		b.WriteString(", no cleanup preference (tabs kept)")
	} else {
		b.WriteString(", cleanup submitted_and_probe_blockers")
	}
	if s.Adapter != nil {
		fmt.Fprintf(&b, " (reproduce: browserop torture --seed %d --adapter-fault %s)\n", s.Seed, s.Adapter.Name)
		fmt.Fprintf(&b, "  adapter fault %s: %s; site: %s", s.Adapter, s.Adapter.mistake(), faultList(s.Adapter.Site))
		if len(s.Adapter.Chaos) > 0 {
			fmt.Fprintf(&b, "; every chaos run: %s", faultList(s.Adapter.Chaos))
		}
		if len(s.Adapter.Crash) > 0 {
			fmt.Fprintf(&b, "; run 1 also crash=%s", strings.Join(s.Adapter.Crash, ","))
		}
		if s.Adapter.PersonPosts > 0 {
			fmt.Fprintf(&b, "; the person posts %d times by hand before the settle", s.Adapter.PersonPosts)
		}
		b.WriteString("\n")
	} else {
		fmt.Fprintf(&b, " (reproduce: browserop torture --seed %d)\n", s.Seed)
	}
	if f := s.Person; f != nil {
		fmt.Fprintf(&b, "  person fault %s (reproduce alone: browserop torture --seed %d --person-fault %s): an agent task posts %q, confirm: post\n", f, s.Seed, f.Name, f.Text)
	}
	if s.PersonEdits {
		fmt.Fprintf(&b, "  person fault %s: the person types into the filled editor while its images upload, every chaos run (person_edits)\n", PersonEditsField)
	}
	for _, e := range s.Entries {
		fmt.Fprintf(&b, "  entry %s %s", e.ID, e.Type)
		if e.Due > 0 {
			fmt.Fprintf(&b, " due+%s", e.Due)
		}
		if e.Target != "" {
			fmt.Fprintf(&b, " target=%s", e.Target)
		}
		if e.OlderTwin {
			b.WriteString(" older-twin")
		}
		for _, t := range e.texts() {
			fmt.Fprintf(&b, " %q", t)
		}
		for _, m := range e.Media {
			fmt.Fprintf(&b, " media=%s:%q", m.Name, m.Alt)
		}
		b.WriteString("\n")
	}
	for i, r := range s.Runs {
		fmt.Fprintf(&b, "  run %d: faults=%s", i+1, faultList(r.Faults))
		if r.Clock > 0 {
			fmt.Fprintf(&b, " site-clock+%s", r.Clock)
		}
		if r.LocalAhead > 0 {
			fmt.Fprintf(&b, " local-clock-ahead+%s", r.LocalAhead)
		}
		if len(r.Crash) > 0 {
			fmt.Fprintf(&b, " crash=%s", strings.Join(r.Crash, ","))
		}
		if r.Race {
			fmt.Fprintf(&b, " race(+%s", r.RaceDelay)
			if len(r.RaceCrash) > 0 {
				fmt.Fprintf(&b, " crash=%s", strings.Join(r.RaceCrash, ","))
			}
			b.WriteString(")")
		}
		if r.UserTab {
			b.WriteString(" user-tab")
		}
		for _, ev := range r.Events {
			b.WriteString(" " + ev.String())
		}
		b.WriteString("\n")
	}
	return b.String()
}
