package torture

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/configs"
	"github.com/browserop/browserop/demosite"
	"github.com/browserop/browserop/errcode"
	"github.com/browserop/browserop/internal/child"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/operator"
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
	for _, d := range []string{w.cal, filepath.Join(w.dir, "sites"), filepath.Join(w.dir, "config")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
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

func (w *world) writeAdapter() error {
	raw, err := fs.ReadFile(configs.Sites, "sites/demo.yaml")
	if err != nil {
		return err
	}
	y := string(raw)
	if strings.Count(y, "http://127.0.0.1:8787") != 1 || strings.Count(y, "settle: 15s") != 1 {
		return errors.New("the bundled demo adapter changed: update torture's writeAdapter")
	}
	y = strings.Replace(y, "http://127.0.0.1:8787", w.base, 1)
	y = strings.Replace(y, "settle: 15s", "settle: "+settleTime.String(), 1)
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
	fmt.Fprintf(&b, "calendar:\n  dir: %q\n", w.cal)
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
		return fmt.Sprintf("%s/p/%d", w.base, w.seeded[i])
	case "user":
		return w.base + "/u/" + v
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
		if len(e.Parts) > 0 {
			b.WriteString("    parts:\n")
			for _, p := range e.Parts {
				fmt.Fprintf(&b, "      - %s\n", yamlString(p))
			}
		}
	}
	return os.WriteFile(filepath.Join(w.cal, "torture.yaml"), []byte(b.String()), 0o600)
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

// launchChrome starts Chrome on the profile as the person would, headless.
func (w *world) launchChrome() (*browser.Browser, error) {
	ctx, cancel := context.WithTimeout(w.ctx, 30*time.Second)
	defer cancel()
	return browser.Launch(ctx, browser.Config{ExecPath: w.opts.Chrome, ProfileDir: w.prof, Headless: true,
		NoSandbox: os.Geteuid() == 0, ActionTimeout: 10 * time.Second})
}

// signInTries is how many times the set-up signs the profile in before it
// gives up on the seed.
const signInTries = 3

// signIn signs the profile in to the demosite as alice with a cookie that
// survives restarts, and checks it. With keep (attach mode) that Chrome
// stays up as the person's, their tab opened in it; otherwise it is closed,
// which puts the cookie on disk.
func (w *world) signIn(keep bool) error {
	killBrowsersOn(w.prof)
	started := time.Now()
	b, err := w.launchChrome()
	if err != nil {
		return err
	}
	p, err := dialPerson(w.prof, started, 10*time.Second)
	if err == nil {
		err = w.setCookie(p)
	}
	if err == nil {
		err = w.checkSignedIn(b)
	}
	if err == nil && keep {
		err = w.adoptChrome(b, p)
	}
	if !keep || err != nil {
		if p != nil {
			p.close()
		}
		b.Close()
		killBrowsersOn(w.prof)
	}
	return err
}

// setCookie signs the browser in: a new session of alice's, as a cookie
// that survives restarts.
func (w *world) setCookie(p *person) error {
	c := w.site.Login("alice")
	return p.setSessionCookie(w.base, c.Name, c.Value)
}

func (w *world) checkSignedIn(b *browser.Browser) error {
	ctx, cancel := context.WithTimeout(w.ctx, 20*time.Second)
	defer cancel()
	tab, err := b.NewTab(ctx, w.base+"/home")
	if err != nil {
		return err
	}
	who, err := tab.Attr(ctx, "span#whoami", "data-handle")
	b.CloseTab(ctx, tab)
	if err != nil {
		return fmt.Errorf("who is signed in: %w", err)
	}
	if who != "alice" {
		return fmt.Errorf("signed in as %q", who)
	}
	return nil
}

// startChrome (attach mode) starts the person's Chrome with their tab open
// on bob's post, a reply half typed in it.
func (w *world) startChrome() error {
	started := time.Now()
	b, err := w.launchChrome()
	if err != nil {
		return err
	}
	p, err := dialPerson(w.prof, started, 10*time.Second)
	if err != nil {
		b.Close()
		return err
	}
	if err := w.adoptChrome(b, p); err != nil {
		p.close()
		b.Close()
		return err
	}
	return nil
}

// adoptChrome makes a running Chrome the person's: they sign in again if
// a killed Chrome lost the cookie, the pages it has are theirs, and they
// open their tab in it.
func (w *world) adoptChrome(b *browser.Browser, p *person) error {
	if err := w.setCookie(p); err != nil {
		return err
	}
	pages, err := p.pages()
	if err != nil {
		return err
	}
	keep := map[target.ID]bool{}
	for _, info := range pages {
		keep[info.TargetID] = true
	}
	w.userTabs++
	t, err := p.openUserTab(fmt.Sprintf("%s/p/%d", w.base, w.seeded[0]), fmt.Sprintf("the person's own unsent reply #%d", w.userTabs), w, nil)
	if err != nil {
		return err
	}
	w.mu.Lock()
	w.chrome, w.person, w.userTab, w.keep = b, p, t, keep
	w.mu.Unlock()
	w.logf("the person's Chrome is up, their tab open")
	return nil
}

// killChrome (attach mode) kills the person's Chrome and judges the tab it
// took with it.
func (w *world) killChrome() int {
	w.mu.Lock()
	b, p, t := w.chrome, w.person, w.userTab
	w.chrome, w.person, w.userTab = nil, nil, nil
	w.mu.Unlock()
	if p != nil {
		p.mu.Lock()
		p.killing = time.Now()
		p.mu.Unlock()
	}
	n := killBrowsersOn(w.prof)
	if b != nil {
		b.Close()
	}
	if p != nil {
		if t != nil {
			time.Sleep(50 * time.Millisecond)
			vs, _ := p.checkUserTab(t, false)
			for _, v := range vs {
				w.violation(InvForeignTabs, "%s", v)
			}
		}
		p.close()
	}
	return n
}

// ensureChrome (attach mode) starts the person's Chrome again when it is
// gone, as the person would.
func (w *world) ensureChrome() {
	w.mu.Lock()
	b := w.chrome
	w.mu.Unlock()
	if b != nil {
		select {
		case <-b.Done():
		default:
			return
		}
	}
	w.killChrome()
	for i := range 3 {
		err := w.startChrome()
		if err == nil {
			return
		}
		w.logf("start the person's Chrome (try %d): %v", i+1, err)
		killBrowsersOn(w.prof)
	}
}

// start starts `browserop run --json` with the crash points armed.
func (w *world) start(name string, crash []string) *proc {
	env := w.env
	if len(crash) > 0 {
		env = append(slices.Clone(env), operator.CrashEnv+"="+strings.Join(crash, ","))
		name += " [crash " + strings.Join(crash, ",") + "]"
	}
	p, err := startProc(w.opts.Bin, w.dir, env, name, "run", "--json", "--config", w.cfg)
	if err != nil {
		w.logf("%v", err)
		return nil
	}
	w.mu.Lock()
	w.procs = append(w.procs, p)
	w.mu.Unlock()
	w.logf("started %s (pid %d)", name, p.Cmd.Process.Pid)
	return p
}

// finish waits for a process (bounded), then records how it ended.
func (w *world) finish(p *proc) {
	if p == nil {
		return
	}
	if !p.Wait(time.Until(p.Started.Add(runBound))) {
		w.res.Hung++
		w.logf("%s hung for %s: killed", p.Name, runBound)
		p.kill()
	}
	if c := p.crashHit(); c != "" {
		w.mu.Lock()
		w.res.CrashHits[c]++
		w.mu.Unlock()
	}
	if _, sig := p.Exit(); sig != 0 {
		w.mu.Lock()
		if p.Ended.After(w.deadAt) {
			w.deadAt = p.Ended
		}
		w.mu.Unlock()
	}
	w.logf("%s", p.describe())
	// The process's output, kept with a failed seed's directory.
	logs := filepath.Join(w.dir, "logs")
	if os.MkdirAll(logs, 0o700) == nil {
		w.mu.Lock()
		w.logN++
		n := w.logN
		w.mu.Unlock()
		base := filepath.Join(logs, fmt.Sprintf("%02d-%s", n, strings.NewReplacer(" ", "-", "[", "", "]", "", ",", "+").Replace(p.Name)))
		os.WriteFile(base+".stdout", []byte(p.Stdout.String()), 0o600)
		os.WriteFile(base+".stderr", []byte(p.Stderr.String()), 0o600)
	}
}

func (w *world) anyAlive() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range w.procs {
		if p.Alive() {
			return true
		}
	}
	return false
}

