package browser

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// All selectors of the page primitives are CSS selectors, evaluated with
// the query function of browserop's world (jsQuery) in the main frame.

// checkNavURL allows http, https and about:blank; a javascript:, data:,
// file: or chrome: URL is never navigated to.
func checkNavURL(raw string) error {
	if raw == "about:blank" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%w: %q is not an absolute http(s) URL", ErrBadURL, redactURL(raw))
	}
	return nil
}

// transientNetErrors are load failures worth another try: the request most
// likely never reached a server that could act on it, and a GET is an
// observation anyway.
var transientNetErrors = []string{
	"net::ERR_CONNECTION_RESET", "net::ERR_CONNECTION_CLOSED", "net::ERR_CONNECTION_REFUSED",
	"net::ERR_EMPTY_RESPONSE", "net::ERR_NETWORK_CHANGED", "net::ERR_INTERNET_DISCONNECTED",
	"net::ERR_NAME_NOT_RESOLVED", "net::ERR_ADDRESS_UNREACHABLE", "net::ERR_NETWORK_IO_SUSPENDED",
	// Another navigation (a script, a late form response) cancelled ours.
	"net::ERR_ABORTED",
}

func isTransient(err error) bool {
	var le *chromedp.LoadError
	if !errors.As(err, &le) {
		return false
	}
	for _, s := range transientNetErrors {
		if strings.Contains(le.ErrorText, s) {
			return true
		}
	}
	return false
}

