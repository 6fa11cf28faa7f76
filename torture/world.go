package torture

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/bundled"
	"github.com/browserop/browserop/demosite"
	"github.com/browserop/browserop/internal/child"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/sites"
	"github.com/chromedp/cdproto/target"
)

// Timing of every seed's operators: short, so that leases expire, absence
// becomes definitive and timeouts fire within seconds.
const (
	leaseTTL      = 2 * time.Second
	heartbeat     = 500 * time.Millisecond
	actionTimeout = 3 * time.Second
	// settleTime is the demo adapter's settle: longer than any delay the
	// schedule gives the site before a post shows (slow + visibility_delay).
	settleTime = 3 * time.Second
	// surfaceWithin is the demo adapter's bound on how late a submission
	// may surface: well past the slowest answer the schedule gives (slow
	// past the action timeout, then a visibility delay), so that a pass
	// proves an uncertain action absent only once it truly cannot surface,
	// the late click of a dead pass's browser included (the bound counts
	// from the proof that its tab is gone).
	surfaceWithin = 20 * time.Second
	// runBound is how long one operator may take before the harness calls
	// it hung and kills it.
	runBound = 90 * time.Second
	// settleRuns bounds the operator runs of the settle phase.
	settleRuns = 12
)

// siteClock is the demosite's clock: real time plus an offset the schedule
// moves forward.
type siteClock struct{ offset atomic.Int64 }

func (c *siteClock) now() time.Time              { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *siteClock) advance(d time.Duration)     { c.offset.Add(int64(d)) }
func (c *siteClock) ahead() time.Duration        { return time.Duration(c.offset.Load()) }
func (w *world) logf(format string, args ...any) { w.tl.add(fmt.Sprintf(format, args...)) }

// timeline is the seed's log, printed when it fails.
type timeline struct {
	mu    sync.Mutex
	start time.Time
	lines []string
}

func (t *timeline) add(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, fmt.Sprintf("%7.2fs %s", time.Since(t.start).Seconds(), s))
}

func (t *timeline) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, "\n")
}

// world is one seed's isolated installation: directories, config, demosite,
// profile, calendar, and the processes and browsers it runs.
type world struct {
	opts  *Options
	sch   Schedule
	res   *SeedResult
	tl    *timeline
	ctx   context.Context
	dir   string
	env   []string
	cfg   string
	prof  string
	cal   string
	ldb   string
	site  *demosite.Server
	clock *siteClock
	base  string
	// seeded are the seeded posts' ids: 0 bob, 1 carol, 2 bob.
	seeded []int64

	// Attach mode: the person's Chrome, their DevTools client, their tab,
	// and the pages they had before browserop came.
	chrome   *browser.Browser
	person   *person
	userTab  *userTab
	keep     map[target.ID]bool
	userTabs int
	// launchTab is the person's tab in an operator's Chrome (launch mode).
	launchTab    *userTab
	launchPerson *person
	// personMu orders the person opening a tab before the harness's
	// tab_close looks for browserop's tabs (see openUserTab).
	personMu sync.Mutex
	// personTabs: every tab the person opened in an operator's Chrome
	// (launch mode). Such a Chrome stays running after its operator, and
	// the next operator attaches to it, the person's tabs still open.
	personTabs map[target.ID]bool

	mu    sync.Mutex
	procs []*proc
	logN  int
	// deadAt is when the last operator died holding (perhaps) the lease.
	deadAt time.Time
	// dueBase is when the entries' Due counts from.
	dueBase time.Time
	// settledOK: the settle phase ended with an ok pass; waitsForPerson:
	// its last pass ended waiting for a person.
	settledOK      bool
	waitsForPerson bool
	lastPass       string
	// lastHardStop: the settle phase's last pass ended in a hard stop.
	lastHardStop bool
	// settling: the settle phase has begun (the adapter fault's chaos
	// switches are off).
	settling bool
	// refusedAtLoad: the seed's perturbed adapter does not load (why); no
	// operator can run with it, and the seed runs none.
	refusedAtLoad string
	// handoff: the person fault's task and the tab handed over for it.
	handoff *handoffState
}

