// Package operator runs browserop's passes: it takes the lease, reconciles
// unfinished actions, and carries each intent through reserve, preflight,
// perform once, verify and budget commit.
package operator

import (
	"errors"
	"net/http"
	"strings"

	"github.com/browserop/browserop/authority"

	"github.com/browserop/browserop/budgets"
	"github.com/browserop/browserop/ledger"
)

// Errors the operator returns for the outcomes callers branch on.
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
)

// Kind is how one class of error surfaces: the exit code of a command, the
// HTTP status of an API answer and the stable code in JSON errors and MCP
// tool errors.
type Kind struct {
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
)

// kinds is the one table from error to exit code, HTTP status and code.
// The first entry whose error matches (errors.Is) wins.
var kinds = []struct {
	err  error
	kind Kind
}{
	{ErrUsage, Kind{"usage", ExitUsage, http.StatusBadRequest}},
	{ErrForbidden, Kind{"forbidden", ExitUsage, http.StatusForbidden}},
	{authority.ErrDenied, Kind{"forbidden", ExitUsage, http.StatusForbidden}},
	{authority.ErrInvalid, Kind{"usage", ExitUsage, http.StatusBadRequest}},
	{ErrConfig, Kind{"config", ExitUsage, http.StatusInternalServerError}},
	{ledger.ErrNotLedger, Kind{"not_a_ledger", ExitUsage, http.StatusInternalServerError}},
	{ledger.ErrUnsafeFile, Kind{"unsafe_ledger_file", ExitUsage, http.StatusInternalServerError}},
	{ledger.ErrNoLedger, Kind{"no_ledger", ExitUsage, http.StatusInternalServerError}},
	{ledger.ErrClockBehind, Kind{"clock_behind", ExitHardStop, http.StatusConflict}},
	{ErrHardStop, Kind{"hard_stop", ExitHardStop, http.StatusConflict}},
	{ledger.ErrLocked, Kind{"locked", ExitLocked, http.StatusConflict}},
	{ErrNeedsPerson, Kind{"needs_person", ExitNeedsPerson, http.StatusConflict}},
	{ledger.ErrNotFound, Kind{"not_found", ExitUsage, http.StatusNotFound}},
	{ledger.ErrConflict, Kind{"conflict", ExitUsage, http.StatusUnprocessableEntity}},
	{ledger.ErrIllegalTransition, Kind{"illegal_transition", ExitUsage, http.StatusConflict}},
	{ledger.ErrStaleGeneration, Kind{"stale_generation", ExitLocked, http.StatusConflict}},
	{budgets.ErrExhausted, Kind{"budget_exhausted", ExitOK, http.StatusTooManyRequests}},
}

// Internal is the kind of any error the table does not name.
var Internal = Kind{"internal", ExitInternal, http.StatusInternalServerError}

// KindOf classifies err; nil is ExitOK.
func KindOf(err error) Kind {
	if err == nil {
		return Kind{"ok", ExitOK, http.StatusOK}
	}
	for _, k := range kinds {
		if errors.Is(err, k.err) {
			return k.kind
		}
	}
	return Internal
}

// Reason is err's message for a person, without the leading names of the
// error kinds it wraps ("forbidden: ", "usage error: "...), which the
// answer's code already says: "forbidden: forbidden: x" never happens.
func Reason(err error) string {
	msg := err.Error()
	for changed := true; changed; {
		changed = false
		for _, k := range kinds {
			for _, p := range []string{k.err.Error() + ": ", k.kind.Code + ": "} {
				if rest, ok := strings.CutPrefix(msg, p); ok && rest != "" {
					msg, changed = rest, true
				}
			}
		}
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
}
