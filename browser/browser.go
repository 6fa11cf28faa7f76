package browser

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
)

// Browser is one connection to a Chrome: a process that browserop launched
// on the dedicated profile (Launch), the Chrome that an earlier Persistent
// Launch left running there (Launch reattaches), or a running browser it
// attached to (Attach). It lists targets, creates and tracks the tabs
// browserop owns, and hands out Tab values only for those. The person may
// open tabs of their own in any of these browsers: Others lists them, and
// the caller ends with Disconnect, which leaves the browser running, rather
// than Close while Others is not empty. It is safe for concurrent use.
type Browser struct {
	cfg      Config
	launched bool // started by this Browser
	// dedicated: on browserop's profile, started by a Persistent Launch of
	// this process or an earlier one; Close stops it.
	dedicated bool
	profile   string // absolute profile dir, "" when unknown (attach by URL)

	// Of a Dedicated browser: the Chrome process (from the launch record
	// when reattached), how to reach it for Browser.close (its relay, or
	// the DevTools address of a Chrome an earlier version started on a
	// port), and the ids of the tabs Chrome opened at launch. Set before
	// Launch returns.
	pid       int
	relay     bool
	wsURL     string
	startup   map[target.ID]bool
	stopGrace time.Duration // 0 means DefaultStopGrace

	allocCtx    context.Context
	allocCancel context.CancelFunc
	// root is the chromedp context of the browser connection. No action
	// ever runs on it directly: in attach mode its first Run would open a
	// tab, and its cancellation must close nothing.
	root       context.Context
	rootCancel context.CancelFunc
	cdp        *chromedp.Browser

	mu     sync.Mutex
	owned  map[target.ID]bool
	tabs   map[target.ID]*Tab
	closed bool
	// destroyWaits are closed when their target's destroyed event
	// arrives (CloseTarget).
	destroyWaits map[target.ID]chan struct{}

	closeOnce sync.Once
	closeErr  error

	// targetsCreated counts the targets the browser reported created: a
	// committing click's proof that it sent nothing needs none created
	// meanwhile (notsent.go).
	targetsCreated atomic.Int64
}

// Launch starts Chrome on cfg.ProfileDir (created 0700, prepared by
// PrepareProfile) with a deliberate flag list (see launchFlags) and no
// DevTools port, and connects to it over its DevTools pipe: directly, or
// through the relay of a Persistent launch. ctx bounds the start only; the
// connection lives until Close or Disconnect.
//
// Without cfg.Persistent the browser is bound to this process: it dies when
// the process exits, and Close and Disconnect both stop it.
//
// With cfg.Persistent the browser outlives this process: it starts detached,
// Launch writes LaunchRecordFileName in the profile, and the Browser is
// Dedicated. When a running Chrome holds the profile and the launch record
// names it, Launch reattaches to it instead of starting one (Launched is then
// false, Dedicated true), and leaves the profile's files alone.
//
// It returns an error wrapping ErrNoBrowser when no executable is found or a
// reattach finds no browser, and ErrConfig for an unusable Config or a
// profile that a Chrome holds which browserop may not take over (any Chrome
// without Persistent, or one that the launch record does not name).
func Launch(ctx context.Context, cfg Config) (*Browser, error) {
	profile, err := ensureProfileDir(cfg.ProfileDir)
	if err != nil {
		return nil, err
	}
	if b, held, err := takeHeldProfile(ctx, cfg, profile); held {
		return b, err
	}
	if err := PrepareProfile(profile); err != nil {
		return nil, err
	}
	if os.Geteuid() == 0 && !cfg.NoSandbox {
		return nil, fmt.Errorf("%w: %w", ErrConfig, errRootSandbox)
	}
	execPath, err := FindExecutable(cfg.ExecPath)
	if err != nil {
		return nil, err
	}
	flags, err := launchFlags(cfg, profile)
	if err != nil {
		return nil, err
	}
	if cfg.Persistent {
		b, err := launchPersistent(ctx, cfg, execPath, profile, flags)
		if err != nil {
			return b, fmt.Errorf("launch %s: %w", filepath.Base(execPath), err)
		}
		return b, nil
	}
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(execPath)}
	if cfg.DevToolsPort {
		// Chrome's default address is loopback.
		opts = append(opts, remote.WebSocket)
		flags = append(flags, flag{"remote-debugging-port", "0"})
	}
	for _, f := range flags {
		opts = append(opts, chromedp.Flag(f.name, f.value))
	}
	b := &Browser{cfg: cfg, launched: true, profile: profile}
	b.allocCtx, b.allocCancel = chromedp.NewExecAllocator(context.Background(), opts...)
	if err := b.connect(ctx); err != nil {
		return nil, fmt.Errorf("launch %s: %w", filepath.Base(execPath), err)
	}
	return b, nil
}