// prepareBrowser readies the browser side before an operator starts: in
// attach mode the person's Chrome runs; in launch mode a Chrome an earlier
// operator left running stays, and the remains of a dead one go.
func (w *world) prepareBrowser() {
	// A dead operator's lease runs out first: the next one should act, not
	// find it locked (racing operators are their own fault).
	w.mu.Lock()
	dead := w.deadAt
	w.mu.Unlock()
	if d := time.Until(dead.Add(leaseTTL + 100*time.Millisecond)); d > 0 {
		time.Sleep(d)
	}
	if w.sch.Mode == ModeAttach {
		w.ensureChrome()
		return
	}
	if w.anyAlive() {
		return
	}
	// A Chrome an operator left running (it held the person's tab, or
	// the operator died) stays up for the next one to attach to; the
	// remains of one that is down go.
	if p, err := dialPerson(w.prof, time.Time{}, 300*time.Millisecond); err == nil {
		p.close()
		w.logf("the Chrome an earlier operator launched is still running")
		return
	}
	if n := killBrowsersOn(w.prof); n > 0 {
		w.logf("killed %d leftover browser processes of dead operators", n)
	}
}

func (w *world) setFaults(fs []Fault) {
	var f demosite.Faults
	for _, x := range fs {
		if err := f.Set(x.Name, x.Value); err != nil {
			w.logf("fault %s: %v", x, err)
			continue
		}
	}
	if err := w.site.SetFaults(f); err != nil {
		w.logf("set faults: %v", err)
		return
	}
	for _, x := range fs {
		w.count("site." + x.Name)
	}
}

