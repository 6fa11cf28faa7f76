package operator

import (
	"strconv"
	"strings"

	"github.com/browserop/browserop/ledger"
)

// problem records a problem of the pass (a calendar file, an entry, the
// planner) in its summary and log.
func (p *pass) problem(msg string) {
	p.sum.Problems = append(p.sum.Problems, msg)
	p.r.log.Warn("problem", "detail", msg)
}

// report records what became of an action in the pass's summary (counted
// under note) and logs it; a held action's reason is the hard stop.
func (p *pass) report(a ledger.Action, entry string, note Note) {
	rep := ActionReport{ActionID: a.ID, Entry: entry, Type: a.Type, Status: a.Status, Result: a.CanonicalResult, Note: note}
	if a.Status != ledger.Verified {
		rep.Reason = a.FailureReason
	}
	if rep.Reason == "" && note == NoteHeld {
		rep.Reason = "hard stop: " + p.stoppedFor(a.Site)
	}
	p.sum.Actions = append(p.sum.Actions, rep)
	p.sum.count(Count(note))
	p.logAction(rep)
}

// logAction writes an action's line: its calendar entry, the action, the
// outcome, and the permalink or the reason. An entry verified in an
// earlier pass, or still held for moderation, is logged at debug level
// only: it is not news.
func (p *pass) logAction(rep ActionReport) {
	attrs := []any{"run", p.run.ID, "entry", rep.Entry, "action", rep.ActionID, "type", rep.Type, "outcome", rep.Note, "status", rep.Status}
	if rep.Result != "" {
		attrs = append(attrs, "permalink", rep.Result)
	}
	if rep.Reason != "" {
		attrs = append(attrs, "reason", rep.Reason)
	}
	if rep.Note == NoteAlreadyVerified || rep.Note == NoteAwaitingModeration {
		p.r.log.Debug("action", attrs...)
		return
	}
	p.r.log.Info("action", attrs...)
}

// entryOf is the calendar entry an action's origin names ("calendar:ID",
// or "calendar:ID~N" for a later version), or the origin itself.
func entryOf(origin string) string {
	id, ok := strings.CutPrefix(origin, ledger.KeyCalendar)
	if !ok {
		return origin
	}
	if i := strings.LastIndex(id, "~"); i > 0 {
		id = id[:i]
	}
	return id
}

// printable is text a site or a page wrote (a refusal's message, a step's
// detail) fit for a reason a person reads in a terminal or a log: control
// characters, bidirectional overrides and bytes that are not UTF-8 are
// escaped as Go escapes them in a quoted string (so are quotes and
// backslashes), without the surrounding quotes.
func printable(s string) string {
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}