func (w *world) count(kind string) {
	w.mu.Lock()
	w.res.Faults[kind]++
	w.mu.Unlock()
}

// Observations: what the harness saw that breaks no invariant it checks,
// counted for the report.
const (
	// ObsClosedWithBrowser: the person's tab in a Chrome an operator
	// launched went away when the operator closed that Chrome.
	ObsClosedWithBrowser = "user_tab_closed_with_launched_chrome"
	// ObsLeakedTabs: tabs browserop opened and left open in the person's
	// Chrome (attach mode) at the end of a seed.
	ObsLeakedTabs = "tabs_left_open_in_persons_chrome"
	// ObsOtherAccount: an effect that landed on another account than the
	// actor's (a click a browser carried out after the site's account
	// changed), which browserop named to the person on the action.
	ObsOtherAccount = "effects_on_another_account_named"
	// ObsAmbiguousByAdapter: an action of a seed with an adapter fault
	// that the settle phase left waiting for a person (who answered it):
	// the attention a wrong adapter may cost.
	ObsAmbiguousByAdapter = "ambiguous_by_adapter_fault"
	// ObsFalseFailedByAdapter: an action failed while its effect is on the
	// site, under an adapter fault whose refusal rule said the site
	// created nothing (the operator has only the adapter's word for it).
	ObsFalseFailedByAdapter = "false_failed_by_adapter_fault"
	// ObsHardStopByAdapter: under an adapter fault, the settle phase ended
	// on a hard stop (the operator stopped the site and said why, nothing
	// published): a person's attention, not an unsettled seed.
	ObsHardStopByAdapter = "hard_stops_by_adapter_fault"
	// ObsRefusedAtLoad: the seed's perturbed adapter does not load, so no
	// operator ran.
	ObsRefusedAtLoad = "adapter_refused_at_load"
)

func (w *world) observe(kind string) {
	w.mu.Lock()
	w.res.Observations[kind]++
	w.mu.Unlock()
}

func (w *world) violation(inv, format string, args ...any) {
	w.mu.Lock()
	w.res.Violations[inv] = append(w.res.Violations[inv], fmt.Sprintf(format, args...))
	w.mu.Unlock()
}