// chaosRun runs one operator of the schedule with everything the run says
// done to it.
func (w *world) chaosRun(i int, r RunSpec) {
	w.logf("run %d: faults %s", i+1, faultList(r.Faults))
	if r.Clock > 0 {
		w.clock.advance(r.Clock)
		w.count("clock_forward")
		w.logf("site clock +%s (now %s ahead)", r.Clock, w.clock.ahead())
	}
	if r.LocalAhead > 0 {
		// Only while the site has no post of the run's yet: demosite hides
		// a post until its commit time comes round on the site's clock, so
		// moving that clock back would hide posts already made, for longer
		// than the adapter's settle, which no real site does to posts it
		// has shown.
		if w.postsCommitted() {
			w.logf("local clock ahead +%s: not injected, posts exist", r.LocalAhead)
		} else {
			w.clock.advance(-r.LocalAhead)
			w.count("local_clock_ahead")
			w.logf("site clock -%s: browserop's clock is %s ahead of the site's", r.LocalAhead, -w.clock.ahead())
		}
	}
	w.setFaults(r.Faults)
	w.prepareBrowser()
	if len(r.Crash) > 0 {
		w.count("crash_armed")
	}
	main := w.start(fmt.Sprintf("run %d", i+1), r.Crash)
	if main == nil {
		return
	}
	var wg sync.WaitGroup
	var extra []*proc
	var emu sync.Mutex
	addExtra := func(p *proc) {
		if p != nil {
			emu.Lock()
			extra = append(extra, p)
			emu.Unlock()
		}
	}
	if r.Race {
		wg.Go(func() {
			time.Sleep(r.RaceDelay)
			w.count("race")
			if len(r.RaceCrash) > 0 {
				w.count("crash_armed")
			}
			addExtra(w.start(fmt.Sprintf("run %d racer", i+1), r.RaceCrash))
		})
	}
	var lp *person
	var lt *userTab
	if r.UserTab && w.sch.Mode == ModeLaunch {
		wg.Go(func() { lp, lt = w.launchUserTab(main) })
	}
	exec := w.executingWatch()
	wg.Go(func() {
		defer exec.close()
		for _, ev := range r.Events {
			if ev.OnExecuting {
				if !exec.next(w) {
					w.logf("%s: no action went executing; not injected", ev)
					continue
				}
			}
			for !ev.OnExecuting && time.Now().Before(main.Started.Add(ev.At)) && w.anyAlive() && w.ctx.Err() == nil {
				time.Sleep(min(20*time.Millisecond, time.Until(main.Started.Add(ev.At))))
			}
			if !w.anyAlive() {
				w.logf("%s: no operator left running; not injected", ev)
				continue
			}
			w.inject(i, ev, main, addExtra)
		}
	})
	wg.Wait()
	w.finish(main)
	emu.Lock()
	for _, p := range extra {
		w.finish(p)
	}
	emu.Unlock()
	w.mu.Lock()
	w.launchTab, w.launchPerson = nil, nil
	w.mu.Unlock()
	if lp != nil {
		// Give the connection a moment to notice a browser that went down.
		time.Sleep(100 * time.Millisecond)
		vs, _ := lp.checkUserTab(lt, false)
		for _, v := range vs {
			w.violation(InvForeignTabs, "%s", v)
		}
		// The Chrome went away, the harness did not kill it, and the
		// operator that launched it exited by itself: it closed its
		// browser, the person's tab with it.
		lp.mu.Lock()
		killed := !lp.killing.IsZero()
		lp.mu.Unlock()
		_, sig := main.Exit()
		if !lp.alive() && !killed && sig == 0 && len(vs) == 0 {
			w.observe(ObsClosedWithBrowser)
			w.logf("the person's tab went down with the Chrome the operator launched")
		}
		lp.close()
	}
}

