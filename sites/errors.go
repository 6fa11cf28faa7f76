package sites

import (
	"errors"
	"fmt"

	"github.com/browserop/browserop/browser"
)

// Errors the operator branches on. Test them with errors.Is and errors.As.
var (
	// ErrReadBackMismatch means the field read back after Fill differs
	// from the intended text. It is definitive: nothing was submitted.
	ErrReadBackMismatch = errors.New("read back differs from the intended text")

	// ErrOutcomeUnknown is browser.ErrOutcomeUnknown: the mutation was
	// dispatched and its effect could not be established. The action is
	// ambiguous and must be reconciled, never retried.
	ErrOutcomeUnknown = browser.ErrOutcomeUnknown

	// ErrNotSent is browser.ErrNotSent: the committing click was
	// dispatched and it is proven that nothing left the page from the
	// press until its document was torn down. It does not wrap
	// ErrOutcomeUnknown: the outcome is definitive, nothing was submitted,
	// and the action may be performed again. The tab it was proven in is
	// left blocked on about:blank, for the caller to close.
	ErrNotSent = browser.ErrNotSent

	// ErrSelectorAmbiguous is browser.ErrSelectorAmbiguous: a selector that
	// must name one element named zero or several. Nothing was clicked.
	ErrSelectorAmbiguous = browser.ErrSelectorAmbiguous

	// ErrAlreadyDone means a like or follow control already shows the done
	// state, so Submit clicked nothing (a click would undo it). The
	// operator takes it as done: the effect is in place, read right after
	// the preflight checked who is signed in (docs/operator.md).
	ErrAlreadyDone = errors.New("control already in the done state")

	// ErrUnsupported means the adapter has no configuration for the kind.
	ErrUnsupported = errors.New("action kind not supported by this site")

	// ErrStepFailed means preparation did not work: the page never became
	// ready, a step before the committing click (opening a dialog or a
	// confirmation panel) did not show what it should. It is definitive:
	// nothing was published, because the committing click was not sent.
	ErrStepFailed = errors.New("a step before the committing click failed")

	// ErrSentBeforeClick means that while the action was prepared, before
	// its committing click, the page sent what could carry the submission
	// (see Declarative.Fill): an adapter's step may have submitted it. The
	// committing click is not sent; whatever else went wrong, the outcome
	// is unknown and the action must be reconciled, never performed again
	// as if nothing was sent.
	ErrSentBeforeClick = errors.New("the page may have sent the submission before the committing click")

	// ErrUploadFailed means a media upload failed or did not finish in
	// time. It is a failed preparation (errors.Is(err, ErrStepFailed)
	// holds): the committing click was not sent, nothing was published.
	ErrUploadFailed = fmt.Errorf("%w: a media upload failed", ErrStepFailed)

	// ErrUnverifiable means the site's search could not compare a part the
	// intent fixes (Declarative.Uncompared): a reply to a comment where the
	// search reads the page as every comment's parent. It is a failed
	// preparation (errors.Is(err, ErrStepFailed) holds), returned by Fill
	// before anything is typed: nothing was published, rather than a
	// publication no search could ever verify (or that the site's form
	// would make elsewhere: a page's comment form answers the page).
	ErrUnverifiable = fmt.Errorf("%w: the site's search could not verify this action", ErrStepFailed)
)

// RefusalKind names how a site refused a submission.
type RefusalKind string

// The refusal kinds an adapter declares.
const (
	// RefusedDuplicate: the site refused the text as a duplicate of an
	// existing item ("Duplicate comment detected"). The site says it holds
	// the item: that is evidence of presence (the item may be this
	// submission's own, answered a second time), never of absence, so
	// Submit returns it wrapped in ErrOutcomeUnknown and verification
	// decides.
	RefusedDuplicate RefusalKind = "duplicate"
	// RefusedRateLimit: the site refused because the account acts too
	// often ("you are posting too quickly", HTTP 429).
	RefusedRateLimit RefusalKind = "rate_limit"
	// RefusedLogin: the site answered the submission with its sign-in
	// screen: the session was lost, nothing was accepted.
	RefusedLogin RefusalKind = "login"
	// RefusedValidation: the site refused the content (too long, empty,
	// not allowed), with its own message.
	RefusedValidation RefusalKind = "validation"
)

