package operator

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

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
	p.add(rep)
}

// add puts rep in the pass's summary, counts its note and logs it.
func (p *pass) add(rep ActionReport) {
	p.sum.Actions = append(p.sum.Actions, rep)
	p.sum.count(Count(rep.Note))
	p.logAction(rep)
}

// reportHeld reports an action held by a hard stop that err caused (a
// failure before the click): the stop, and what err says of it (which
// selector, which page, who is signed in), control characters escaped
// and cut at maxCause, so that `run` and its log say why, not only
// which kind of stop.
func (p *pass) reportHeld(a ledger.Action, entry string, err error) {
	rep := ActionReport{ActionID: a.ID, Entry: entry, Type: a.Type, Status: a.Status, Note: NoteHeld}
	rep.Reason = "hard stop: " + p.stoppedFor(a.Site)
	if cause := strings.TrimPrefix(err.Error(), "hard stop: "); cause != p.stoppedFor(a.Site) {
		if r := []rune(cause); len(r) > maxCause {
			cause = string(r[:maxCause]) + "…"
		}
		rep.Reason += " (" + printable(cause) + ")"
	}
	p.add(rep)
}

// maxCause bounds the cause a held action's reason quotes.
const maxCause = 400

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
// escaped as Go escapes them in a quoted string, and so are backslashes
// (so an escape always reads as one); quotes are left as they are, for a
// reason quotes the selectors it names.
func printable(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '"':
			b.WriteByte('"')
		case r == '\\' || !strconv.IsPrint(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}
