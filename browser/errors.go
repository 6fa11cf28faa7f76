package browser

import (
	"errors"
	"fmt"
)

// Errors that callers branch on. Test them with errors.Is: the package wraps
// them with context.
var (
	// ErrTabGone means the tab went away while browserop used it: it was
	// closed (by a person or by a page), it crashed, or browserop detached
	// from it. Nothing more can be done in it.
	ErrTabGone = errors.New("tab gone")

	// ErrBrowserGone means the connection to the browser is lost: the
	// process exited or was killed, the DevTools socket closed, or the
	// Browser was closed.
	ErrBrowserGone = errors.New("browser gone")

	// ErrTimeout means a page action did not finish within its deadline,
	// or a launch waited too long for another process's launch on the
	// same profile.
	ErrTimeout = errors.New("browser action timed out")

	// ErrOutcomeUnknown means a mutation was dispatched to the page and then
	// something failed (timeout, connection loss, failed navigation), so the
	// effect may or may not have happened. The action is ambiguous: it must
	// be reconciled, never retried.
	ErrOutcomeUnknown = errors.New("outcome unknown")

	// ErrAborted means the browser gave a navigation up before its answer
	// (net::ERR_ABORTED: the tab was closing, or another navigation took
	// its place). A submission it carried may still be pending at the
	// site, which may show it later than its settle time.
	ErrAborted = errors.New("navigation aborted before its answer")

	// ErrSelectorAmbiguous means a selector that must name exactly one
	// element matched zero or several. The action was refused before any
	// input reached the page.
	ErrSelectorAmbiguous = errors.New("selector does not match exactly one element")

	// ErrNotFound means a read found no element for its selector, or the
	// element lacks the attribute asked for.
	ErrNotFound = errors.New("element not found")

	// ErrNotOwned means the caller asked for a tab that this Browser does
	// not own. browserop never attaches to, navigates, types into or closes
	// such a tab.
	ErrNotOwned = errors.New("tab not owned by browserop")

	// ErrNotClickable means the single element of a click is covered by
	// another element or has no box, so a click at its centre would land
	// elsewhere. The click was refused before any input reached the page.
	ErrNotClickable = errors.New("element not clickable")

	// ErrFrameUnreachable means a frame selector named an element that is
	// not an iframe, or an iframe whose document is of another origin (or
	// sandboxed), so browserop can neither read nor type in it. Nothing was
	// typed.
	ErrFrameUnreachable = errors.New("frame document not reachable")

	// ErrBadURL means a URL was refused before navigation (not http, https
	// or about:blank).
	ErrBadURL = errors.New("url refused")

	// ErrNoBrowser means no usable browser executable or no browser at the
	// DevTools address was found.
	ErrNoBrowser = errors.New("no browser")

	// ErrConfig means the Config cannot be used.
	ErrConfig = errors.New("browser config")
)

// SelectorError reports a selector that did not match exactly one element.
// It matches ErrSelectorAmbiguous with errors.Is, and also ErrNotFound when
// nothing matched. For a click, Count is the visible elements matched and
// Hidden the hidden ones, which a click never considers.
type SelectorError struct {
	Selector string
	Count    int
	Hidden   int
}

// Error describes the selector and how many elements it matched.
func (e *SelectorError) Error() string {
	if e.Hidden > 0 {
		return fmt.Sprintf("selector %q matched %d visible elements (and %d hidden), want exactly 1 visible", e.Selector, e.Count, e.Hidden)
	}
	return fmt.Sprintf("selector %q matched %d elements, want exactly 1", e.Selector, e.Count)
}

// Is reports whether target is ErrSelectorAmbiguous, or ErrNotFound for a
// selector that matched nothing.
func (e *SelectorError) Is(target error) bool {
	return target == ErrSelectorAmbiguous || (target == ErrNotFound && e.Count == 0)
}

// redacted wraps an error and replaces its text, so that raw target ids and
// DevTools addresses that chromedp puts in its messages never reach a log.
type redacted struct {
	msg string
	err error
}

func (r *redacted) Error() string { return r.msg }
func (r *redacted) Unwrap() error { return r.err }