// postsCommitted reports whether the site has a post or reply of the run's.
func (w *world) postsCommitted() bool {
	for _, e := range w.site.Effects() {
		if e.Kind == demosite.EffectPost || e.Kind == demosite.EffectReply {
			return true
		}
	}
	return false
}

// launchUserTab (launch mode): the person opens a tab in the Chrome the
// operator launched, once it is up.
func (w *world) launchUserTab(main *proc) (*person, *userTab) {
	for main.Alive() {
		// Not only a fresh port file: the operator may attach to a Chrome
		// an earlier one left running.
		p, err := dialPerson(w.prof, time.Time{}, 500*time.Millisecond)
		if err != nil {
			continue
		}
		t, err := p.openUserTab(fmt.Sprintf("%s/p/%d", w.base, w.seeded[0]), "the person's reply, typed while browserop runs", w,
			func(id target.ID) {
				w.mu.Lock()
				if w.personTabs == nil {
					w.personTabs = map[target.ID]bool{}
				}
				w.personTabs[id] = true
				w.mu.Unlock()
			})
		if err != nil {
			p.close()
			w.logf("the person could not open their tab: %v", err)
			return nil, nil
		}
		w.count("user_tab")
		w.logf("the person opened a tab in the operator's Chrome")
		w.mu.Lock()
		w.launchTab, w.launchPerson = t, p
		w.mu.Unlock()
		return p, t
	}
	return nil, nil
}

func (w *world) inject(i int, ev Event, main *proc, addExtra func(*proc)) {
	if ev.OnExecuting {
		w.count(ev.Kind + "@executing")
	}
	switch ev.Kind {
	case EvChromeKill:
		var n int
		if w.sch.Mode == ModeAttach {
			n = w.killChrome()
			if err := w.startChrome(); err != nil {
				w.logf("restart the person's Chrome: %v", err)
			}
		} else {
			w.mu.Lock()
			if lp := w.launchPerson; lp != nil {
				lp.mu.Lock()
				lp.killing = time.Now()
				lp.mu.Unlock()
			}
			w.mu.Unlock()
			n = killBrowsersOn(w.prof)
		}
		if n > 0 {
			w.count(EvChromeKill)
		}
		w.logf("chrome_kill: %d processes", n)
	case EvTabClose:
		var p *person
		if w.sch.Mode == ModeAttach {
			w.mu.Lock()
			p = w.person
			w.mu.Unlock()
		} else {
			var err error
			if p, err = dialPerson(w.prof, time.Time{}, time.Second); err != nil {
				w.logf("tab_close: no browser to close a tab in")
				return
			}
			defer p.close()
		}
		if p == nil {
			return
		}
		// Under personMu: a tab the person is opening right now is
		// known as theirs before this looks.
		w.personMu.Lock()
		w.mu.Lock()
		keep := maps.Clone(w.keep)
		if keep == nil {
			keep = map[target.ID]bool{}
		}
		maps.Copy(keep, w.personTabs)
		w.mu.Unlock()
		ok, err := p.closeBrowseropTab(w.base, keep)
		w.personMu.Unlock()
		if ok {
			w.count(EvTabClose)
		}
		w.logf("tab_close: closed=%t err=%v", ok, err)
	case EvPause:
		if ev.OnExecuting {
			// The operator that went executing: the one holding the lease.
			main = w.holder(main)
		}
		if !main.Alive() {
			return
		}
		main.Cmd.Process.Signal(syscall.SIGSTOP)
		w.count(EvPause)
		w.logf("pause: %s stopped for %s", main.Name, ev.Hold)
		time.Sleep(ev.Hold)
		taker := w.start(fmt.Sprintf("run %d taker", i+1), nil)
		addExtra(taker)
		if taker != nil {
			taker.Wait(ev.Hold / 2)
		}
		main.Cmd.Process.Signal(syscall.SIGCONT)
		w.logf("pause: %s continued", main.Name)
	case EvFaultFlip:
		w.setFaults(ev.Faults)
		w.count(EvFaultFlip)
		w.logf("fault_flip: %s", faultList(ev.Faults))
	case EvClock:
		w.clock.advance(ev.Clock)
		w.count("clock_forward")
		w.logf("site clock +%s (now %s ahead)", ev.Clock, w.clock.ahead())
	}
}

