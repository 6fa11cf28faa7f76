package operator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/browserop/browserop/authority"
	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/budgets"
	"github.com/browserop/browserop/calendar"
	"github.com/browserop/browserop/errcode"
	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/sites"
	"github.com/browserop/browserop/tasks"
)

// DefaultMaxAttempts is how often a definitively failed intent is
// attempted in all (tasks.DefaultMaxAttempts).
const DefaultMaxAttempts = tasks.DefaultMaxAttempts

// Config tunes a Runner. Zero values take the documented defaults.
type Config struct {
	// LeaseName is the lease every operator on this ledger competes for.
	LeaseName string // default "browser-operator"
	// Holder names this operator in the lease; default host:pid:random.
	Holder string
	// LeaseTTL is how long the lease lasts without a heartbeat (default 2m);
	// Heartbeat is how often a pass renews it (default 20s).
	LeaseTTL  time.Duration
	Heartbeat time.Duration
	// Skew is the tolerated difference between this clock and a site's
	// timestamps (default 5s).
	Skew time.Duration
	// CalendarDir holds the calendar's YAML files; "" means no calendar.
	CalendarDir string
	// MediaDir holds the media files calendar entries and agents' intents
	// attach; "" means CalendarDir. A file outside it is refused.
	MediaDir string
	// Grace is how late a calendar entry may still be published (default
	// 15m); older entries are reported missed unless PublishLate.
	Grace       time.Duration
	PublishLate bool
	// QualityThreshold is the planner score below which a candidate is a
	// quality skip (default 0.5).
	QualityThreshold float64
	// MaxAttempts bounds how often a definitively failed intent is
	// replanned (default DefaultMaxAttempts).
	MaxAttempts int
	// ActionTimeout bounds each page action (default 15s).
	ActionTimeout time.Duration
	// Ceiling is authority.ceiling: every action's site and target must lie
	// within it, and within its task's domains and grants, right before the
	// click. Empty, it is the hosts of the configured sites.
	Ceiling []string
	// BrowserRunning reports whether a browser runs already that the
	// runner's connect would reach without starting one (attach mode: the
	// person's Chrome; launch mode: a Chrome left on the dedicated
	// profile). A pass with tab records an earlier pass left open connects
	// to it at its start to close them; nil means it never does, and the
	// records wait for a pass that uses the browser.
	BrowserRunning func() bool
	// StopIdleBrowser stops, at the end of every pass, a Chrome browserop
	// launched on the dedicated profile when a complete inventory shows
	// nothing in it but browserop's own tabs: also after a pass that did
	// not use the browser (one left running is connected to, to check).
	// A tab of the person's keeps it running.
	StopIdleBrowser bool
	// Profile names the browser profile the tabs are opened in (the
	// dedicated profile's directory, or the attached Chrome): the key of
	// the person's cleanup preference (ledger.CleanupSettingOf), which
	// decides which tabs a pass may close. Unknown, it closes none that
	// needs consent and says so (Summary.TabsLeftOpen).
	Profile string
}

// mediaDir is the directory media files are read from.
func (c Config) mediaDir() string {
	if c.MediaDir != "" {
		return c.MediaDir
	}
	return c.CalendarDir
}