// Navigate loads url (http, https or about:blank) in the tab and waits until
// its document is parsed. It returns the HTTP status of the main document
// after redirects (0 for about:blank). It is an observation: a transient
// network failure is retried twice. Errors wrap ErrBadURL, chromedp's
// ErrPageLoad, ErrTimeout, ErrTabGone or ErrBrowserGone.
func (t *Tab) Navigate(ctx context.Context, rawURL string) (int, error) {
	if err := checkNavURL(rawURL); err != nil {
		return 0, err
	}
	var status int
	var err error
	for attempt := 1; attempt <= 3; attempt++ {
		status, err = t.navigateOnce(ctx, rawURL)
		if err == nil || !isTransient(err) || attempt == 3 {
			break
		}
		select {
		case <-time.After(time.Duration(attempt) * 250 * time.Millisecond):
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	return status, err
}

func (t *Tab) navigateOnce(ctx context.Context, rawURL string) (int, error) {
	// A navigation of ours is no part of a submission the tab watched.
	t.disarm()
	var status int
	err := t.run(ctx, "navigate to "+redactURL(rawURL), 0, func(actx context.Context) error {
		res, err := chromedp.Call(actx, page.Navigate, page.NavigateParams{URL: rawURL})
		if err != nil {
			return err
		}
		if res.ErrorText != "" {
			return &chromedp.LoadError{ErrorText: res.ErrorText}
		}
		if res.IsDownload {
			return fmt.Errorf("%w: the URL is a download", chromedp.ErrPageLoad)
		}
		if res.LoaderID == "" { // same-document navigation
			status = t.snapshot().status
			return nil
		}
		var c commit
		err = t.waitNav(actx, func(n *navState) (bool, error) {
			got := n.loaders[res.LoaderID]
			if got == nil {
				return false, nil
			}
			// A later commit (a script redirect) ends the wait too.
			if got.domReady || got.errorPage || n.seq > got.seq {
				c = *got
				return true, nil
			}
			return false, nil
		})
		if err != nil {
			return err
		}
		if c.errorPage {
			return &chromedp.LoadError{ErrorText: c.errorText}
		}
		status = c.status
		return nil
	})
	return status, err
}

// WaitVisible waits up to timeout (the action timeout when zero) until some
// element matching sel has a box and is not hidden. It returns an error
// wrapping ErrTimeout when none appears.
func (t *Tab) WaitVisible(ctx context.Context, sel string, timeout time.Duration) error {
	return t.run(ctx, fmt.Sprintf("wait for %q", sel), timeout, func(actx context.Context) error {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			var ok bool
			if err := t.eval(actx, jsVisible, &ok, sel); err != nil && !isStaleContext(err) {
				return err
			}
			if ok {
				return nil
			}
			select {
			case <-tick.C:
			case <-actx.Done():
				return actx.Err()
			}
		}
	})
}

// Count returns how many elements match sel now. It never waits.
func (t *Tab) Count(ctx context.Context, sel string) (int, error) {
	var n int
	err := t.run(ctx, fmt.Sprintf("count %q", sel), 0, func(actx context.Context) error {
		return t.eval(actx, jsCount, &n, sel)
	})
	return n, err
}

// Text returns the text content of the one element matching sel: the exact
// DOM text, not its CSS rendering. It returns a *SelectorError (ErrNotFound,
// ErrSelectorAmbiguous) unless exactly one element matches.
func (t *Tab) Text(ctx context.Context, sel string) (string, error) {
	all, err := t.Texts(ctx, sel)
	if err != nil {
		return "", err
	}
	if len(all) != 1 {
		return "", fmt.Errorf("text: %w", &SelectorError{Selector: sel, Count: len(all)})
	}
	return all[0], nil
}

// Texts returns the text content of every element matching sel, in document
// order; none is an empty slice, not an error.
func (t *Tab) Texts(ctx context.Context, sel string) ([]string, error) {
	var out []string
	err := t.run(ctx, fmt.Sprintf("read text of %q", sel), 0, func(actx context.Context) error {
		return t.eval(actx, jsTexts, &out, sel)
	})
	return out, err
}

// Attr returns the attribute name of the one element matching sel. It
// returns a *SelectorError unless exactly one element matches, and an error
// wrapping ErrNotFound when the element lacks the attribute.
func (t *Tab) Attr(ctx context.Context, sel, name string) (string, error) {
	var all []*string
	err := t.run(ctx, fmt.Sprintf("read %s of %q", name, sel), 0, func(actx context.Context) error {
		return t.eval(actx, jsAttrs, &all, sel, name)
	})
	if err != nil {
		return "", err
	}
	if len(all) != 1 {
		return "", fmt.Errorf("attribute %s: %w", name, &SelectorError{Selector: sel, Count: len(all)})
	}
	if all[0] == nil {
		return "", fmt.Errorf("attribute %s of %q: %w", name, sel, ErrNotFound)
	}
	return *all[0], nil
}

// Attrs returns the attribute name of every element matching sel, in
// document order, with "" for an element that lacks it.
func (t *Tab) Attrs(ctx context.Context, sel, name string) ([]string, error) {
	var all []*string
	err := t.run(ctx, fmt.Sprintf("read %s of %q", name, sel), 0, func(actx context.Context) error {
		return t.eval(actx, jsAttrs, &all, sel, name)
	})
	out := make([]string, len(all))
	for i, v := range all {
		if v != nil {
			out[i] = *v
		}
	}
	return out, err
}

type valueResult struct {
	frameResult
	N   int     `json:"n"`
	V   *string `json:"v"`
	Err string  `json:"err"`
}

// frameResult is what a page function found of the frame it was asked to
// work in (see jsFrameDoc).
type frameResult struct {
	FN   int    `json:"fn"`
	FErr string `json:"ferr"`
}

// check returns the error for a frame selector that does not name exactly
// one reachable iframe; frameSel "" is the main document and always passes.
func (f frameResult) check(frameSel string) error {
	if frameSel == "" {
		return nil
	}
	if f.FN != 1 {
		return &SelectorError{Selector: frameSel, Count: f.FN}
	}
	if f.FErr != "" {
		return fmt.Errorf("%w: %q: %s", ErrFrameUnreachable, frameSel, f.FErr)
	}
	return nil
}

// Value returns the value of the one input, textarea or select matching sel,
// or the text of a contenteditable element as a person sees it: every
// paragraph (block) a line, joined by "\n", and a line break inside a
// paragraph (a <br>, a newline kept by pre-wrap) as U+2028 LINE SEPARATOR,
// not "\n": an editor that kept a text's lines in one paragraph does not
// read back as having made paragraphs of them. White space shows as CSS
// shows it (kept in a pre-wrap editor, collapsed elsewhere). It returns a
// *SelectorError unless exactly one element matches; with EnterLines, sel
// may match several contenteditable elements, read as one editor's
// paragraphs (see EnterLines).
func (t *Tab) Value(ctx context.Context, sel string, opts ...FillOption) (string, error) {
	return t.value(ctx, "", sel, fillOptions(opts))
}

// FillOption changes how Fill enters a text and how Value reads it back.
type FillOption func(*fillOpts)

type fillOpts struct {
	enter bool
	// over: fill only an element that holds exactly this (see Over).
	over *string
}

func fillOptions(opts []FillOption) fillOpts {
	var o fillOpts
	for _, f := range opts {
		f(&o)
	}
	return o
}

// EnterLines is for a rich editor that makes a paragraph of the Enter key
// and not of a newline inserted with the text (Lexical, the WordPress block
// editor, ProseMirror): in a contenteditable element, Fill types the text
// as a person does, each line inserted and Enter pressed between two lines
// (a key down that types "\r", then a key up), waiting after each Enter
// for the page's handlers (the editor moves the caret into the paragraph
// it made); an empty line is an Enter of its own, so a blank line between
// two paragraphs is an empty paragraph, as an inserted "\n\n" makes one
// in the browser's own editing. An editor may make each paragraph its own
// element (the block editor's paragraph blocks): sel then matches the one
// element typed into before the text, and every paragraph after it, and
// Fill and Value read back the text of every contenteditable element sel
// matches, in document order, a paragraph (at least) each. Typing stops,
// and what was typed is read back, when the focus leaves the elements sel
// matches after an Enter. In an input or a textarea the text is inserted
// as it is, its newlines as newlines. Enter is a key some composers send
// a message with: only an editor known to make a paragraph of it gets it.
func EnterLines() FillOption { return func(o *fillOpts) { o.enter = true } }

// Over makes Fill type only into an element that holds exactly v, read as
// Value reads it, when it is focused: the caller read v and decided it may
// be replaced. An element holding anything else (a person typed since, a
// draft the page restored meanwhile) is left as it is, nothing is typed,
// and Fill returns an error wrapping ErrFieldChanged. The look and the
// selection are one turn of the page's script; the text is inserted by
// the next DevTools call, the only moment a key pressed in the tab could
// still come between them.
func Over(v string) FillOption { return func(o *fillOpts) { o.over = &v } }

// ErrFieldChanged means a Fill with Over found the element holding other
// than the caller read: nothing was typed.
var ErrFieldChanged = errors.New("the field holds other than what was read before the fill")

// ValueFrame is Value for the element sel inside the document of the one
// iframe matching frameSel. That document must be of the page's origin: a
// frameSel that does not match exactly one element returns a
// *SelectorError, an element that is not an iframe or whose document is of
// another origin an error wrapping ErrFrameUnreachable.
func (t *Tab) ValueFrame(ctx context.Context, frameSel, sel string, opts ...FillOption) (string, error) {
	if frameSel == "" {
		return "", fmt.Errorf("read value of %q: %w", sel, errNoFrame)
	}
	return t.value(ctx, frameSel, sel, fillOptions(opts))
}

func (t *Tab) value(ctx context.Context, frameSel, sel string, o fillOpts) (string, error) {
	var v valueResult
	err := t.run(ctx, "read value of "+where(frameSel, sel), 0, func(actx context.Context) error {
		return t.eval(actx, jsValue, &v, frameSel, sel, 0, o.enter)
	})
	if err != nil {
		return "", err
	}
	return v.value(frameSel, sel)
}

// errNoFrame refuses an empty frame selector: the frame variants never
// fall back to the main document.
var errNoFrame = &SelectorError{Selector: "", Count: 0}

// where names an element in an error message: sel, or sel in frame frameSel.
func where(frameSel, sel string) string {
	if frameSel == "" {
		return fmt.Sprintf("%q", sel)
	}
	return fmt.Sprintf("%q in frame %q", sel, frameSel)
}

func (v valueResult) value(frameSel, sel string) (string, error) {
	if err := v.check(frameSel); err != nil {
		return "", err
	}
	if v.N != 1 {
		return "", &SelectorError{Selector: sel, Count: v.N}
	}
	if v.Err != "" || v.V == nil {
		return "", fmt.Errorf("value of %s: %s", where(frameSel, sel), v.Err)
	}
	return *v.V, nil
}

// fillSettle is how long Fill lets the page's own handlers run before it
// reads the field back.
const fillSettle = 30

// Fill replaces the content of the one editable element matching sel (an
// input, a textarea, or a contenteditable element such as a rich editor)
// with text: it focuses it, selects everything in it and inserts text as one
// input (as an IME commit does), then reads the element back as Value does
// after the page's handlers ran. The browser's own editing makes a
// paragraph of each "\n" inserted in a contenteditable element, which
// Value reads back as "\n"; an editor that handles the insertion itself
// may keep the lines in one paragraph instead, read back with U+2028
// between them, or drop the newlines: for such an editor pass EnterLines,
// which types the lines with Enter between them. It returns what the page
// holds, which the caller compares with what it meant: a page script can
// change it. Nothing is submitted. It returns a *SelectorError unless
// exactly one element matches, an error wrapping ErrNotClickable for
// an element that is not editable, is disabled or cannot take focus, and,
// with Over, an error wrapping ErrFieldChanged for an element that holds
// other than the caller read; then nothing was typed.
func (t *Tab) Fill(ctx context.Context, sel, text string, opts ...FillOption) (string, error) {
	return t.fill(ctx, "", sel, text, fillOptions(opts))
}

// FillFrame is Fill for the element sel inside the document of the one
// iframe matching frameSel (an editor such as TinyMCE's body): it focuses
// the iframe, then the element, selects everything in it, inserts text and
// reads it back as ValueFrame does. A frameSel that does not match exactly
// one element returns a *SelectorError, an element that is not an iframe or
// whose document is of another origin an error wrapping
// ErrFrameUnreachable; then nothing was typed.
func (t *Tab) FillFrame(ctx context.Context, frameSel, sel, text string, opts ...FillOption) (string, error) {
	if frameSel == "" {
		return "", fmt.Errorf("fill %q: %w", sel, errNoFrame)
	}
	return t.fill(ctx, frameSel, sel, text, fillOptions(opts))
}

func (t *Tab) fill(ctx context.Context, frameSel, sel, text string, o fillOpts) (string, error) {
	var v valueResult
	err := t.run(ctx, "fill "+where(frameSel, sel), 0, func(actx context.Context) error {
		var prep struct {
			frameResult
			N       int    `json:"n"`
			Err     string `json:"err"`
			Empty   bool   `json:"empty"`
			Field   bool   `json:"field"`
			Changed bool   `json:"changed"`
		}
		var over []string // null: no check
		if o.over != nil {
			over = []string{*o.over}
		}
		if err := t.eval(actx, jsPrepareFill, &prep, frameSel, sel, over); err != nil {
			return err
		}
		if err := prep.check(frameSel); err != nil {
			return err
		}
		if prep.N != 1 {
			return &SelectorError{Selector: sel, Count: prep.N}
		}
		if prep.Err != "" {
			return fmt.Errorf("%w: %s: %s", ErrNotClickable, where(frameSel, sel), prep.Err)
		}
		if prep.Changed {
			return fmt.Errorf("fill %s: %w", where(frameSel, sel), ErrFieldChanged)
		}
		lines := []string{text}
		if o.enter && !prep.Field {
			lines = strings.Split(strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(text), "\n")
		}
		for i, line := range lines {
			if i > 0 {
				if err := sendKey(actx, keyEnter); err != nil {
					return err
				}
				// The editor makes its paragraph, and moves the caret
				// into it, in its own handlers; the next line goes
				// only where the ones before went.
				var in struct {
					frameResult
					In bool `json:"in"`
				}
				if err := t.eval(actx, jsSettle, nil, fillSettle); err != nil {
					return err
				}
				if err := t.eval(actx, jsTypingIn, &in, frameSel, sel); err != nil {
					return err
				}
				if !in.In {
					break
				}
			}
			switch {
			case line != "":
				if _, err := chromedp.Call(actx, input.InsertText, input.InsertTextParams{Text: line}); err != nil {
					return err
				}
			case i == 0 && !prep.Empty:
				if err := sendKey(actx, keyBackspace); err != nil {
					return err
				}
			}
		}
		return t.eval(actx, jsValue, &v, frameSel, sel, fillSettle, o.enter)
	})
	if err != nil {
		return "", err
	}
	return v.value(frameSel, sel)
}

// clickPoint is what jsClickPoint finds: the number of visible elements
// matching (and of hidden ones), and the one's centre or why a click there
// would not reach it.
type clickPoint struct {
	N      int     `json:"n"`
	Hidden int     `json:"hidden"`
	X      float64 `json:"x"`
	Y      float64 `json:"y"`
	Err    string  `json:"err"`
	// Moving: a finite animation or transition runs on it or an
	// ancestor.
	Moving bool `json:"moving"`
}

// WaitClickable waits up to timeout (the action timeout when zero) until
// exactly one visible element matches sel (hidden copies do not count)
// and a click at its centre would reach it:
// it has a box, it stands still (no finite animation or transition runs on
// it or an ancestor, and its centre is the same on two looks 50ms apart: a
// panel that slides in is not clicked on its way), nothing covers
// it (a dialog), and it is neither disabled nor aria-disabled (an editor
// disables its button while it saves). It sends no input. When the wait
// ends first it returns the last reason: a *SelectorError or an error
// wrapping ErrNotClickable, with ErrTimeout.
func (t *Tab) WaitClickable(ctx context.Context, sel string, timeout time.Duration) error {
	var last error
	err := t.run(ctx, fmt.Sprintf("wait until %q is clickable", sel), timeout, func(actx context.Context) error {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		var prevX, prevY float64
		seen := false
		for {
			var pt clickPoint
			err := t.eval(actx, jsClickPoint, &pt, sel)
			switch {
			case err != nil && !isStaleContext(err):
				return err
			case err != nil:
				seen = false
			case pt.N != 1:
				last, seen = &SelectorError{Selector: sel, Count: pt.N, Hidden: pt.Hidden}, false
			case pt.Err != "":
				last, seen = fmt.Errorf("%w: %q: %s", ErrNotClickable, sel, pt.Err), false
			case pt.Moving:
				last, seen = fmt.Errorf("%w: %q: it is moving", ErrNotClickable, sel), false
			case seen && pt.X == prevX && pt.Y == prevY:
				return nil
			default:
				last = fmt.Errorf("%w: %q: it is moving", ErrNotClickable, sel)
				prevX, prevY, seen = pt.X, pt.Y, true
			}
			select {
			case <-tick.C:
			case <-actx.Done():
				return actx.Err()
			}
		}
	})
	if errors.Is(err, ErrTimeout) && last != nil {
		// The wait ran out: say what kept the element from being
		// clickable. A cancellation or a lost tab is reported as itself.
		return fmt.Errorf("%w (%w)", last, err)
	}
	return err
}

// ClickOnce clicks the one visible element matching sel exactly once with a real
// mouse press and release at its centre, and never retries. Before any input
// reaches the page it refuses, with a *SelectorError (ErrSelectorAmbiguous),
// a selector that matches zero or several visible elements (hidden ones, a
// layout's copy for another screen, are not considered), and with ErrNotClickable
// an element that is hidden, disabled or covered by another. Once the press
// was dispatched, any failure (timeout, lost tab or browser) returns an error
// wrapping ErrOutcomeUnknown: the click may have landed.
func (t *Tab) ClickOnce(ctx context.Context, sel string) error {
	_, err := t.click(ctx, sel, nil)
	return err
}

// ClickOnceAndWait is ClickOnce followed by a wait for the main-frame
// navigation the click starts (a form submission): it returns the HTTP status
// of the document that commits, once it is parsed. A navigation that does not
// commit in time, fails, or ends on an error page returns an error wrapping
// ErrOutcomeUnknown: the request may have reached the server. It is
// ClickOnceAndLand with the zero LandingSigns.
func (t *Tab) ClickOnceAndWait(ctx context.Context, sel string) (int, error) {
	l, err := t.click(ctx, sel, &LandingSigns{Navigation: true})
	return l.Status, err
}

// click clicks the one element matching sel and, unless l is nil, waits for
// a sign of l.
func (t *Tab) click(ctx context.Context, sel string, l *LandingSigns) (Landing, error) {
	dispatched := false
	var landed Landing
	var guard *sendGuard // see notsent.go
	err := t.run(ctx, fmt.Sprintf("click %q", sel), 0, func(actx context.Context) error {
		var pt clickPoint
		if err := t.eval(actx, jsClickPoint, &pt, sel); err != nil {
			return err
		}
		if pt.N != 1 {
			return &SelectorError{Selector: sel, Count: pt.N, Hidden: pt.Hidden}
		}
		if pt.Err != "" {
			return fmt.Errorf("%w: %q: %s", ErrNotClickable, sel, pt.Err)
		}
		var token string
		if l != nil {
			var err error
			if token, err = t.markLanding(actx, l); err != nil {
				return err
			}
			// The watch outlives the click: SubmissionRequests and
			// CountNew read it after the landing.
			t.arm(l, token)
		}
		if err := actx.Err(); err != nil {
			return err
		}
		if l != nil {
			guard = t.armSendGuard(actx)
		}
		before := t.snapshot()

		dispatched = true
		for _, typ := range []input.DispatchMouseEventType{input.DispatchMouseEventTypeMousePressed, input.DispatchMouseEventTypeMouseReleased} {
			_, err := chromedp.Call(actx, input.DispatchMouseEvent, input.DispatchMouseEventParams{
				Type: typ, X: pt.X, Y: pt.Y, Button: input.MouseButtonLeft, Buttons: 1, ClickCount: 1,
			})
			if err != nil {
				return err
			}
		}
		t.mu.Lock()
		hook := t.clickHook
		t.mu.Unlock()
		if hook != nil {
			hook()
		}
		if l == nil {
			return nil
		}
		var err error
		landed, err = t.waitLanding(actx, l, before, token)
		return err
	})
	switch {
	case guard != nil && err != nil && dispatched:
		return landed, t.proveNotSent(ctx, guard, err)
	case guard != nil:
		t.dropSendGuard(guard)
	}
	if err != nil && dispatched && !errors.Is(err, ErrOutcomeUnknown) {
		err = fmt.Errorf("%w: %w", ErrOutcomeUnknown, err)
	}
	return landed, err
}

// URL returns the URL of the document committed in the tab, as the document
// itself reports it.
func (t *Tab) URL(ctx context.Context) (string, error) {
	var u string
	err := t.run(ctx, "read url", 0, func(actx context.Context) error {
		return t.eval(actx, jsLocation, &u)
	})
	return u, err
}

// Origin returns scheme://host[:port] of the committed document, or "" for
// a document without an http(s) origin (about:blank, an error page).
func (t *Tab) Origin(ctx context.Context) (string, error) {
	u, err := t.URL(ctx)
	if err != nil {
		return "", err
	}
	return Origin(u), nil
}

// Status returns the HTTP status of the main document committed in the tab:
// from the response browserop saw, else from the page's navigation timing,
// else 0 (unknown, or not an HTTP document).
func (t *Tab) Status(ctx context.Context) (int, error) {
	n := t.snapshot()
	if n.status > 0 {
		return n.status, nil
	}
	var s int
	err := t.run(ctx, "read status", 0, func(actx context.Context) error {
		return t.eval(actx, jsNavStatus, &s)
	})
	return s, err
}

// Field is one value Extract reads from each item.
type Field struct {
	// Name keys the value in the result.
	Name string
	// Selector is a CSS selector inside the item; "" is the item itself.
	Selector string
	// Attr is the attribute to read; "" reads the text content.
	Attr string
	// All reads every element the selector matches, in document order,
	// into Found.Values, not only the first.
	All bool
}

// Found is a value Extract read: from the first element that matched the
// field's selector inside the item, with the number of matches, so that a
// missing (0) or doubled (>1) field is visible to the caller.
type Found struct {
	Value   string
	Count   int
	Present bool // an element matched and, for an attribute, has it
	// Values, for a field with All, holds each match's value in document
	// order; "" for a match without the attribute.
	Values []string
}

// Extract reads fields from every element matching itemSel, in document
// order. It never waits.
func (t *Tab) Extract(ctx context.Context, itemSel string, fields []Field) ([]map[string]Found, error) {
	type jsField struct {
		Name string `json:"name"`
		Sel  string `json:"sel"`
		Attr string `json:"attr"`
		All  bool   `json:"all"`
	}
	spec := make([]jsField, len(fields))
	for i, f := range fields {
		spec[i] = jsField{f.Name, f.Selector, f.Attr, f.All}
	}
	var raw []map[string]struct {
		N  int       `json:"n"`
		V  *string   `json:"v"`
		VS []*string `json:"vs"`
	}
	err := t.run(ctx, fmt.Sprintf("read items %q", itemSel), 0, func(actx context.Context) error {
		return t.eval(actx, jsExtract, &raw, itemSel, spec)
	})
	if err != nil {
		return nil, err
	}
	out := make([]map[string]Found, len(raw))
	for i, item := range raw {
		m := make(map[string]Found, len(item))
		for k, v := range item {
			f := Found{Count: v.N, Present: v.V != nil}
			if v.V != nil {
				f.Value = *v.V
			}
			for _, x := range v.VS {
				if x == nil {
					f.Values = append(f.Values, "")
				} else {
					f.Values = append(f.Values, *x)
				}
			}
			m[k] = f
		}
		out[i] = m
	}
	return out, nil
}

// Transition returns how the tab reached its current history entry, as
// Chrome's navigation history records it: "form_submit" for a form's
// response and where it redirected, "link", "typed" for an address the
// person typed, "reload", and so on.
func (t *Tab) Transition(ctx context.Context) (string, error) {
	var tr string
	err := t.run(ctx, "read navigation history", 0, func(actx context.Context) error {
		res, err := chromedp.Call(actx, page.GetNavigationHistory, cdp.Empty{})
		if err != nil {
			return err
		}
		if i := int(res.CurrentIndex); i >= 0 && i < len(res.Entries) && res.Entries[i] != nil {
			tr = string(res.Entries[i].TransitionType)
		}
		return nil
	})
	return tr, err
}

// DocumentMark is where the tab's main frame stood at a moment: how many
// documents it had committed and how many loads had failed.
type DocumentMark struct{ seq, fails uint64 }

// Documents returns a mark for WaitDocument.
func (t *Tab) Documents() DocumentMark {
	n := t.snapshot()
	return DocumentMark{seq: n.seq, fails: n.failSeq}
}

// WaitDocument reports whether the main frame began loading a document
// after mark (Documents): one committed since, one whose request is in
// flight, or one that starts within settle (a click's form submission
// starts its request a moment after the click). When one did, it waits
// (the action timeout) until the newest document is parsed, and returns an
// error for a load that failed or ended on an error page. It sends no
// input.
func (t *Tab) WaitDocument(ctx context.Context, m DocumentMark, settle time.Duration) (bool, error) {
	mark, fails := m.seq, m.fails
	started := func(n *navState) bool { return n.seq > mark || n.docRequest != "" || n.failSeq > fails }
	if now := t.snapshot(); !started(&now) {
		sctx, cancel := context.WithTimeout(ctx, settle)
		err := t.waitNav(sctx, func(n *navState) (bool, error) { return started(n), nil })
		cancel()
		if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			return false, nil // no document began loading
		}
		if err != nil {
			return false, err
		}
	}
	err := t.run(ctx, "wait for the document a step loads", 0, func(actx context.Context) error {
		return t.waitNav(actx, func(n *navState) (bool, error) {
			switch {
			case n.failSeq > fails:
				return false, &chromedp.LoadError{ErrorText: n.failText}
			case n.seq > mark && n.docRequest == "" && n.errorPage:
				return false, &chromedp.LoadError{ErrorText: n.errorText}
			}
			return n.seq > mark && n.docRequest == "" && n.domReady, nil
		})
	})
	return true, err
}