// takeHeldProfile handles a profile a running Chrome holds: with
// Persistent, the Chrome a launch recorded (or tagged) there is attached to;
// any other is refused. held is false when no Chrome holds the profile.
func takeHeldProfile(ctx context.Context, cfg Config, profile string) (b *Browser, held bool, err error) {
	pid, ok := profileInUse(profile)
	if !ok {
		return nil, false, nil
	}
	if cfg.Persistent {
		if rec, err := readLaunchRecord(profile); err == nil && rec.PID == pid {
			b, err := reattach(ctx, cfg, profile, rec)
			return b, true, err
		}
		if taggedLaunch(pid) {
			// browserop launched it but died before recording it: its
			// start-up tab is unknown (it counts as the person's), so
			// this Chrome is only ever disconnected from.
			rec := launchRecord{PID: pid, LaunchedAt: time.Now().UTC()}
			if err := writeLaunchRecord(profile, rec); err != nil {
				return nil, true, fmt.Errorf("%w: write %s: %v", ErrConfig, LaunchRecordFileName, err)
			}
			b, err := reattach(ctx, cfg, profile, rec)
			return b, true, err
		}
	}
	return nil, true, errProfileInUse(profile, pid)
}

// flag is one switch of a launched Chrome's command line: a bool (present
// when true) or a string value.
type flag struct {
	name  string
	value any
}

// arg is the flag as a command-line argument, "" for a false bool.
func (f flag) arg() string {
	switch v := f.value.(type) {
	case bool:
		if v {
			return "--" + f.name
		}
		return ""
	default:
		return fmt.Sprintf("--%s=%v", f.name, v)
	}
}

// launchFlags is the whole command line of a launched browser, but for the
// executable and the URL it opens. It does not start from
// chromedp.DefaultExecAllocatorOptions: that list disables the repost prompt
// and swaps the keychain, which are wrong for a person's profile.
func launchFlags(cfg Config, profile string) ([]flag, error) {
	flags := []flag{
		// The dedicated profile: Chrome 136+ refuses remote debugging on the
		// default one, and the person's everyday profile stays untouched.
		{"user-data-dir", profile},
		// No DevTools port: any local user could reach one. A Persistent
		// Launch's relay gives Chrome --remote-debugging-pipe and takes
		// clients on a socket only this uid can reach; any other Launch is
		// driven by chromedp over the pipe.
		// No first-run wizard or default-browser prompt on a fresh profile.
		{"no-first-run", true},
		{"no-default-browser-check", true},
		// No background traffic browserop did not ask for: no field trials,
		// component downloads, crash uploads or sync. It also keeps tests
		// hermetic on machines without internet.
		{"disable-background-networking", true},
		{"disable-component-update", true},
		{"disable-sync", true},
		{"disable-breakpad", true},
		// Explicit either way, so that chromedp never adds it on its own.
		{"no-sandbox", cfg.NoSandbox},
		// No fetchLater: the browser sends a request a page deferred with
		// it once the page is gone, outside the tab's interception, so a
		// click could never be proven to have sent nothing
		// (notsent.go). A page that wants it is told it is not there,
		// as in any browser without it. Joined with the features
		// ExtraFlags disable.
		{"disable-features", "FetchLaterAPI"},
		// Not passed on purpose: --disable-prompt-on-repost (a reload would
		// re-submit a POST), --password-store and --use-mock-keychain (they
		// can log the profile out), --enable-automation and
		// --disable-extensions (they change the person's browser).
	}
	if cfg.Headless {
		flags = append(flags,
			flag{"headless", true},
			// A fixed viewport, so layout and click points do not depend
			// on the machine.
			flag{"window-size", "1280,1000"},
			// Headless has nothing to draw on; the GPU process only costs.
			flag{"disable-gpu", true},
			flag{"mute-audio", true},
		)
	}
	for _, f := range cfg.ExtraFlags {
		name, value, err := parseFlag(f)
		if err != nil {
			return nil, err
		}
		if i := slices.IndexFunc(flags, func(f flag) bool { return f.name == name }); name == "disable-features" && i >= 0 {
			// Chrome reads one --disable-features: the last.
			if v, ok := value.(string); ok && v != "" {
				flags[i].value = fmt.Sprint(flags[i].value) + "," + v
			}
			continue
		}
		flags = append(flags, flag{name, value})
	}
	return flags, nil
}