func (c *Config) defaults() {
	if c.LeaseName == "" {
		c.LeaseName = "browser-operator"
	}
	if c.Holder == "" {
		c.Holder = newHolder()
	}
	if c.LeaseTTL <= 0 {
		c.LeaseTTL = 2 * time.Minute
	}
	if c.Heartbeat <= 0 {
		c.Heartbeat = 20 * time.Second
	}
	if c.Skew <= 0 {
		c.Skew = 5 * time.Second
	}
	if c.Grace <= 0 {
		c.Grace = 15 * time.Minute
	}
	if c.QualityThreshold == 0 {
		c.QualityThreshold = 0.5
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.ActionTimeout <= 0 {
		c.ActionTimeout = 15 * time.Second
	}
}

// ConnectFunc opens (launches or attaches to) the browser.
type ConnectFunc func(ctx context.Context) (*browser.Browser, error)

// Runner runs operator passes over one ledger, browser and set of sites.
// Its methods may be called from one goroutine at a time; overlap across
// processes is prevented by the lease.
type Runner struct {
	db      *ledger.DB
	sites   map[string]sites.Adapter
	policy  budgets.Policy
	planner Planner
	connect ConnectFunc
	cfg     Config
	log     *slog.Logger
	now     func() time.Time

	// ceiling bounds every action's authority; ceilingErr, when the
	// configured one does not parse, refuses every action.
	ceiling    authority.Ceiling
	ceilingErr error

	mu       sync.Mutex
	browser  *browser.Browser
	conn     int64 // the browser connection's generation (ledger.NextConnection)
	draining atomic.Bool
}

// Drain makes the current pass, and any later one, start no new action:
// the action being performed finishes and is recorded. serve calls it on
// SIGINT and SIGTERM.
func (r *Runner) Drain() { r.draining.Store(true) }

// NewRunner returns a Runner. connect is called when a pass first needs the
// browser; the browser stays open across passes until Close.
func NewRunner(db *ledger.DB, adapters []sites.Adapter, policy budgets.Policy, planner Planner, connect ConnectFunc, cfg Config, log *slog.Logger) *Runner {
	cfg.defaults()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &Runner{db: db, sites: map[string]sites.Adapter{}, policy: policy, planner: planner, connect: connect,
		cfg: cfg, log: log, now: time.Now}
	var as []authority.Site
	for _, a := range adapters {
		r.sites[a.Name()] = a
		as = append(as, a)
	}
	r.ceiling, r.ceilingErr = authority.NewCeiling(cfg.Ceiling, as)
	return r
}

// SetClock replaces the runner's clock (tests).
func (r *Runner) SetClock(now func() time.Time) { r.now = now }

// Close ends the runner's use of the browser. An attached browser is only
// disconnected. A Chrome on the dedicated profile (launch mode) is stopped
// only when a complete inventory shows nothing in it but browserop's own
// tabs: a tab the person opened in it, or one handed to them, keeps it
// running, and the runner only disconnects (the next launch attaches to it
// again). It decides while holding the lease (another process may use the
// same Chrome), and disconnects when another operator holds it. Calling
// Close twice is safe.
func (r *Runner) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	b := r.browser
	if b == nil {
		return nil
	}
	r.browser = nil
	if !b.Dedicated() {
		return b.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Another process may use the same Chrome (it attaches to it too):
	// stop it only while holding the lease, so no pass is under way.
	lease, _, err := r.acquire(ctx)
	if err != nil {
		r.log.Info("leaving the browser running: another operator holds the lease", "err", err)
		return b.Disconnect()
	}
	defer r.release(lease)
	others, err := b.Others(ctx)
	switch {
	case err != nil:
		r.log.Warn("no complete tab inventory: leaving the browser running", "err", err)
	case len(others) > 0:
		r.log.Info("leaving the browser running: it has tabs that are not browserop's", "tabs", len(others))
	default:
		// Checked again on the connection that sends the close, right
		// before it: a tab opened since keeps the browser running.
		stopped, err := b.StopIfAlone()
		if err == nil && !stopped {
			r.log.Info("leaving the browser running: a tab that is not browserop's appeared")
		}
		return err
	}
	return b.Disconnect()
}

// current returns the open browser, or nil when there is none or it is gone.
func (r *Runner) current() *browser.Browser {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.browser == nil {
		return nil
	}
	select {
	case <-r.browser.Done():
		return nil
	default:
		return r.browser
	}
}

// getBrowser returns the open browser, connecting (again) when it is gone.
func (r *Runner) getBrowser(ctx context.Context) (*browser.Browser, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.browser != nil {
		select {
		case <-r.browser.Done():
			// The connection ended; the browser may live on (attach
			// mode, a persistent launch) with the person's tabs: only
			// disconnect, and connect again.
			r.browser.Disconnect()
			r.browser = nil
		default:
			return r.browser, nil
		}
	}
	if r.connect == nil {
		return nil, errors.New("no browser configured")
	}
	b, err := r.connect(ctx)
	if err != nil {
		return nil, err
	}
	n, err := r.db.NextConnection(ctx, r.cfg.LeaseName)
	if err != nil {
		_ = b.Disconnect()
		return nil, fmt.Errorf("record the browser connection: %w", err)
	}
	r.browser, r.conn = b, n
	return b, nil
}

// connection is the generation of the browser connection in use: 0
// before the runner connected.
func (r *Runner) connection() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.conn
}

