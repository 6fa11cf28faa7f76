package sites

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode"

	"github.com/browserop/browserop/browser"
)

// messageWait bounds the wait for a refusal's message to show: a page that
// answered with a refusal status may render its message a moment later.
const messageWait = 2 * time.Second

// refusalQuiet is how long a refusal that answers one request waits, once
// read, for the page to send the submission again (an editor's retry with
// a fresh token) before it counts as proof.
const refusalQuiet = 500 * time.Millisecond

// Submit clicks the action's committing control once and waits for the
// landing the action declares (see LandedSpec). For like and follow it
// first reads the control: already done is ErrAlreadyDone (a click would
// undo it), an unknown state a HardStop; both happen before any click. A
// selector that does not name one clickable element is a HardStop of kind
// selector_ambiguous, also before any click. After the click, an answer
// the refusals in effect (the action's when it declares any, even none,
// else the site's) recognise is a *Refusal, returned as itself only when
// it proves nothing was created (see proven); otherwise, and for a wait
// that times out, a failed request or a 5xx answer, the error wraps
// ErrOutcomeUnknown (with the *Refusal in its chain when one matched);
// except a landing wait that timed out in a tab that proved the click
// sent nothing (browser.Tab.AllowTeardown), which is ErrNotSent, as is.
func (d *Declarative) Submit(ctx context.Context, tab *browser.Tab, in Intent) error {
	a, err := d.action(in.Kind)
	if err != nil {
		return err
	}
	if a.State != nil {
		state, done, err := d.readState(ctx, tab, a.State)
		if err != nil {
			return err
		}
		if done {
			return fmt.Errorf("%w: %s shows %q", ErrAlreadyDone, in.Kind, state)
		}
	}
	// Wait until the click can reach the control: an editor disables its
	// button while it saves, a panel slides in over its page. A control
	// that never becomes clickable is refused as the click would be.
	if err := tab.WaitClickable(ctx, a.Submit.Selector, 0); err != nil {
		return submitRefused(err)
	}
	rules := d.refusalsOf(a)
	landing := signsOf(a.Landed)
	for _, r := range rules {
		if r.Selector != "" {
			// What the page shows already is no answer to this click.
			landing.Watch = append(landing.Watch, r.Selector)
		}
		if r.Text != "" {
			// Nor is a message left from before, whatever it says.
			landing.Watch = append(landing.Watch, r.Message)
		}
	}
	if w := tab.ArmedSends(); w != nil {
		// The preparation's watch, looked at once more right before the
		// click: something sent since Fill returned (a key's late effect)
		// leaves the click unsent and the outcome unknown.
		why := sentBefore(ctx, w, signsOf(a.Landed))
		w.Stop()
		if why != "" {
			return fmt.Errorf("%w: %w: %s; the committing click was not sent", ErrOutcomeUnknown, ErrSentBeforeClick, why)
		}
	}
	landed, err := tab.ClickOnceAndLand(ctx, a.Submit.Selector, landing)
	if err != nil {
		if errors.Is(err, browser.ErrOutcomeUnknown) || errors.Is(err, browser.ErrNotSent) {
			// Unknown, or proven not sent (ErrNotSent): either way as the
			// browser said, never a refusal before the click.
			return err
		}
		return submitRefused(err)
	}
	// The click was sent: from here every failure is ambiguous, except a
	// refusal the site's answer proves.
	ref, err := d.refusal(ctx, tab, rules, landed.Status)
	if err != nil {
		return ambiguous(err)
	}
	if ref != nil {
		return proven(ctx, tab, landed, ref)
	}
	if landed.Status >= 400 {
		// An error the adapter does not declare a refusal proves nothing:
		// the site may have committed before it failed, or may retry.
		return fmt.Errorf("%w: the site answered %d to the submission", ErrOutcomeUnknown, landed.Status)
	}
	return nil
}

// refusalsOf returns the refusals in effect for an action: its own when it
// declares any (an empty list included: none), else the site's. They are
// never merged: an action that declares none (an editor that sends its
// request again by itself) has no answer that proves anything.
func (d *Declarative) refusalsOf(a *ActionSpec) []RefusalSpec {
	if a.Refusals != nil {
		return a.Refusals
	}
	return d.spec.Refusals
}

// proven returns ref when it proves that the site created nothing: it is
// the site's answer to the one request of the submission (landed.Doubt:
// exactly one request that could carry it was sent, before and for a
// moment after the answer, and the status and page answer it, over
// HTTP/1.x on a fresh connection, from neither a cache nor a service
// worker), and it is not a duplicate (the site saying it holds the item
// is evidence that it exists). Otherwise it returns an error wrapping
// ErrOutcomeUnknown with ref, its Doubt set, in the chain: the action is
// verified as after any uncertain click.
func proven(ctx context.Context, tab *browser.Tab, landed browser.Landing, ref *Refusal) error {
	doubt := landed.Doubt(tab.SubmissionRequests())
	if doubt == "" && ref.Kind != RefusedDuplicate {
		select {
		case <-time.After(refusalQuiet):
			doubt = landed.Doubt(tab.SubmissionRequests())
		case <-ctx.Done():
			doubt = "the pass ended before the refusal was confirmed"
		}
	}
	switch {
	case doubt != "":
		ref.Doubt = doubt
	case ref.Kind == RefusedDuplicate:
		ref.Doubt = "the site says it already holds the item"
	default:
		return ref
	}
	return fmt.Errorf("%w: %s, so the refusal proves nothing: %w", ErrOutcomeUnknown, ref.Doubt, ref)
}