// setup builds the world up to a signed-in profile and a written calendar.
func (w *world) setup() error {
	var err error
	if w.dir, err = os.MkdirTemp(w.opts.Dir, fmt.Sprintf("seed-%d-", w.sch.Seed)); err != nil {
		return err
	}
	if w.dir, err = filepath.Abs(w.dir); err != nil {
		return err
	}
	w.prof = filepath.Join(w.dir, "profile")
	w.cal = filepath.Join(w.dir, "calendar")
	w.ldb = filepath.Join(w.dir, "state", "ledger.db")
	for _, d := range []string{w.cal, filepath.Join(w.dir, "sites"), filepath.Join(w.dir, "config"), w.mediaDir()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	if err := w.writeMedia(); err != nil {
		return err
	}
	w.env = child.Env(map[string]string{
		"HOME":            w.dir,
		"XDG_STATE_HOME":  filepath.Join(w.dir, "xdg-state"),
		"XDG_CONFIG_HOME": filepath.Join(w.dir, "xdg-config"),
	})

	w.clock = &siteClock{}
	w.clock.advance(w.sch.SiteAhead)
	w.site = demosite.New(demosite.Options{Oracle: true, Now: w.clock.now})
	if w.base, err = w.site.Start("127.0.0.1:0"); err != nil {
		return err
	}
	now := w.clock.now() // the site's clock stamps what was there before
	w.seeded = []int64{
		w.site.SeedPost("bob", "bob asks: what should a browser operator never do twice?", now.Add(-3*time.Hour)),
		w.site.SeedPost("carol", "carol: reconcile before retry", now.Add(-2*time.Hour)),
		w.site.SeedPost("bob", "bob again: leases expire, fences do not", now.Add(-90*time.Minute)),
	}
	for _, e := range w.sch.Entries {
		if e.OlderTwin {
			w.site.SeedPost("alice", e.texts()[0], now.Add(-time.Hour))
		}
	}
	if err := w.writeAdapter(); err != nil {
		return err
	}
	if err := w.writeConfig(); err != nil {
		return err
	}
	if f := w.sch.Adapter; f != nil {
		for _, x := range f.Site {
			w.count("site." + x.Name)
		}
		w.setFaults(nil)
		w.logf("adapter fault %s: %s; the site for the whole seed: %s", f, f.mistake(), faultList(f.Site))
		if w.refusedAtLoad != "" {
			w.logf("the perturbed adapter is refused at load: %s", w.refusedAtLoad)
			return nil
		}
	}
	if err := w.chooseCleanup(); err != nil {
		return err
	}
	w.logf("site, adapter and config ready")
	// The harness's own set-up is not under test: on a busy machine a
	// Chrome can take longer to come up than any one bound, so it tries
	// again before it calls the seed unrunnable.
	for try := 1; ; try++ {
		err := w.signIn(w.sch.Mode == ModeAttach)
		if err == nil {
			break
		}
		if try == signInTries || w.ctx.Err() != nil {
			return fmt.Errorf("sign in (%d tries): %w", try, err)
		}
		w.logf("sign in: %v; trying again", err)
	}
	w.logf("the profile is signed in")
	w.dueBase = time.Now()
	return w.writeCalendar(w.dueBase.Add(-time.Second))
}

// chooseCleanup is the person choosing the profile's cleanup preference,
// submitted_and_probe_blockers, through the CLI as a person would (so
// that it is keyed by the profile exactly as the operator reads it);
// unless the seed is one where nobody ever chose (CleanupUnknown).
func (w *world) chooseCleanup() error {
	if w.sch.CleanupUnknown {
		w.logf("no cleanup preference: every tab browserop opens is kept, and recorded so")
		return nil
	}
	p, err := startProc(w.opts.Bin, w.dir, w.env, "person chooses the cleanup preference",
		"config", "cleanup", string(ledger.CleanupSubmittedAndProbeBlockers), "--config", w.cfg)
	if err != nil {
		return err
	}
	if !p.Wait(30 * time.Second) {
		p.kill()
		return fmt.Errorf("browserop config cleanup did not end: %s", p.describe())
	}
	if code := p.Cmd.ProcessState.ExitCode(); code != 0 {
		return fmt.Errorf("browserop config cleanup exited %d: %s", code, p.describe())
	}
	return nil
}

// demoAdapter is the bundled demo adapter for the site at base, with the
// harness's settle and surface times.
func demoAdapter(base string) (string, error) {
	raw, err := fs.ReadFile(bundled.Sites, "sites/demo.yaml")
	if err != nil {
		return "", err
	}
	y := string(raw)
	if strings.Count(y, "http://127.0.0.1:8787") != 1 || strings.Count(y, "settle: 15s") != 1 {
		return "", errors.New("the bundled demo adapter changed: update torture's demoAdapter")
	}
	y = strings.Replace(y, "http://127.0.0.1:8787", base, 1)
	y = strings.Replace(y, "settle: 15s", "settle: "+settleTime.String()+"\n  surface_within: "+surfaceWithin.String(), 1)
	return y, nil
}

// writeAdapter writes the seed's adapter: the demo adapter, with the
// seed's adapter fault made in it.
func (w *world) writeAdapter() error {
	y, err := demoAdapter(w.base)
	if err != nil {
		return err
	}
	if f := w.sch.Adapter; f != nil {
		if y, err = perturbAdapter(y, f); err != nil {
			return err
		}
		// The operator refuses an adapter it cannot load: a mistake the
		// loader catches publishes nothing, which is fine (counted).
		if _, err := sites.Parse("demo", []byte(y)); err != nil {
			w.refusedAtLoad = err.Error()
		}
	}
	return os.WriteFile(filepath.Join(w.dir, "sites", "demo.yaml"), []byte(y), 0o600)
}

func (w *world) writeConfig() error {
	var b strings.Builder
	fmt.Fprintf(&b, "ledger:\n  path: %q\n", w.ldb)
	b.WriteString("browser:\n")
	fmt.Fprintf(&b, "  exec_path: %q\n", w.opts.Chrome)
	fmt.Fprintf(&b, "  profile_dir: %q\n", w.prof)
	b.WriteString("  headless: true\n")
	fmt.Fprintf(&b, "  no_sandbox: %t\n", os.Geteuid() == 0)
	fmt.Fprintf(&b, "  action_timeout: %q\n", actionTimeout.String())
	if w.sch.Mode == ModeAttach {
		fmt.Fprintf(&b, "  devtools_active_port_file: %q\n", filepath.Join(w.prof, browser.ActivePortFileName))
	}
	fmt.Fprintf(&b, "sites:\n  dir: %q\n", filepath.Join(w.dir, "sites"))
	fmt.Fprintf(&b, "operator:\n  lease_ttl: %q\n  heartbeat: %q\n", leaseTTL.String(), heartbeat.String())
	fmt.Fprintf(&b, "calendar:\n  dir: %q\n  media_dir: %q\n", w.cal, w.mediaDir())
	// Limits far above what a seed does: the harness checks that usage
	// equals verified actions and stays under every limit.
	b.WriteString("budgets:\n  formats:\n")
	for _, f := range []string{"post_text", "post_image", "thread", "reply", "like", "follow"} {
		fmt.Fprintf(&b, "    %s:\n      limit: %d\n      window: \"24h\"\n", f, budgetLimit)
	}
	fmt.Fprintf(&b, "  groups:\n    original:\n      formats: [post_text, post_image, thread]\n      limit: %d\n      window: \"24h\"\n", budgetLimit)
	b.WriteString("log:\n  format: json\n  level: info\n")
	w.cfg = filepath.Join(w.dir, "config", "browserop.yaml")
	return os.WriteFile(w.cfg, []byte(b.String()), 0o600)
}

const budgetLimit = 50

// targetURL resolves a schedule target to the demosite URL.
func (w *world) targetURL(t string) string {
	kind, v, _ := strings.Cut(t, ":")
	switch kind {
	case "post":
		var i int
		fmt.Sscan(v, &i)
		return w.permalink(w.seeded[i])
	case "user":
		return w.base + "/u/" + v
	}
	return ""
}

// permalink is the address the site gives post id: /p/N, or /post?id=N
// under the permalink_shape switch of an adapter fault.
func (w *world) permalink(id int64) string {
	if w.siteSwitch("permalink_shape") == "query" {
		return fmt.Sprintf("%s/post?id=%d", w.base, id)
	}
	return fmt.Sprintf("%s/p/%d", w.base, id)
}

// siteSwitch is the value of a switch the adapter fault keeps on for the
// whole seed, "" when none does.
func (w *world) siteSwitch(name string) string {
	if f := w.sch.Adapter; f != nil {
		for _, x := range f.Site {
			if x.Name == name {
				return x.Value
			}
		}
	}
	return ""
}

// writeCalendar writes the entries, each due at its Due after base.
func (w *world) writeCalendar(base time.Time) error {
	var b strings.Builder
	b.WriteString("entries:\n")
	for _, e := range w.sch.Entries {
		at := base.Add(e.Due)
		fmt.Fprintf(&b, "  - id: %s\n    site: demo\n    actor: alice\n    type: %s\n    at: %s\n", e.ID, e.Type, at.UTC().Format(time.RFC3339Nano))
		if e.Text != "" {
			fmt.Fprintf(&b, "    text: %s\n", yamlString(e.Text))
		}
		if e.Target != "" {
			fmt.Fprintf(&b, "    target: %q\n", w.targetURL(e.Target))
		}
		media := func(indent string) {
			fmt.Fprintf(&b, "%smedia:\n", indent)
			for _, m := range e.Media {
				fmt.Fprintf(&b, "%s  - file: %s\n%s    alt: %s\n", indent, yamlString(m.Name), indent, yamlString(m.Alt))
			}
		}
		if len(e.Parts) > 0 {
			b.WriteString("    parts:\n")
			for i, p := range e.Parts {
				if i == 0 && len(e.Media) > 0 {
					// A part with media is a mapping.
					fmt.Fprintf(&b, "      - text: %s\n", yamlString(p))
					media("        ")
					continue
				}
				fmt.Fprintf(&b, "      - %s\n", yamlString(p))
			}
		} else if len(e.Media) > 0 {
			media("    ")
		}
	}
	return os.WriteFile(filepath.Join(w.cal, "torture.yaml"), []byte(b.String()), 0o600)
}

// mediaDir holds the images entries attach (calendar.media_dir).
func (w *world) mediaDir() string { return filepath.Join(w.dir, "media") }

// writeMedia writes every entry's images, each of its type, with pixels
// drawn from its name: distinct bytes for every image of every seed.
func (w *world) writeMedia() error {
	for _, e := range w.sch.Entries {
		if len(e.Media) > 0 {
			w.count("media_entries")
		}
		for _, m := range e.Media {
			data, err := imageBytes(m.Name, m.Type)
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(w.mediaDir(), m.Name), data, 0o600); err != nil {
				return err
			}
		}
	}
	return nil
}

