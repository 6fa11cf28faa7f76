package browser

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/inspector"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// Tab is a tab that browserop owns and is attached to. Only Browser.NewTab
// and Browser.AttachOwned make one, so a tab the person opened has no Tab
// value and cannot be navigated, typed into or closed through this package.
//
// Every page action runs under its own deadline (Config.ActionTimeout unless
// the method takes one). When the tab is closed, crashes or is detached, or
// the browser goes away, pending and later actions fail with errors wrapping
// ErrTabGone or ErrBrowserGone instead of hanging. Actions on one Tab are
// serialized; a Tab is safe for concurrent use.
type Tab struct {
	b      *Browser
	id     target.ID
	ctx    context.Context
	cancel context.CancelFunc

	// gone ends with the reason (wrapping ErrTabGone or ErrBrowserGone)
	// when the tab can no longer be used.
	gone     context.Context
	markGone func(error)

	destroyed     chan struct{}
	destroyedOnce sync.Once

	// op serializes page actions: chromedp forbids concurrent actions on
	// one tab.
	op sync.Mutex

	mu      sync.Mutex
	timeout time.Duration // action deadline; 0 means the Browser's
	nav     navState
	// quietSeq and quietSince are what Quiet saw: the document it last
	// found quiet, and since when.
	quietSeq   uint64
	quietSince time.Time
	changed    chan struct{} // closed and replaced on every nav state change
	world      runtime.ExecutionContextID
	// clickHook runs right after a click's mouse events are dispatched.
	clickHook func()

	// landSeq numbers the element marks of ClickOnceAndLand.
	landSeq atomic.Uint64

	// sends is what ErrNotSent's proof watches (notsent.go); under mu.
	sends sendTrack
	// sendWatch is the SendWatch armed while an action is prepared
	// (sendwatch.go); under mu.
	sendWatch *SendWatch
}

// OnClickDispatched sets a function to run right after ClickOnce has sent
// its mouse events and before it waits for their effect. The operator's
// crash points use it; nil removes it.
func (t *Tab) OnClickDispatched(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.clickHook = f
}

// navState is what the event listener learned about the main frame.
type navState struct {
	mainFrame cdp.FrameID
	seq       uint64 // main-frame commits seen
	loaderID  cdp.LoaderID
	// url is the main frame's document URL with its fragment, as the last
	// commit or same-document navigation (pushState, replaceState, a
	// fragment) left it.
	url       string
	status    int // HTTP status of the committed document, 0 when unknown
	errorPage bool
	errorText string
	domReady  bool
	// docRequest is the main-frame document request in flight.
	docRequest network.RequestID
	// pending holds the response status per loader until the commit.
	pending map[cdp.LoaderID]int
	// loaders remembers the commits of recent navigations, so a waiter
	// whose navigation was followed by another still finds its own.
	loaders map[cdp.LoaderID]*commit
	// failSeq counts main-frame document loads that failed before a commit.
	failSeq  uint64
	failText string
	// land is the watch of the last ClickOnceAndLand (see landWatch), nil
	// when none.
	land *landWatch
}

type commit struct {
	seq       uint64
	status    int
	errorPage bool
	errorText string
	domReady  bool
}

func newTab(b *Browser, id target.ID) *Tab {
	t := &Tab{
		b:         b,
		id:        id,
		destroyed: make(chan struct{}),
		changed:   make(chan struct{}),
		nav: navState{
			// Chrome names a page's main frame after its target.
			mainFrame: cdp.FrameID(id),
			pending:   map[cdp.LoaderID]int{},
			loaders:   map[cdp.LoaderID]*commit{},
		},
	}
	gone, cancel := context.WithCancelCause(context.Background())
	t.gone = gone
	t.markGone = func(err error) { cancel(err) }
	return t
}

// start finishes an attachment: it watches for the tab going away and sets
// up the page the way every action expects it.
func (t *Tab) start(ctx context.Context) error {
	detached, err := chromedp.Detached(t.ctx)
	if err != nil {
		return err
	}
	go func() {
		select {
		case <-detached:
			t.markGone(fmt.Errorf("%w: %s detached", ErrTabGone, t.ID()))
		case <-t.ctx.Done():
			if t.b.root.Err() != nil {
				t.markGone(fmt.Errorf("%w: connection lost", ErrBrowserGone))
			} else {
				t.markGone(fmt.Errorf("%w: %s released", ErrTabGone, t.ID()))
			}
		case <-t.gone.Done():
		}
	}()
	return t.run(ctx, "prepare tab", 0, func(actx context.Context) error {
		tree, err := chromedp.Call(actx, page.GetFrameTree, cdp.Empty{})
		if err != nil {
			return err
		}
		if tree.FrameTree != nil && tree.FrameTree.Frame != nil {
			t.mu.Lock()
			t.nav.mainFrame = tree.FrameTree.Frame.ID
			t.nav.loaderID = tree.FrameTree.Frame.LoaderID
			t.nav.url = tree.FrameTree.Frame.URL + tree.FrameTree.Frame.URLFragment
			t.mu.Unlock()
		}
		// A tab in a window without focus still gets focus events and a
		// working caret, so fills behave as for a person.
		_, err = chromedp.Call(actx, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true})
		if err != nil {
			return err
		}
		// Chrome silently re-sends a request, POST included, when a reused
		// keep-alive connection closes before the response headers arrive
		// (HttpNetworkTransaction::ShouldResendRequest), up to twice: a
		// server that commits and then drops the connection gets the form
		// up to three times. Asking for "Connection: close" on every request
		// of an owned tab leaves no idle HTTP/1.1 connection of ours to
		// reuse, so a submission goes out on a fresh one and is never
		// re-sent. See docs/decisions/2026-11-30-browser-no-silent-resend.md.
		_, err = chromedp.Call(actx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"Connection": "close"}})
		return err
	})
}