// Attach connects to a running Chrome: cfg.DevToolsURL when set (loopback
// only), else the DevToolsActivePort file cfg.DevToolsActivePortFile, else,
// in cfg.ProfileDir, the relay socket of a Persistent Launch's Chrome
// (SocketFileName) or the DevToolsActivePort file. Close only disconnects:
// it never closes a tab or the browser. It returns an error wrapping
// ErrNoBrowser when nothing answers.
func Attach(ctx context.Context, cfg Config) (*Browser, error) {
	wsURL := cfg.DevToolsURL
	b := &Browser{cfg: cfg}
	if cfg.ProfileDir != "" {
		b.profile, _ = filepath.Abs(cfg.ProfileDir)
	}
	switch {
	case wsURL != "":
		if err := checkDevToolsURL(wsURL); err != nil {
			return nil, err
		}
	case cfg.DevToolsActivePortFile == "" && cfg.ProfileDir == "":
		return nil, fmt.Errorf("%w: attach needs browser.devtools_url, browser.devtools_active_port_file or browser.profile_dir", ErrConfig)
	case cfg.DevToolsActivePortFile == "" && relaySocketThere(b.profile):
		b.allocCtx, b.allocCancel = NewRelayAllocator(context.Background(), b.profile)
	default:
		file := cfg.DevToolsActivePortFile
		if file == "" {
			file = filepath.Join(cfg.ProfileDir, ActivePortFileName)
		}
		var err error
		if wsURL, err = ReadActivePort(file); err != nil {
			return nil, err
		}
	}
	if b.allocCtx == nil {
		b.allocCtx, b.allocCancel = remote.NewAllocator(context.Background(), wsURL, remote.WithDialTimeout(10*time.Second))
	}
	if err := b.connect(ctx); err != nil {
		return nil, fmt.Errorf("attach: %w: %w", ErrNoBrowser, err)
	}
	return b, nil
}

// connect opens the browser-level connection and subscribes to the target
// events that turn into ErrTabGone.
func (b *Browser) connect(ctx context.Context) error {
	b.owned = map[target.ID]bool{}
	b.tabs = map[target.ID]*Tab{}
	b.root, b.rootCancel = chromedp.NewContext(b.allocCtx,
		chromedp.WithBrowserOption(
			// chromedp logs raw session ids; browserop's logs must not.
			chromedp.WithBrowserLogf(func(string, ...any) {}),
			chromedp.WithBrowserErrorf(func(string, ...any) {}),
		))

	// The first call on root allocates the browser and binds its life to
	// root, so it must not carry ctx's deadline. Bound the wait instead.
	done := make(chan error, 1)
	go func() { done <- chromedp.ListenBrowser(b.root, b.onBrowserEvent) }()
	select {
	case err := <-done:
		if err != nil {
			b.shutdown()
			return scrub(err)
		}
	case <-ctx.Done():
		b.shutdown()
		<-done
		return ctx.Err()
	}
	b.cdp = chromedp.FromContext(b.root).Browser

	cctx, cancel := b.callCtx(ctx)
	defer cancel()
	if _, err := chromedp.CallBrowser(cctx, target.SetDiscoverTargets, target.SetDiscoverTargetsParams{Discover: true}); err != nil {
		b.shutdown()
		return scrub(err)
	}
	return nil
}

// onBrowserEvent runs on chromedp's read loop: it must be quick and must not
// send commands.
func (b *Browser) onBrowserEvent(ev any) {
	var id target.ID
	var why string
	switch ev := ev.(type) {
	case *target.EventTargetCreated:
		b.targetsCreated.Add(1)
		return
	case *target.EventTargetDestroyed:
		id, why = ev.TargetID, "closed"
	case *target.EventTargetCrashed:
		id, why = ev.TargetID, "crashed"
	default:
		return
	}
	b.mu.Lock()
	t := b.tabs[id]
	if w := b.destroyWaits[id]; w != nil && why == "closed" {
		close(w)
		delete(b.destroyWaits, id)
	}
	b.mu.Unlock()
	if t == nil {
		return
	}
	if why == "closed" {
		t.markDestroyed()
	}
	t.markGone(fmt.Errorf("%w: %s %s", ErrTabGone, TargetID(id), why))
}