// imageBytes encodes a small image of type t whose pixels come from name.
func imageBytes(name, t string) ([]byte, error) {
	sum := sha256.Sum256([]byte(name))
	img := image.NewRGBA(image.Rect(0, 0, 8, 8))
	for i := range 64 {
		img.Set(i%8, i/8, color.RGBA{R: sum[i%32], G: sum[(i+7)%32], B: sum[(i+13)%32], A: 255})
	}
	var buf bytes.Buffer
	var err error
	switch t {
	case "png":
		err = png.Encode(&buf, img)
	case "gif":
		err = gif.Encode(&buf, img, nil)
	case "jpeg":
		err = jpeg.Encode(&buf, img, nil)
	default:
		err = fmt.Errorf("image type %q", t)
	}
	return buf.Bytes(), err
}

// yamlString quotes s as a YAML double-quoted scalar.
func yamlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// cleanup kills what the seed left running and removes its directory
// unless it failed and the options keep failures.
func (w *world) cleanup(keep bool) {
	w.mu.Lock()
	procs := w.procs
	w.mu.Unlock()
	for _, p := range procs {
		p.kill()
	}
	if w.person != nil {
		w.person.close()
	}
	if w.chrome != nil {
		w.chrome.Close()
	}
	if w.prof != "" {
		killBrowsersOn(w.prof)
	}
	if w.site != nil {
		w.site.Close()
	}
	if w.dir != "" && !keep {
		removeAll(w.dir)
	}
}

// removeAll removes a directory, retrying while the last helpers of a
// killed browser let go of it.
func removeAll(dir string) {
	deadline := time.Now().Add(5 * time.Second)
	for os.RemoveAll(dir) != nil && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
}

// openLedger opens the seed's ledger, or returns nil when no run created it.
func (w *world) openLedger() (*ledger.DB, error) {
	db, err := ledger.Open(w.ctx, w.ldb, ledger.Options{MustExist: true})
	if errors.Is(err, ledger.ErrNoLedger) {
		return nil, nil
	}
	return db, err
}