// Outcome of a pass.
const (
	OutcomeOK          = "ok"
	OutcomeLockedSkip  = "locked_skip"
	OutcomeHardStop    = "hard_stop"
	OutcomeNeedsPerson = "needs_person"
	// OutcomeWaiting: every ambiguous action left waits for its site to
	// settle (verify.Verdict.Settling): a later pass decides them.
	OutcomeWaiting = "waiting_for_site"
	OutcomeError   = "error"
)

// ActionReport is one action's outcome in a pass, value-free but for the
// canonical result a person can open. Site is its intent's site, by which
// `browserop runs` says what each skip was for.
type ActionReport struct {
	ActionID string        `json:"action_id"`
	Entry    string        `json:"entry,omitempty"`
	Type     kind.Kind     `json:"type"`
	Site     string        `json:"site,omitempty"`
	Status   ledger.Status `json:"status"` // the action's, or one of the Status* of this package
	Result   string        `json:"result,omitempty"`
	Reason   string        `json:"reason,omitempty"`
	Note     Note          `json:"note,omitempty"` // what became of it in this pass (Notes)
	// logReason, when set, is Reason without what a page said (a hard
	// stop's cause: who is signed in, what a control shows): what the
	// log line says. The log never holds page text (docs/operator.md,
	// "Logs"); the person's own summary (run) says it all.
	logReason string
}

// Summary is what a pass did.
type Summary struct {
	RunID      string `json:"run_id,omitempty"`
	Generation int64  `json:"generation,omitempty"`
	Outcome    string `json:"outcome"`
	// LockedBy and LockedUntil name the operator that held the lease, and
	// until when, in a locked_skip.
	LockedBy    string     `json:"locked_by,omitempty"`
	LockedUntil *time.Time `json:"locked_until,omitempty"`
	HardStop    string     `json:"hard_stop,omitempty"`
	// StoppedSites holds the hard stops that concerned one site only, by
	// site: the other sites went on.
	StoppedSites map[string]string `json:"stopped_sites,omitempty"`
	// PassStop is the hard stop that ended mutations on every site, if
	// one did (HardStop then says it alone).
	PassStop    string         `json:"pass_stop,omitempty"`
	Counts      map[string]int `json:"counts"`
	Actions     []ActionReport `json:"actions"`
	NeedsPerson []string       `json:"needs_person,omitempty"` // ambiguous action ids
	// WaitingForSite are the ambiguous actions this pass left inside their
	// site's settle time or surface_within: no person is needed yet.
	WaitingForSite []string `json:"waiting_for_site,omitempty"`
	Problems       []string `json:"problems,omitempty"` // calendar and planner problems
	// TabsLeftOpen says how many tabs the pass left open and why (the
	// cleanup preference: none set, never, a tab it does not cover).
	TabsLeftOpen string    `json:"tabs_left_open,omitempty"`
	Started      time.Time `json:"started"`
	Ended        time.Time `json:"ended"`
}

func (s *Summary) count(k Count) { s.Counts[string(k)]++ }