// FetchText fetches rawURL from the current page with its cookies (a
// same-origin GET, not cached) and returns the answer's status and text.
// It is the page's own request, as its scripts would make it; it loads no
// document.
func (t *Tab) FetchText(ctx context.Context, rawURL string) (int, string, error) {
	if err := checkNavURL(rawURL); err != nil {
		return 0, "", err
	}
	var r struct {
		Status int    `json:"status"`
		Body   string `json:"body"`
		Err    string `json:"err"`
	}
	err := t.run(ctx, "fetch "+redactURL(rawURL), 0, func(actx context.Context) error {
		return t.eval(actx, jsFetchText, &r, rawURL)
	})
	if err != nil {
		return 0, "", err
	}
	if r.Err != "" {
		return 0, "", fmt.Errorf("fetch %s: %s", redactURL(rawURL), r.Err)
	}
	return r.Status, r.Body, nil
}

// Quiet reports whether the tab's main frame has no document request in
// flight and has kept its document for at least d, as seen by the calls
// to Quiet: a caller polls it, and each call that finds a request in
// flight or a newer document starts the count again. Nothing is being
// submitted or loaded in a quiet tab, and was not a moment ago.
func (t *Tab) Quiet(d time.Duration) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.nav.docRequest != "" {
		t.quietSince = time.Time{}
		return false
	}
	if t.nav.seq != t.quietSeq || t.quietSince.IsZero() {
		t.quietSeq, t.quietSince = t.nav.seq, time.Now()
	}
	return time.Since(t.quietSince) >= d
}