// RefusalKinds lists every refusal kind, in documentation order.
var RefusalKinds = []RefusalKind{RefusedDuplicate, RefusedRateLimit, RefusedLogin, RefusedValidation}

// Refusal is a refusal screen or status the adapter declares, found on
// the page or the response the click led to. Submit returns it as itself
// only when it proves the site refused this submission: it answers the
// one request the click sent (see Declarative.Submit) and is not a
// duplicate. The click was sent, but nothing was created, so the outcome
// is definitive. Otherwise Submit returns an error wrapping
// ErrOutcomeUnknown with the Refusal in its chain and Doubt set: the
// outcome is unknown and verification decides. Message is the site's own
// message, excerpted and escaped, for a person.
type Refusal struct {
	Kind    RefusalKind
	Status  int
	Message string
	// Detail says which declared rule matched.
	Detail string
	// Doubt says, in a fixed phrase, why this refusal does not prove
	// that nothing was created ("2 requests of the submission were seen",
	// "the site says it already holds the item"); "" when it does.
	Doubt string
}

// Error says how the site refused.
func (r *Refusal) Error() string {
	msg := "the site refused the submission: " + string(r.Kind)
	if r.Status != 0 {
		msg += fmt.Sprintf(" (status %d)", r.Status)
	}
	if r.Message != "" {
		msg += ": " + r.Message
	}
	return msg
}

// AsRefusal returns the Refusal in err's chain, or nil.
func AsRefusal(err error) *Refusal {
	var r *Refusal
	if errors.As(err, &r) {
		return r
	}
	return nil
}

// HardStopKind names why the run must stop mutating.
type HardStopKind string

// The kinds of HardStop. The first four come from a site's blocker screens.
const (
	StopLogin             HardStopKind = "login"
	StopCaptcha           HardStopKind = "captcha"
	StopRateLimit         HardStopKind = "rate_limit"
	StopRestricted        HardStopKind = "restricted"
	StopIdentityMismatch  HardStopKind = "identity_mismatch"
	StopOffsite           HardStopKind = "offsite"
	StopSelectorAmbiguous HardStopKind = "selector_ambiguous"
	StopStateUnknown      HardStopKind = "state_unknown"
	StopTarget            HardStopKind = "target"
)

// HardStop means no further mutation may happen in this run: a blocker
// screen, the wrong signed-in account, a page outside the site's origins, an
// ambiguous selector or control state. Detail is for a person; it never holds
// page text beyond a short excerpt. Err, when set, is the underlying error
// (for example a *browser.SelectorError).
type HardStop struct {
	Kind   HardStopKind
	Detail string
	Err    error
}

// Error says what stopped the run.
func (h *HardStop) Error() string {
	msg := "hard stop: " + string(h.Kind)
	if h.Detail != "" {
		msg += ": " + h.Detail
	}
	if h.Err != nil {
		msg += ": " + h.Err.Error()
	}
	return msg
}

// Unwrap returns the underlying error.
func (h *HardStop) Unwrap() error { return h.Err }

func hardStop(kind HardStopKind, err error, format string, args ...any) *HardStop {
	return &HardStop{Kind: kind, Detail: fmt.Sprintf(format, args...), Err: err}
}

// AsHardStop returns the HardStop in err's chain, or nil.
func AsHardStop(err error) *HardStop {
	var h *HardStop
	if errors.As(err, &h) {
		return h
	}
	return nil
}

// ambiguous marks err as happening after a submission was dispatched: the
// effect may have happened. It keeps err's own chain (a HardStop stays one).
func ambiguous(err error) error {
	if err == nil || errors.Is(err, ErrOutcomeUnknown) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrOutcomeUnknown, err)
}
