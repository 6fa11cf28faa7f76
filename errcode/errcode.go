// Package errcode is the one table from an error to how it surfaces: the
// exit code of a command, the HTTP status of an API answer and the stable
// code of JSON errors and MCP tool errors. cmd, api and mcptools map their
// errors through it. It holds the error values that belong to no one layer
// (a usage error, a configuration error, a hard stop...), which every layer
// above it returns; ledger, authority and budgets keep their own sentinels,
// and none of them knows of exit codes or HTTP.
package errcode

import (
	"errors"
	"net/http"
	"strings"

	"github.com/browserop/browserop/authority"
	"github.com/browserop/browserop/budgets"
	"github.com/browserop/browserop/ledger"
)

// Errors that every layer above errcode returns for the outcomes callers
// branch on: the pass, the task service, the configuration and the
// commands.
var (
	// ErrUsage: the request or command line is malformed.
	ErrUsage = errors.New("usage error")
	// ErrConfig: the configuration is invalid.
	ErrConfig = errors.New("configuration error")
	// ErrHardStop: the pass stopped all mutations (identity, blocker,
	// ownership, authority, an unresolved ambiguous action...).
	ErrHardStop = errors.New("hard stop")
	// ErrNeedsPerson: ambiguous actions wait for a person to resolve them.
	ErrNeedsPerson = errors.New("ambiguous actions need a person")
	// ErrWaitingForSite: ambiguous actions wait for their site to settle;
	// a later pass decides them, with no person.
	ErrWaitingForSite = errors.New("ambiguous actions wait for their site to settle")
	// ErrForbidden: the request is outside the task's contract or the
	// configured ceiling, or the task takes no more intents.
	ErrForbidden = errors.New("forbidden")
)

// Class is how one class of error surfaces: the exit code of a command, the
// HTTP status of an API answer and the stable code in JSON errors and MCP
// tool errors.
type Class struct {
	Code string
	Exit int
	HTTP int
}

// The exit codes of every browserop command.
const (
	ExitOK          = 0
	ExitInternal    = 1
	ExitUsage       = 2
	ExitHardStop    = 3
	ExitLocked      = 4
	ExitNeedsPerson = 5
	ExitWaiting     = 6
)

// classes is the one table from error to exit code, HTTP status and code.
// The first entry whose error matches (errors.Is) wins.
var classes = []struct {
	err   error
	class Class
}{
	{ErrUsage, Class{"usage", ExitUsage, http.StatusBadRequest}},
	{ErrForbidden, Class{"forbidden", ExitUsage, http.StatusForbidden}},
	{authority.ErrDenied, Class{"forbidden", ExitUsage, http.StatusForbidden}},
	{authority.ErrInvalid, Class{"usage", ExitUsage, http.StatusBadRequest}},
	{ErrConfig, Class{"config", ExitUsage, http.StatusInternalServerError}},
	{ledger.ErrNotLedger, Class{"not_a_ledger", ExitUsage, http.StatusInternalServerError}},
	{ledger.ErrUnsafeFile, Class{"unsafe_ledger_file", ExitUsage, http.StatusInternalServerError}},
	{ledger.ErrNoLedger, Class{"no_ledger", ExitUsage, http.StatusInternalServerError}},
	{ledger.ErrClockBehind, Class{"clock_behind", ExitHardStop, http.StatusConflict}},
	{ErrHardStop, Class{"hard_stop", ExitHardStop, http.StatusConflict}},
	{ledger.ErrLocked, Class{"locked", ExitLocked, http.StatusConflict}},
	{ErrNeedsPerson, Class{"needs_person", ExitNeedsPerson, http.StatusConflict}},
	{ErrWaitingForSite, Class{"waiting_for_site", ExitWaiting, http.StatusConflict}},
	{ledger.ErrNotFound, Class{"not_found", ExitUsage, http.StatusNotFound}},
	{ledger.ErrConflict, Class{"conflict", ExitUsage, http.StatusUnprocessableEntity}},
	{ledger.ErrIllegalTransition, Class{"illegal_transition", ExitUsage, http.StatusConflict}},
	{ledger.ErrStaleGeneration, Class{"stale_generation", ExitLocked, http.StatusConflict}},
	{budgets.ErrExhausted, Class{"budget_exhausted", ExitOK, http.StatusTooManyRequests}},
}

// Internal is the class of any error the table does not name.
var Internal = Class{"internal", ExitInternal, http.StatusInternalServerError}

// Of classifies err; nil is ExitOK.
func Of(err error) Class {
	if err == nil {
		return Class{"ok", ExitOK, http.StatusOK}
	}
	for _, c := range classes {
		if errors.Is(err, c.err) {
			return c.class
		}
	}
	return Internal
}

// Reason is err's message for a person, without the leading names of the
// error classes it wraps ("forbidden: ", "usage error: "...), which the
// answer's code already says: "forbidden: forbidden: x" never happens.
func Reason(err error) string {
	msg := err.Error()
	for changed := true; changed; {
		changed = false
		for _, c := range classes {
			for _, p := range []string{c.err.Error() + ": ", c.class.Code + ": "} {
				if rest, ok := strings.CutPrefix(msg, p); ok && rest != "" {
					msg, changed = rest, true
				}
			}
		}
	}
	return msg
}

// After is err's message after sentinel's text (and the ": " that
// follows it): the reason alone. Without it, the whole message.
func After(err, sentinel error) string {
	msg := err.Error()
	if i := strings.Index(msg, sentinel.Error()+": "); i >= 0 {
		return msg[i+len(sentinel.Error())+2:]
	}
	return msg
}

// ExitCodes documents the exit codes, in order, for help text and docs.
var ExitCodes = []struct {
	Code    int
	Meaning string
}{
	{ExitOK, "ok"},
	{ExitInternal, "internal error"},
	{ExitUsage, "usage or configuration error (including a ledger file that is not a browserop ledger)"},
	{ExitHardStop, "hard stop: mutations stopped for a reason that is shown"},
	{ExitLocked, "locked: another operator holds the lease"},
	{ExitNeedsPerson, "needs a person: ambiguous actions wait to be resolved"},
	{ExitWaiting, "waiting for a site: ambiguous actions settle by themselves on a later pass (inside the site's settle or surface_within)"},
}
