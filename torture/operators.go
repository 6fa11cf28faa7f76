package torture

import (
	"database/sql"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/chromedp/cdproto/target"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/demosite"
	"github.com/browserop/browserop/errcode"
	"github.com/browserop/browserop/operator"
)

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

// setFaults sets the site's switches to fs, and to those the seed's
// adapter fault keeps on for the whole seed (how the site is: they win).
func (w *world) setFaults(fs []Fault) {
	var f demosite.Faults
	var persistent []Fault
	if f := w.sch.Adapter; f != nil {
		persistent = f.Site
		if !w.settling {
			persistent = append(slices.Clone(f.Chaos), persistent...)
		}
	}
	for _, x := range append(slices.Clone(fs), persistent...) {
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
	if w.sch.Adapter != nil {
		for _, x := range w.sch.Adapter.Chaos {
			w.count("site." + x.Name)
		}
	}
	w.prepareBrowser()
	if f := w.sch.Adapter; f != nil && i == 0 {
		for _, c := range f.Crash {
			r.Crash = appendUnique(slices.Clone(r.Crash), c)
		}
	}
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
			// Which of the two it was: a Chrome still running means the
			// person's connection ended (a relay that dropped it), not
			// the tab.
			if browser.ProfileRunning(w.prof) {
				w.logf("the person's connection to the Chrome the operator launched ended, and that Chrome still runs on the profile (see its browserop-relay.log)")
			} else {
				w.logf("the person's tab went down with the Chrome the operator launched (see the profile's browserop-relay.log)")
			}
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
	w.settling = true
	settleStart, answeredLate, waitedForSite := time.Now(), false, false
	w.setFaults(nil)
	if f := w.sch.Adapter; f != nil {
		for n := range f.PersonPosts {
			w.site.SeedPost("alice", fmt.Sprintf("the person's own post %d of seed %d", n+1, w.sch.Seed), w.clock.now())
		}
		if f.PersonPosts > 0 {
			w.logf("the person posted %d times on @alice's account by hand", f.PersonPosts)
		}
	}
	if w.sch.Adapter != nil && len(w.sch.Adapter.Site) > 0 {
		w.logf("settle: every fault off but the site's behaviour %s", faultList(w.sch.Adapter.Site))
	} else {
		w.logf("settle: every fault off")
	}
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
		w.lastHardStop = ok && sum.HardStop != ""
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
		case sum.Outcome == operator.OutcomeNeedsPerson && w.sch.Adapter != nil && !answeredLate:
			// Under a wrong adapter the person answers late: long enough
			// for every bound the adapter declares (settle, surface_within)
			// to pass since the last click, with the operators going on
			// meanwhile. A pass may then settle by itself what it could
			// not prove before, which is where a wrong adapter's "absent"
			// would perform an intent a second time.
			answeredLate = true
			w.waitsForPerson = true
			wait := time.Until(settleStart.Add(surfaceWithin + settleTime + 2*time.Second))
			w.logf("the person answers late: the operators go on for %s first", wait.Round(100*time.Millisecond))
			if wait > 0 {
				time.Sleep(wait)
			}
		case sum.Outcome == operator.OutcomeWaiting && !waitedForSite:
			// Exit 6: the action settles by itself once the site's
			// bounds (settle, surface_within) have passed since the last
			// click, which was before the settle phase began; passes run
			// meanwhile would decide nothing. Wait once, as a cron
			// schedule's next run would.
			waitedForSite = true
			wait := time.Until(settleStart.Add(surfaceWithin + settleTime + 2*time.Second))
			w.logf("waiting for the site: the next pass in %s", wait.Round(100*time.Millisecond))
			if wait > 0 {
				time.Sleep(wait)
			}
		case sum.Outcome == operator.OutcomeNeedsPerson:
			// Waiting for a person is a settled state; the person looks
			// at the site and answers, and the operators go on.
			w.waitsForPerson = true
			w.resolveByOracle()
		case sum.HardStop == "login":
			w.logf("signed out: signing in again")
			w.browserWentDown()
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