// SetActionTimeout sets the deadline of each later action on this tab; zero
// restores the Browser's Config.ActionTimeout.
func (t *Tab) SetActionTimeout(d time.Duration) {
	t.mu.Lock()
	t.timeout = d
	t.mu.Unlock()
}

func (t *Tab) actionTimeout() time.Duration {
	t.mu.Lock()
	d := t.timeout
	t.mu.Unlock()
	if d > 0 {
		return d
	}
	return t.b.cfg.actionTimeout()
}

// ID returns the tab's target id. It prints as a short hash.
func (t *Tab) ID() TargetID { return TargetID(t.id) }

// Err returns nil while the tab is usable, else the reason it is not (an
// error wrapping ErrTabGone or ErrBrowserGone).
func (t *Tab) Err() error {
	if t.gone.Err() != nil {
		return context.Cause(t.gone)
	}
	return nil
}

// Done returns a channel that closes when the tab can no longer be used.
func (t *Tab) Done() <-chan struct{} { return t.gone.Done() }

// Release detaches from the tab and leaves it open. Later actions fail with
// ErrTabGone. It is idempotent.
func (t *Tab) Release() {
	t.markGone(fmt.Errorf("%w: %s released", ErrTabGone, t.ID()))
	if t.cancel != nil {
		t.cancel()
	}
	t.b.forget(t)
}

func (t *Tab) markDestroyed() {
	t.destroyedOnce.Do(func() { close(t.destroyed) })
}

func (t *Tab) isDestroyed() bool {
	select {
	case <-t.destroyed:
		return true
	default:
		return false
	}
}

// onEvent runs on chromedp's read loop for this tab, in order: it must be
// quick and must not send commands.
func (t *Tab) onEvent(ev any) {
	t.watchSends(ev)
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		if ev.Type == network.ResourceTypeDocument {
			t.update(func(n *navState) {
				if ev.FrameID == n.mainFrame {
					n.docRequest = ev.RequestID
				}
			})
		}
		t.watchRequest(ev)
		t.watchSendRequest(ev)
	case *network.EventResponseReceived:
		if ev.Response == nil {
			return
		}
		t.watchAnswer(ev.RequestID, ev.Response)
		if ev.Type != network.ResourceTypeDocument {
			return
		}
		t.update(func(n *navState) {
			if ev.FrameID == n.mainFrame {
				n.pending[ev.LoaderID] = int(ev.Response.Status)
			}
		})
	case *network.EventLoadingFinished:
		t.watchFinished(ev)
	case *network.EventLoadingFailed:
		t.watchFailed(ev.RequestID, cmp.Or(ev.ErrorText, "failed"))
		t.update(func(n *navState) {
			if ev.RequestID == n.docRequest && n.docRequest != "" {
				n.failSeq++
				n.failText = ev.ErrorText
				n.docRequest = ""
			}
		})
	case *page.EventNavigatedWithinDocument:
		t.updateIf(func(n *navState) bool {
			if ev.FrameID != n.mainFrame {
				return false
			}
			n.url = ev.URL
			return true
		})
	case *page.EventFrameNavigated:
		if ev.Frame == nil || ev.Frame.ParentID != "" {
			return
		}
		t.update(func(n *navState) {
			n.mainFrame = ev.Frame.ID
			n.seq++
			n.loaderID = ev.Frame.LoaderID
			n.url = ev.Frame.URL + ev.Frame.URLFragment
			n.status = n.pending[ev.Frame.LoaderID]
			n.errorPage = ev.Frame.UnreachableURL != "" || strings.HasPrefix(ev.Frame.URL, "chrome-error:")
			n.errorText = ""
			if n.errorPage {
				n.errorText = "error page for " + redactURL(ev.Frame.UnreachableURL)
			}
			n.domReady = false
			n.docRequest = ""
			clear(n.pending)
			if len(n.loaders) > 16 {
				clear(n.loaders)
			}
			n.loaders[n.loaderID] = &commit{seq: n.seq, status: n.status, errorPage: n.errorPage, errorText: n.errorText}
			t.world = 0
		})
	case *page.EventLifecycleEvent:
		if ev.Name != "DOMContentLoaded" {
			return
		}
		t.update(func(n *navState) {
			if ev.FrameID != n.mainFrame {
				return
			}
			if c := n.loaders[ev.LoaderID]; c != nil {
				c.domReady = true
			}
			if ev.LoaderID == n.loaderID {
				n.domReady = true
			}
		})
	case *runtime.EventExecutionContextsCleared:
		t.update(func(*navState) { t.world = 0 })
	case *inspector.EventTargetCrashed:
		t.markGone(fmt.Errorf("%w: %s crashed", ErrTabGone, t.ID()))
	case *page.EventJavascriptDialogOpening:
		// A dialog blocks the page and every action with it. browserop
		// dismisses it (and confirms leaving its own tab), from another
		// goroutine because the read loop cannot send commands.
		accept := ev.Type == page.DialogTypeBeforeunload
		go t.answerDialog(accept)
	}
}

