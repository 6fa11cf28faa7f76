package verify

import (
	"strings"
	"time"

	"github.com/browserop/browserop/kind"
)

// State is a like or follow control's state, read from the target's page.
type State struct {
	// Value is the control's state as read, e.g. "liked" or "like".
	Value string
	// Done is the Value that means the action's effect is in place, e.g.
	// "liked" or "following".
	Done string
	// NotDone is the Value that means it is not, e.g. "like" or "follow".
	NotDone string
	// Fresh reports whether Value was read from a page loaded after the
	// action, not from the page the action was performed on.
	Fresh bool
	// ObservedAt is when Value was read.
	ObservedAt time.Time
	// URL is the page the control was read from; it must be the intent's
	// Target (compared by NormalizeURL).
	URL string
}

const (
	reasonStateDone      = "fresh control shows the done state"
	reasonStateNotDone   = "fresh control shows the not-done state after the settle time"
	reasonStateSettling  = "control shows the not-done state inside the settle window"
	reasonStateStale     = "control state was not read from a page loaded after the action"
	reasonStateUnknown   = "control shows neither the done nor the not-done state"
	reasonStateLabels    = "done and not-done states are not configured or are equal"
	reasonStateOtherPage = "control state was read from a page other than the target"
	reasonStateNoTarget  = "intent has no absolute http(s) target URL"
	reasonStateWrongType = "intent type is not like or follow"
	reasonStateNoTime    = "intent has no execution time"
)

// ClassifyState decides what a control's state proves about a like or a
// follow. It returns Verified (URL is the normalized target) when a Fresh
// state read from the target's page shows Done; Absent when a Fresh state
// shows NotDone and was observed at or after NotBefore (or the later
// SettleFrom) + Settle, and, when the click may surface late
// (Intent.MaySurface), at or after the site's bound (Options.SurfaceWithin);
// and
// Ambiguous otherwise, including for an invalid intent, unconfigured state
// labels, a state read elsewhere than the target, or an unrecognized value.
// Values are compared exactly after trimming surrounding spaces.
func ClassifyState(in Intent, st State, o Options) Verdict {
	switch in.Kind {
	case kind.Like, kind.Follow:
	default:
		return Verdict{Outcome: Ambiguous, Reason: reasonStateWrongType}
	}
	target := NormalizeURL(in.Target)
	if !isAbsoluteHTTP(target) {
		return Verdict{Outcome: Ambiguous, Reason: reasonStateNoTarget}
	}
	done, notDone := strings.TrimSpace(st.Done), strings.TrimSpace(st.NotDone)
	if done == "" || notDone == "" || done == notDone {
		return Verdict{Outcome: Ambiguous, Reason: reasonStateLabels}
	}
	if NormalizeURL(st.URL) != target {
		return Verdict{Outcome: Ambiguous, Reason: reasonStateOtherPage}
	}
	if !st.Fresh {
		return Verdict{Outcome: Ambiguous, Reason: reasonStateStale}
	}
	switch strings.TrimSpace(st.Value) {
	case done:
		return Verdict{Outcome: Verified, URL: target, URLs: []string{target}, Reason: reasonStateDone}
	case notDone:
		if in.NotBefore.IsZero() {
			return Verdict{Outcome: Ambiguous, Reason: reasonStateNoTime}
		}
		if st.ObservedAt.Before(in.SettleStart().Add(max(o.Settle, 0))) {
			return Verdict{Outcome: Ambiguous, Reason: reasonStateSettling, Settling: true}
		}
		return absentUnlessSurfacing(in, st.ObservedAt, o, reasonStateNotDone)
	default:
		return Verdict{Outcome: Ambiguous, Reason: reasonStateUnknown}
	}
}