// callCtx derives a context for one browser-level command: it carries the
// chromedp browser, ends with caller, and has the action deadline.
func (b *Browser) callCtx(caller context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(b.root, b.cfg.actionTimeout())
	stop := context.AfterFunc(caller, cancel)
	return ctx, func() { stop(); cancel() }
}

// goneErr returns a non-nil error wrapping ErrBrowserGone once the
// connection is lost or the Browser is closed.
func (b *Browser) goneErr() error {
	b.mu.Lock()
	closed := b.closed
	b.mu.Unlock()
	if closed {
		return fmt.Errorf("%w: closed", ErrBrowserGone)
	}
	if b.root.Err() != nil {
		return fmt.Errorf("%w: connection lost", ErrBrowserGone)
	}
	if b.cdp != nil {
		select {
		case <-b.cdp.LostConnection:
			return fmt.Errorf("%w: connection lost", ErrBrowserGone)
		default:
		}
	}
	return nil
}

// browserErr turns the error of a browser-level command into a typed one.
func (b *Browser) browserErr(op string, caller, cctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if gone := b.goneErr(); gone != nil {
		return fmt.Errorf("%s: %w", op, gone)
	}
	if caller.Err() != nil {
		return fmt.Errorf("%s: %w", op, caller.Err())
	}
	if errors.Is(cctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w", op, ErrTimeout)
	}
	return scrub(fmt.Errorf("%s: %w", op, err))
}

// Launched reports whether this Browser started its browser (Close stops
// it). It is false for a browser that Attach connected to, and for one that
// Launch reattached to (see Dedicated).
func (b *Browser) Launched() bool { return b.launched }

// ProfileDir returns the absolute profile directory, or "" when attached by
// URL without one.
func (b *Browser) ProfileDir() string { return b.profile }

// Done returns a channel that closes when the connection to the browser ends:
// the process exited, the socket closed, or Close or Disconnect was called.
func (b *Browser) Done() <-chan struct{} { return b.root.Done() }

// Target is one page target (a tab) in an inventory.
type Target struct {
	// ID is the raw DevTools id. Keep it in memory or the local tab table
	// only; it prints as a short hash.
	ID TargetID
	// URL and Title are what the browser reports for the tab.
	URL   string
	Title string
	// Attached reports whether some DevTools client is attached to it.
	Attached bool
	// Owned reports whether this Browser owns the tab (created it with
	// NewTab, or the caller adopted it).
	Owned bool
	// Subtype is Chrome's page subtype, such as "prerender"; "" for a tab.
	Subtype string
	// OpenerID is the raw id of the tab that opened this one, if any.
	OpenerID TargetID
	// WindowID and WindowState place the tab in a window of the person's
	// (normal, minimized, maximized, fullscreen); set in a SurfacePerson
	// inventory only.
	WindowID    int64
	WindowState string
}

// Inventory is a listing of the tabs of the connected browser on one
// surface. Complete is true only when the layer that produced it says so
// (the listing call itself succeeded, every question was answered), so
// that absence from it proves a tab is gone from that surface; a partial
// or failed listing proves nothing, and neither does one surface alone.
type Inventory struct {
	Surface  Surface
	Targets  []Target
	Complete bool
	// At is when the listing was taken.
	At time.Time
}

// Has reports whether the inventory lists the target id.
func (inv Inventory) Has(id TargetID) bool {
	return slices.ContainsFunc(inv.Targets, func(t Target) bool { return t.ID == id })
}

// Targets lists every page target of the browser, the person's tabs
// included. On error it returns an incomplete Inventory and an error wrapping
// ErrBrowserGone or ErrTimeout where that applies.
func (b *Browser) Targets(ctx context.Context) (Inventory, error) {
	if err := b.goneErr(); err != nil {
		return Inventory{Surface: SurfaceController}, fmt.Errorf("list targets: %w", err)
	}
	cctx, cancel := b.callCtx(ctx)
	defer cancel()
	res, err := chromedp.CallBrowser(cctx, target.GetTargets, target.GetTargetsParams{})
	if err != nil {
		return Inventory{Surface: SurfaceController}, b.browserErr("list targets", ctx, cctx, err)
	}
	inv := Inventory{Surface: SurfaceController, Complete: true, At: time.Now()}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, info := range res.TargetInfos {
		if info == nil || info.Type != "page" {
			continue
		}
		inv.Targets = append(inv.Targets, Target{
			ID:       TargetID(info.TargetID),
			URL:      info.URL,
			Title:    info.Title,
			Attached: info.Attached,
			Owned:    b.owned[info.TargetID],
			Subtype:  info.Subtype,
			OpenerID: TargetID(info.OpenerID),
		})
	}
	return inv, nil
}