func (t *Tab) answerDialog(accept bool) {
	ctx, cancel := context.WithTimeout(t.ctx, 5*time.Second)
	defer cancel()
	_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: accept})
}

// redactURL keeps only the origin and path of a URL for an error message:
// query strings can carry tokens.
func redactURL(u string) string {
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		return u[:i]
	}
	return u
}

func (t *Tab) update(f func(*navState)) {
	t.updateIf(func(n *navState) bool { f(n); return true })
}

// updateIf runs f on the nav state and wakes the waiters when f reports a
// change.
func (t *Tab) updateIf(f func(*navState) bool) {
	t.mu.Lock()
	if f(&t.nav) {
		close(t.changed)
		t.changed = make(chan struct{})
	}
	t.mu.Unlock()
}

// waitNav waits until cond holds on the nav state, ctx ends or the tab goes.
func (t *Tab) waitNav(ctx context.Context, cond func(*navState) (bool, error)) error {
	for {
		t.mu.Lock()
		ok, err := cond(&t.nav)
		ch := t.changed
		t.mu.Unlock()
		if ok || err != nil {
			return err
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-t.gone.Done():
			return context.Cause(t.gone)
		}
	}
}

func (t *Tab) snapshot() navState {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.nav
}

// run executes f under the tab's serialization with its own deadline
// (timeout, or the action timeout when zero) and turns whatever went wrong
// into a typed error.
func (t *Tab) run(ctx context.Context, op string, timeout time.Duration, f func(actx context.Context) error) error {
	if timeout <= 0 {
		timeout = t.actionTimeout()
	}
	t.op.Lock()
	defer t.op.Unlock()
	if err := t.usable(); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	actx, cancel := context.WithTimeout(t.ctx, timeout)
	defer cancel()
	stop1 := context.AfterFunc(ctx, cancel)
	defer stop1()
	stop2 := context.AfterFunc(t.gone, cancel)
	defer stop2()
	err := f(actx)
	if err == nil {
		return nil
	}
	return t.classify(op, ctx, actx, timeout, err)
}

// usable returns why the tab cannot take an action, or nil.
func (t *Tab) usable() error {
	if err := t.b.goneErr(); err != nil {
		return err
	}
	return t.Err()
}

// classify maps an action's error to ErrBrowserGone, ErrTabGone, the
// caller's own cancellation, ErrTimeout, or the scrubbed original.
func (t *Tab) classify(op string, caller, actx context.Context, timeout time.Duration, err error) error {
	if gone := t.b.goneErr(); gone != nil {
		return fmt.Errorf("%s: %w", op, gone)
	}
	if errors.Is(err, chromedp.ErrTargetDetached) {
		t.markGone(fmt.Errorf("%w: %s detached", ErrTabGone, t.ID()))
	}
	if gone := t.Err(); gone != nil {
		return fmt.Errorf("%s: %w", op, gone)
	}
	if errors.Is(err, ErrTabGone) || errors.Is(err, ErrBrowserGone) || errors.Is(err, ErrOutcomeUnknown) ||
		errors.Is(err, ErrSelectorAmbiguous) || errors.Is(err, ErrNotFound) || errors.Is(err, ErrNotClickable) || errors.Is(err, ErrFrameUnreachable) || errors.Is(err, ErrTimeout) {
		return fmt.Errorf("%s: %w", op, scrub(err))
	}
	if caller.Err() != nil {
		return fmt.Errorf("%s: %w", op, caller.Err())
	}
	if errors.Is(actx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w after %s", op, ErrTimeout, timeout)
	}
	return scrub(fmt.Errorf("%s: %w", op, err))
}

// isNoTarget reports whether the browser answered that no such target exists.
func isNoTarget(err error) bool {
	var cerr *cdproto.Error
	return errors.As(err, &cerr) && strings.Contains(strings.ToLower(cerr.Message), "no target")
}