// Err returns the error a command exits with for this summary: nil,
// errcode.ErrHardStop, errcode.ErrNeedsPerson, or ledger.ErrLocked.
func (s *Summary) Err() error {
	switch s.Outcome {
	case OutcomeLockedSkip:
		return ledger.ErrLocked
	case OutcomeNeedsPerson:
		return fmt.Errorf("%w: %d waiting", errcode.ErrNeedsPerson, len(s.NeedsPerson))
	case OutcomeWaiting:
		return fmt.Errorf("%w: %d", errcode.ErrWaitingForSite, len(s.WaitingForSite))
	case OutcomeHardStop:
		return fmt.Errorf("%w: %s", errcode.ErrHardStop, s.HardStop)
	}
	return nil
}

// pass is the state of one pass.
type pass struct {
	r       *Runner
	ctx     context.Context
	log     *slog.Logger // the runner's, with the run and generation
	lease   ledger.Lease
	run     ledger.Run
	sum     *Summary
	stopped string // the hard-stop reason; no mutation once set
	// site is the site of the intent being processed; siteStops holds the
	// hard stops that concern one site only: no mutation on it once set.
	site      string
	siteStops map[string]string
	// siteCauses holds, for a stopped site, the cause its stop was
	// reported with ("" for none): recorded on the site's actions the
	// stop holds later in the pass.
	siteCauses map[string]string
	// settling holds the ambiguous actions whose last verdict in this
	// pass was one their site decides by itself (verify.Verdict.Settling).
	settling map[string]bool
	// reconciled holds the actions this pass reconciled: reported once,
	// under their entry, not again as already verified.
	reconciled map[string]bool
	tabs       map[string]*siteTab
	// tabsReconciled: earlier passes' tab records were compared with the
	// browser's inventory (once per pass: at its start when a browser
	// runs, else when the browser is first used).
	tabsReconciled bool
	// keptReasons counts the tabs this pass left open, by why
	// (the cleanup preference: keepTab).
	keptReasons map[string]int
}

func (p *pass) fence() ledger.Fence { return p.lease.Fence() }

// hardStop ends mutations for the rest of the pass on the site being
// worked on (p.site), or on every site when none is: a blocker screen, the
// wrong account, a page off the site concern that site only, and the other
// sites go on.
func (p *pass) hardStop(reason string) {
	if p.site == "" {
		p.hardStopPass(reason)
		return
	}
	if p.siteStops[p.site] == "" {
		p.siteStops[p.site] = reason
		p.r.log.Warn("hard stop: nothing more on this site in this pass", "run", p.run.ID, "site", p.site, "reason", reason)
	}
}

// hardStopPass ends every mutation for the rest of the pass, on every site:
// an unresolved ambiguous action, the clock behind recorded effects, a lost
// lease, an interrupted pass.
func (p *pass) hardStopPass(reason string) {
	if p.stopped == "" {
		p.stopped = reason
		p.r.log.Warn("hard stop: nothing more in this pass", "run", p.run.ID, "reason", reason)
	}
}

// stoppedFor returns why no mutation may be made on site, or "".
func (p *pass) stoppedFor(site string) string {
	if p.stopped != "" {
		return p.stopped
	}
	return p.siteStops[site]
}