// NewTab opens a tab in the person's profile (the default browser context,
// never an incognito one), records it as owned by this Browser, attaches to
// it and, when url is not empty, navigates it there. A blank marker URL
// (about:blank#fragment, see IsBlankMarker) is the URL the tab is created
// on, so that the tab carries it from its first moment. When the
// navigation fails the tab is still returned with the error, so the caller
// can record and close it; when the tab cannot be created or attached, the
// tab is nil.
func (b *Browser) NewTab(ctx context.Context, url string) (*Tab, error) {
	createURL := "about:blank"
	if IsBlankMarker(url) {
		createURL, url = url, ""
	} else if url != "" {
		if err := checkNavURL(url); err != nil {
			return nil, err
		}
	}
	if err := b.goneErr(); err != nil {
		return nil, fmt.Errorf("new tab: %w", err)
	}
	cctx, cancel := b.callCtx(ctx)
	defer cancel()
	res, err := chromedp.CallBrowser(cctx, target.CreateTarget, target.CreateTargetParams{
		URL: createURL,
		// Its own window: a background tab in a shared window gets no
		// frames and throttled timers. Focus stays where the person has it.
		NewWindow: new(true),
		Focus:     new(false),
	})
	if err != nil {
		return nil, b.browserErr("new tab", ctx, cctx, err)
	}
	id := res.TargetID
	b.mu.Lock()
	b.owned[id] = true
	b.mu.Unlock()

	t, err := b.attach(ctx, id)
	if err != nil {
		// The tab is blank and ours: do not leave it behind.
		cl, cancel := b.callCtx(context.Background())
		_, _ = chromedp.CallBrowser(cl, target.CloseTarget, target.CloseTargetParams{TargetID: id})
		cancel()
		b.mu.Lock()
		delete(b.owned, id)
		b.mu.Unlock()
		return nil, fmt.Errorf("new tab: %w", err)
	}
	if url == "" || url == "about:blank" {
		return t, nil
	}
	if _, err := t.Navigate(ctx, url); err != nil {
		return t, fmt.Errorf("new tab: %w", err)
	}
	return t, nil
}

// Adopt marks a tab as owned by this Browser, after the caller proved from
// the ledger that browserop created it (for example before a restart). It
// refuses ids that a complete inventory does not list as a page. Adopting a
// tab the person opened breaks the rule that browserop never touches it:
// only the operator's reconciliation may call it.
func (b *Browser) Adopt(ctx context.Context, id TargetID) error {
	inv, err := b.Targets(ctx)
	if err != nil {
		return fmt.Errorf("adopt %s: %w", id, err)
	}
	if !inv.Complete || !inv.Has(id) {
		return fmt.Errorf("adopt %s: %w: no such page target", id, ErrTabGone)
	}
	b.mu.Lock()
	b.owned[target.ID(id)] = true
	b.mu.Unlock()
	return nil
}

// Owns reports whether the id is in this Browser's owned set.
func (b *Browser) Owns(id TargetID) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.owned[target.ID(id)]
}

// AttachOwned returns a Tab for an owned target: the live one when this
// Browser is attached to it already, else a new attachment. It returns an
// error wrapping ErrNotOwned for any other id, ErrTabGone when the target
// does not exist.
func (b *Browser) AttachOwned(ctx context.Context, id TargetID) (*Tab, error) {
	tid := target.ID(id)
	b.mu.Lock()
	owned := b.owned[tid]
	live := b.tabs[tid]
	b.mu.Unlock()
	if !owned {
		return nil, fmt.Errorf("attach %s: %w", id, ErrNotOwned)
	}
	if live != nil && live.Err() == nil {
		return live, nil
	}
	t, err := b.attach(ctx, tid)
	if err != nil {
		return nil, fmt.Errorf("attach %s: %w", id, err)
	}
	return t, nil
}