// submitRefused makes a refusal before the click (a selector that does
// not name one clickable control) a HardStop; other errors stay as they
// are.
func submitRefused(err error) error {
	if errors.Is(err, browser.ErrSelectorAmbiguous) || errors.Is(err, browser.ErrNotClickable) {
		return hardStop(StopSelectorAmbiguous, err, "submit control")
	}
	return err
}

// signsOf turns a validated LandedSpec into what the browser waits for.
func signsOf(l *LandedSpec) browser.LandingSigns {
	if l == nil {
		return browser.LandingSigns{Navigation: true}
	}
	out := browser.LandingSigns{Navigation: l.Navigation, Selector: l.Selector, URLChange: l.URLChange}
	if r := l.Response; r != nil {
		out.Response = &browser.ResponseMatch{Method: r.Method, URL: regexp.MustCompile(r.URL)}
		if r.Body != "" {
			out.Response.Body = regexp.MustCompile(r.Body)
		}
		if r.Answer != "" {
			out.Response.Answer = regexp.MustCompile(r.Answer)
		}
	}
	return out
}

// refusal checks the refusals in effect (refusalsOf), in order, against
// what the submission landed on: the landing's status and the page. A
// rule's selector matches only a visible element the page drew after the
// click (a new document's, or one that was not there at the press: an
// old error message is no answer to this click). The first rule that
// matches is the refusal, with the site's message when it declares where
// that is.
func (d *Declarative) refusal(ctx context.Context, tab *browser.Tab, rules []RefusalSpec, status int) (*Refusal, error) {
	for _, r := range rules {
		if r.Status != 0 && r.Status != status {
			continue
		}
		if r.Status == 0 && status >= 500 {
			// A server error may come after the site wrote (a fatal error
			// in a hook that runs after the insert): a screen that looks
			// like a refusal proves nothing then, unless its own status
			// is declared.
			continue
		}
		detail := fmt.Sprintf("status %d", status)
		if r.Selector != "" {
			n, err := tab.CountNew(ctx, r.Selector)
			if err != nil {
				return nil, err
			}
			if n == 0 {
				continue
			}
			detail = fmt.Sprintf("%q on the page", r.Selector)
			if r.Status != 0 {
				detail += fmt.Sprintf(" with status %d", status)
			}
		}
		ref := &Refusal{Kind: RefusalKind(r.Kind), Status: status, Detail: detail}
		if r.Text != "" {
			msg, err := newMessage(ctx, tab, r.Message, compiled(r.Text))
			if err != nil {
				return nil, err
			}
			if msg == "" {
				continue
			}
			ref.Detail += fmt.Sprintf(", its message matching %q", r.Text)
			ref.Message = msg
			return ref, nil
		}
		if r.Message != "" {
			ref.Message = d.message(ctx, tab, r.Message)
		}
		return ref, nil
	}
	return nil, nil
}

// newMessage waits a moment (messageWait) for a visible element matching
// sel, drawn after the click, whose text matches re, and returns that text
// made one line; "" when none shows. An element the page showed before the
// press is never read: an old warning is no answer to this submission.
func newMessage(ctx context.Context, tab *browser.Tab, sel string, re *regexp.Regexp) (string, error) {
	deadline := time.Now().Add(messageWait)
	for {
		texts, err := tab.TextsNew(ctx, sel)
		if err != nil {
			return "", err
		}
		for _, s := range texts {
			if msg := cleanMessage(s); re.MatchString(msg) {
				return msg, nil
			}
		}
		if time.Now().After(deadline) {
			return "", nil
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

// message reads a refusal's message, waiting a moment for it to show; a
// message that never shows is "".
func (d *Declarative) message(ctx context.Context, tab *browser.Tab, sel string) string {
	if err := tab.WaitVisible(ctx, sel, messageWait); err != nil {
		return ""
	}
	texts, err := tab.Texts(ctx, sel)
	if err != nil || len(texts) == 0 {
		return ""
	}
	return cleanMessage(texts[0])
}

// cleanMessage makes a site's message one short line: whitespace runs
// become one space, control characters go, and it is cut at 200
// characters.
func cleanMessage(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case unicode.IsSpace(r):
			return ' '
		case unicode.IsControl(r) || r == '\u2028' || r == '\u2029':
			return -1
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return s
}