// stopReason is the summary's hard-stop reason: the pass's, else the
// distinct reasons of the stopped sites (which site is in StoppedSites).
func (p *pass) stopReason() string {
	if p.stopped != "" {
		return p.stopped
	}
	seen := map[string]bool{}
	var out []string
	for _, why := range p.siteStops {
		if !seen[why] {
			seen[why] = true
			out = append(out, why)
		}
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}

// Pass runs one operator pass: lease, reconcile, identity, observe, act,
// release. A lease held by another operator ends it at once with outcome
// locked_skip. The returned error is for failures of the pass itself
// (ledger, browser start); the outcome of the work is in the Summary.
func (r *Runner) Pass(ctx context.Context) (*Summary, error) {
	sum := &Summary{Counts: map[string]int{}, Actions: []ActionReport{}, Started: r.now()}
	p, err := r.begin(ctx, sum)
	if err != nil {
		return nil, err
	}
	if p == nil {
		return sum, nil // locked_skip
	}
	// The pass stops mutating the moment its lease is lost.
	pctx, cancel := context.WithCancelCause(ctx)
	p.ctx = pctx
	heldLease := p.heartbeat(cancel)
	runErr := p.execute()
	if runErr != nil && errors.Is(runErr, context.Canceled) && pctx.Err() != nil {
		// Cancelled (a lost lease, or a shutdown past its grace): what was
		// in flight is recorded; the pass simply stops.
		p.hardStopPass("interrupted: " + context.Cause(pctx).Error())
		runErr = nil
	}
	cancel(nil)
	return sum, p.end(ctx, heldLease(), runErr)
}

// begin takes the lease and records the run, ending the runs an earlier
// holder left open. A lease another operator holds is no error: it returns
// no pass, and sum says locked_skip.
func (r *Runner) begin(ctx context.Context, sum *Summary) (*pass, error) {
	lease, other, err := r.acquire(ctx)
	if errors.Is(err, ledger.ErrLocked) {
		sum.Outcome, sum.Ended = OutcomeLockedSkip, r.now()
		if other != nil {
			until := other.ExpiresAt
			sum.LockedBy, sum.LockedUntil = other.Holder, &until
		}
		r.log.Info("another operator holds the lease: nothing done", "lease", r.cfg.LeaseName, "holder", sum.LockedBy, "until", sum.LockedUntil)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	run, err := r.db.StartRun(ctx, lease)
	if err != nil {
		r.release(lease)
		return nil, err
	}
	sum.RunID, sum.Generation = run.ID, lease.Generation
	log := r.log.With("run", run.ID, "generation", lease.Generation)
	log.Debug("pass started")
	ended, err := r.db.EndInterruptedRuns(ctx, lease.Fence(), run.ID)
	if err != nil {
		r.release(lease)
		return nil, err
	}
	for _, x := range ended {
		log.Warn("an earlier pass was interrupted: marked ended", "interrupted_run", x.ID, "holder", x.Holder, "started", x.StartedAt)
	}
	return &pass{r: r, ctx: ctx, log: log, lease: lease, run: run, sum: sum, tabs: map[string]*siteTab{}, keptReasons: map[string]int{}, siteStops: map[string]string{}, siteCauses: map[string]string{}, settling: map[string]bool{}, reconciled: map[string]bool{}}, nil
}

// heartbeat renews the lease every Config.Heartbeat until p.ctx ends, and
// cancels the pass (cancel) when a renewal fails. The function it returns
// waits for the heartbeat to stop and returns the lease as last renewed.
func (p *pass) heartbeat(cancel context.CancelCauseFunc) func() ledger.Lease {
	r := p.r
	done := make(chan struct{})
	held := p.lease // the heartbeat's copy; read again only after done
	go func() {
		defer close(done)
		t := time.NewTicker(r.cfg.Heartbeat)
		defer t.Stop()
		for {
			select {
			case <-p.ctx.Done():
				return
			case <-t.C:
				unpause := heldOffPause()
				l, err := r.db.Heartbeat(p.ctx, held, r.cfg.LeaseTTL)
				unpause()
				if err != nil {
					if p.ctx.Err() == nil {
						p.log.Error("lease heartbeat failed; stopping the pass", "err", err)
						cancel(fmt.Errorf("lease lost: %w", err))
					}
					return
				}
				held = l
			}
		}
	}()
	return func() ledger.Lease {
		<-done
		return held
	}
}

// end closes the pass's tabs, stops an idle Chrome while the lease is
// still held, fills in the summary's outcome, records the end of the run,
// releases the lease held, and logs the pass's one line.
func (p *pass) end(ctx context.Context, held ledger.Lease, runErr error) error {
	r, sum, log := p.r, p.sum, p.log
	p.closeTabs()
	// Chrome is stopped only by a holder of the lease: after a lost lease
	// another operator may be about to use it.
	if l, err := r.db.GetLease(context.WithoutCancel(ctx), p.lease.Name); err == nil && l.Generation == p.lease.Generation && l.Held(r.now()) {
		r.stopIdleBrowser(context.WithoutCancel(ctx), log)
	}

	sum.Ended = r.now()
	actx, acancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	if amb, err := r.db.ListActions(actx, ledger.ActionFilter{Statuses: []ledger.Status{ledger.Ambiguous}}); err == nil {
		for _, a := range amb {
			if p.settling[a.ID] {
				sum.WaitingForSite = append(sum.WaitingForSite, a.ID)
			} else {
				sum.NeedsPerson = append(sum.NeedsPerson, a.ID)
			}
		}
	} else {
		runErr = errors.Join(runErr, err)
	}
	acancel()
	switch {
	case runErr != nil:
		sum.Outcome = OutcomeError
	case len(sum.NeedsPerson) > 0:
		sum.Outcome = OutcomeNeedsPerson
	case len(sum.WaitingForSite) > 0 && len(p.siteStops) == 0 && (p.stopped == "" || p.stopped == stopUnresolved):
		// Waiting for the site alone: any other stop (a login, a
		// captcha) is the person's to see, and ends the pass as one.
		sum.Outcome = OutcomeWaiting
	case p.stopReason() != "":
		sum.Outcome = OutcomeHardStop
	default:
		sum.Outcome = OutcomeOK
	}
	sum.HardStop, sum.PassStop = p.stopReason(), p.stopped
	sum.TabsLeftOpen = p.tabsLeftOpen()
	if len(p.siteStops) > 0 {
		sum.StoppedSites = p.siteStops
	}
	fctx, fcancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer fcancel()
	if err := r.db.FinishRun(fctx, held.Fence(), p.run.ID, sum.Outcome, sum); err != nil {
		log.Error("record the end of the pass", "err", err)
		runErr = errors.Join(runErr, err)
	}
	r.release(held)
	// The one line that summarizes the pass.
	attrs := []any{"outcome", sum.Outcome, "counts", sum.Counts}
	if sum.HardStop != "" {
		attrs = append(attrs, "hard_stop", sum.HardStop)
	}
	if len(sum.NeedsPerson) > 0 {
		attrs = append(attrs, "needs_person", sum.NeedsPerson)
	}
	if len(sum.WaitingForSite) > 0 {
		attrs = append(attrs, "waiting_for_site", sum.WaitingForSite)
	}
	if len(sum.Problems) > 0 {
		attrs = append(attrs, "problems", len(sum.Problems))
	}
	if sum.TabsLeftOpen != "" {
		attrs = append(attrs, "tabs_left_open", sum.TabsLeftOpen)
	}
	if runErr != nil {
		attrs = append(attrs, "err", runErr)
	}
	log.Info("pass", attrs...)
	return runErr
}

// stopIdleBrowser stops a Chrome browserop launched when it holds nothing
// but browserop's own tabs (Config.StopIdleBrowser). It runs while the
// pass still holds the lease (the caller checks), so no other pass is
// using that Chrome.
func (r *Runner) stopIdleBrowser(ctx context.Context, log *slog.Logger) {
	if !r.cfg.StopIdleBrowser {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	b := r.current()
	if b == nil {
		if r.cfg.BrowserRunning == nil || !r.cfg.BrowserRunning() {
			return
		}
		var err error
		if b, err = r.getBrowser(ctx); err != nil {
			log.Warn("could not look at the browser left running", "err", err)
			return
		}
	}
	if !b.Dedicated() {
		return
	}
	others, err := b.Others(ctx)
	switch {
	case err != nil:
		log.Warn("no complete tab inventory: leaving the browser running", "err", err)
		return
	case len(others) > 0:
		log.Debug("leaving the browser running: it has tabs that are not browserop's", "tabs", len(others))
		return
	}
	stopped, err := b.StopIfAlone()
	if err != nil {
		log.Warn("stop the browser", "err", err)
		return
	}
	if stopped {
		r.mu.Lock()
		if r.browser == b {
			r.browser = nil
		}
		r.mu.Unlock()
		log.Info("stopped the Chrome browserop launched: it held only browserop's tabs")
	}
}

// acquire takes the lease. When another holder has it and that holder is
// an operator on this host that provably died (HolderDead), the lease is
// taken over at once, with a new generation, instead of waiting out its
// expiry. On ErrLocked, held is the lease as another holder has it.
func (r *Runner) acquire(ctx context.Context) (l ledger.Lease, held *ledger.Lease, err error) {
	l, err = r.db.AcquireLease(ctx, r.cfg.LeaseName, r.cfg.Holder, r.cfg.LeaseTTL)
	if !errors.Is(err, ledger.ErrLocked) {
		return l, nil, err
	}
	cur, gerr := r.db.GetLease(ctx, r.cfg.LeaseName)
	if gerr != nil {
		return l, nil, err
	}
	if !HolderDead(cur.Holder) {
		return l, &cur, err
	}
	l, err = r.db.TakeOverLease(ctx, cur, r.cfg.Holder, r.cfg.LeaseTTL)
	if err != nil {
		if cur2, gerr := r.db.GetLease(ctx, r.cfg.LeaseName); gerr == nil {
			cur = cur2
		}
		return l, &cur, err
	}
	r.log.Warn("took over the lease from an operator that is no longer running", "lease", r.cfg.LeaseName,
		"dead_holder", cur.Holder, "was_until", cur.ExpiresAt, "generation", l.Generation)
	return l, nil, nil
}

func (r *Runner) release(l ledger.Lease) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.db.ReleaseLease(ctx, l); err != nil && !errors.Is(err, ledger.ErrStaleGeneration) {
		r.log.Error("release the lease", "err", err)
	}
}

// execute is the body of a pass, its phases in order: read the calendar,
// settle what earlier passes left (their tabs, then their unfinished
// actions), carry the due entries, the agents' intents and the planner's
// candidates through, and complete the tasks that are settled.
func (p *pass) execute() error {
	cal, err := p.loadCalendar()
	if err != nil {
		return err
	}
	if err := p.reconcileTabsAtStart(); err != nil {
		return err
	}
	if err := p.reconcile(); err != nil {
		return err
	}
	due := p.dueEntries(cal)
	for _, e := range due {
		if err := p.entry(e); err != nil {
			return err
		}
	}
	if err := p.taskIntents(); err != nil {
		return err
	}
	if err := p.plan(due); err != nil {
		return err
	}
	return p.completeTasks()
}

// loadCalendar reads the calendar directory (none configured is an empty
// calendar) and judges it; each problem goes to the summary and the log.
func (p *pass) loadCalendar() (calendar.Calendar, error) {
	r := p.r
	cal := calendar.Calendar{}
	if r.cfg.CalendarDir != "" {
		var err error
		if cal, err = calendar.Load(r.cfg.CalendarDir, r.cfg.MediaDir); err != nil {
			return cal, err
		}
	}
	cal = r.judge(cal)
	for _, prob := range cal.Problems {
		p.sum.Problems = append(p.sum.Problems, prob.Error())
		r.log.Warn("calendar problem", "file", prob.File, "line", prob.Line, "entry", prob.EntryID, "reason", prob.Problem)
	}
	return cal, nil
}

// dueEntries are the calendar's entries due by now, earliest first.
func (p *pass) dueEntries(cal calendar.Calendar) []calendar.Entry {
	now := p.r.now()
	var due []calendar.Entry
	for _, e := range cal.Entries {
		if !e.At.After(now) {
			due = append(due, e)
		}
	}
	sort.SliceStable(due, func(i, j int) bool { return due[i].At.Before(due[j].At) })
	return due
}

// stopUnresolved is the pass's stop while an action it could not settle
// is ambiguous: nothing more is done until it is.
const stopUnresolved = "an unresolved ambiguous action"