// attach connects a Tab to an owned target. Detaching (cancel of its
// context) never closes the tab: WithDetachOnCancel.
func (b *Browser) attach(ctx context.Context, id target.ID) (*Tab, error) {
	if err := b.goneErr(); err != nil {
		return nil, err
	}
	t := newTab(b, id)
	tabCtx, tabCancel := chromedp.NewContext(b.root,
		chromedp.WithTargetID(id),
		chromedp.WithDetachOnCancel(),
		chromedp.WithListener(t.onEvent),
	)
	t.ctx, t.cancel = tabCtx, tabCancel

	// The first Run binds the session to its context, so it gets tabCtx
	// itself, and a watchdog bounds it instead of a deadline.
	done := make(chan error, 1)
	go func() { done <- chromedp.Do(tabCtx) }()
	timer := time.NewTimer(b.cfg.actionTimeout())
	defer timer.Stop()
	var err error
	select {
	case err = <-done:
	case <-timer.C:
		tabCancel()
		<-done
		err = ErrTimeout
	case <-ctx.Done():
		tabCancel()
		<-done
		err = ctx.Err()
	}
	if err != nil {
		tabCancel()
		if gone := b.goneErr(); gone != nil {
			return nil, gone
		}
		if errors.Is(err, chromedp.ErrTargetDetached) || errors.Is(err, chromedp.ErrInvalidTarget) || isNoTarget(err) {
			return nil, fmt.Errorf("%w: %v", ErrTabGone, scrub(err))
		}
		return nil, scrub(err)
	}
	if err := t.start(ctx); err != nil {
		tabCancel()
		return nil, err
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		tabCancel()
		return nil, fmt.Errorf("%w: closed", ErrBrowserGone)
	}
	b.tabs[id] = t
	b.mu.Unlock()
	return t, nil
}

// CloseReceipt is what CloseTab observed. Sent means the browser accepted
// the close command; Confirmed means the target-destroyed event for the tab
// arrived. A closure is proven only together with the tab's absence from a
// complete inventory taken afterwards.
type CloseReceipt struct {
	Sent      bool
	Confirmed bool
}

// CloseTab closes an owned tab and waits (up to the action timeout) for the
// browser to confirm it is destroyed. It returns an error wrapping ErrNotOwned
// for a tab this Browser does not own, ErrTabGone when the tab was already
// gone (the receipt then says whether its destruction was seen).
func (b *Browser) CloseTab(ctx context.Context, t *Tab) (CloseReceipt, error) {
	if t == nil || t.b != b || !b.Owns(TargetID(t.id)) {
		return CloseReceipt{}, fmt.Errorf("close tab: %w", ErrNotOwned)
	}
	if t.isDestroyed() {
		t.Release()
		return CloseReceipt{Confirmed: true}, fmt.Errorf("close %s: %w: already closed", t.ID(), ErrTabGone)
	}
	if err := b.goneErr(); err != nil {
		return CloseReceipt{}, fmt.Errorf("close %s: %w", t.ID(), err)
	}
	cctx, cancel := b.callCtx(ctx)
	defer cancel()
	_, err := chromedp.CallBrowser(cctx, target.CloseTarget, target.CloseTargetParams{TargetID: t.id})
	if err != nil {
		if t.isDestroyed() {
			t.Release()
			return CloseReceipt{Confirmed: true}, fmt.Errorf("close %s: %w: already closed", t.ID(), ErrTabGone)
		}
		return CloseReceipt{}, b.browserErr("close "+t.ID().String(), ctx, cctx, err)
	}
	rcpt := CloseReceipt{Sent: true}
	select {
	case <-t.destroyed:
		rcpt.Confirmed = true
	case <-cctx.Done():
	}
	t.Release()
	if rcpt.Sent {
		b.mu.Lock()
		delete(b.owned, t.id)
		b.mu.Unlock()
	}
	if !rcpt.Confirmed {
		return rcpt, b.browserErr("close "+t.ID().String(), ctx, cctx, errors.New("no destroyed event"))
	}
	return rcpt, nil
}