// settle turns every fault off and runs operators until one pass ends ok,
// with a person settling what stays ambiguous by looking at the site.
func (w *world) settle() {
	w.site.SetFaults(demosite.Faults{})
	w.logf("settle: every fault off")
	var last time.Duration
	for _, e := range w.sch.Entries {
		last = max(last, e.Due)
	}
	if d := time.Until(w.dueBase.Add(last + 100*time.Millisecond)); d > 0 {
		time.Sleep(d)
	}
	for n := 0; n < settleRuns && w.ctx.Err() == nil; n++ {
		w.prepareBrowser()
		p := w.start("settle", nil)
		if p == nil {
			return
		}
		w.finish(p)
		code, _ := p.Exit()
		sum, ok := p.summary()
		if ok {
			w.lastPass = sum.Outcome
			if sum.HardStop != "" {
				w.lastPass += " (" + sum.HardStop + ")"
			}
		} else {
			w.lastPass = fmt.Sprintf("exit %d without a summary", code)
		}
		switch {
		case code == errcode.ExitLocked:
			time.Sleep(400 * time.Millisecond)
		case !ok:
			time.Sleep(200 * time.Millisecond)
		case sum.Outcome == operator.OutcomeOK && code == 0:
			w.settledOK = true
			return
		case sum.Outcome == operator.OutcomeNeedsPerson:
			// Waiting for a person is a settled state; the person looks
			// at the site and answers, and the operators go on.
			w.waitsForPerson = true
			w.resolveByOracle()
		case sum.HardStop == "login":
			w.logf("signed out: signing in again")
			if w.sch.Mode == ModeAttach {
				w.killChrome()
			}
			if err := w.signIn(w.sch.Mode == ModeAttach); err != nil {
				w.logf("sign in again: %v", err)
			}
		}
		if sum.Outcome != operator.OutcomeNeedsPerson {
			w.waitsForPerson = false
		}
	}
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

// execWatch sees an operator mark an action executing, from the ledger:
// a new executing event, polled every couple of milliseconds.
type execWatch struct {
	db   *sql.DB
	last int64
}

func (w *world) executingWatch() *execWatch {
	u := url.URL{Scheme: "file", Path: w.ldb, RawQuery: "mode=ro&_busy_timeout=50"}
	db, _ := sql.Open("sqlite3", u.String())
	x := &execWatch{db: db}
	x.last, _ = x.maxExecuting()
	return x
}

func (x *execWatch) maxExecuting() (int64, error) {
	var n sql.NullInt64
	err := x.db.QueryRow(`SELECT max(id) FROM action_events WHERE to_status = 'executing'`).Scan(&n)
	return n.Int64, err
}

// next waits for an executing event after the last one seen; false when
// every operator ended first.
func (x *execWatch) next(w *world) bool {
	for w.anyAlive() && w.ctx.Err() == nil {
		if n, err := x.maxExecuting(); err == nil && n > x.last {
			x.last = n
			return true
		}
		time.Sleep(2 * time.Millisecond)
	}
	return false
}

func (x *execWatch) close() { x.db.Close() }

// holder is the running operator that holds the lease (the one that wrote
// the executing event), else main.
func (w *world) holder(main *proc) *proc {
	var holder string
	if x, err := sql.Open("sqlite3", (&url.URL{Scheme: "file", Path: w.ldb, RawQuery: "mode=ro&_busy_timeout=50"}).String()); err == nil {
		x.QueryRow(`SELECT holder FROM leases LIMIT 1`).Scan(&holder)
		x.Close()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range w.procs {
		if p.Alive() && strings.Contains(holder, fmt.Sprintf(":%d:", p.Cmd.Process.Pid)) {
			return p
		}
	}
	return main
}