// CloseTarget closes an owned tab without attaching to it (a page whose
// navigation hangs can keep an attachment from ever completing) and waits,
// up to the action timeout, for the browser to confirm it is destroyed. It
// returns an error wrapping ErrNotOwned for an id this Browser does not own.
func (b *Browser) CloseTarget(ctx context.Context, id TargetID) (CloseReceipt, error) {
	tid := target.ID(id)
	if !b.Owns(id) {
		return CloseReceipt{}, fmt.Errorf("close %s: %w", id, ErrNotOwned)
	}
	if err := b.goneErr(); err != nil {
		return CloseReceipt{}, fmt.Errorf("close %s: %w", id, err)
	}
	destroyed := make(chan struct{})
	b.mu.Lock()
	if b.destroyWaits == nil {
		b.destroyWaits = map[target.ID]chan struct{}{}
	}
	b.destroyWaits[tid] = destroyed
	live := b.tabs[tid]
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		if b.destroyWaits[tid] == destroyed {
			delete(b.destroyWaits, tid)
		}
		b.mu.Unlock()
	}()
	cctx, cancel := b.callCtx(ctx)
	defer cancel()
	if _, err := chromedp.CallBrowser(cctx, target.CloseTarget, target.CloseTargetParams{TargetID: tid}); err != nil {
		if isNoTarget(err) {
			return CloseReceipt{}, fmt.Errorf("close %s: %w: already closed", id, ErrTabGone)
		}
		return CloseReceipt{}, b.browserErr("close "+id.String(), ctx, cctx, err)
	}
	rcpt := CloseReceipt{Sent: true}
	select {
	case <-destroyed:
		rcpt.Confirmed = true
	case <-cctx.Done():
	}
	if live != nil {
		live.Release()
	}
	b.mu.Lock()
	delete(b.owned, tid)
	b.mu.Unlock()
	if !rcpt.Confirmed {
		return rcpt, b.browserErr("close "+id.String(), ctx, cctx, errors.New("no destroyed event"))
	}
	return rcpt, nil
}

// forget removes a released tab from the attached set.
func (b *Browser) forget(t *Tab) {
	b.mu.Lock()
	if b.tabs[t.id] == t {
		delete(b.tabs, t.id)
	}
	b.mu.Unlock()
}

// Close ends the connection. For a Dedicated browser (launched with
// Config.Persistent, now or by an earlier process) it stops Chrome: a
// Browser.close command, up to DefaultStopGrace for the process to exit, then
// SIGKILL; then it removes the launch record. It returns an error when the
// process does not exit even then. For a browser launched without
// Persistent it stops the process (gracefully, then by force). For an
// attached one it only detaches and disconnects, and no tab is closed.
// Stopping a browser closes every tab in it, the person's too: check Others
// first, and call Disconnect when it is not empty. Pending tab actions fail
// with ErrBrowserGone. Close is idempotent and safe to call concurrently;
// after Disconnect it does nothing.
func (b *Browser) Close() error { return b.end(true) }

// end is Close (stop) or Disconnect (!stop); the first call decides.
func (b *Browser) end(stop bool) error {
	b.endAs(func() error {
		if stop && b.dedicated {
			return b.stopDedicated(nil)
		}
		return b.shutdown()
	})
	return b.closeErr
}

// endAs ends the connection once: tabs fail with ErrBrowserGone, then how
// runs and its error is what Close and Disconnect return from then on.
func (b *Browser) endAs(how func() error) {
	b.closeOnce.Do(func() {
		b.mu.Lock()
		b.closed = true
		tabs := make([]*Tab, 0, len(b.tabs))
		for _, t := range b.tabs {
			tabs = append(tabs, t)
		}
		b.mu.Unlock()
		for _, t := range tabs {
			t.markGone(fmt.Errorf("%w: closed", ErrBrowserGone))
			t.Release()
		}
		b.closeErr = how()
	})
}

// shutdown stops the chromedp contexts: a graceful Browser.close for a
// browser launched without Persistent (it cannot outlive them anyway), a
// plain disconnect otherwise.
func (b *Browser) shutdown() error {
	var err error
	if b.launched && !b.dedicated && b.root != nil && chromedp.FromContext(b.root).Browser != nil && b.root.Err() == nil {
		cctx, cancel := context.WithTimeout(b.root, 10*time.Second)
		err = chromedp.Cancel(cctx)
		cancel()
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			err = nil // the browser went away while closing: that is the goal
		}
	}
	if b.rootCancel != nil {
		b.rootCancel()
	}
	if b.allocCancel != nil {
		b.allocCancel()
	}
	if c := chromedp.FromContext(b.allocCtx); c != nil && c.Allocator != nil {
		c.Allocator.Wait()
	}
	return scrub(err)
}
