package operator

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
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
	rep := ActionReport{ActionID: a.ID, Entry: entry, Type: a.Type, Site: a.Site, Status: a.Status, Result: a.CanonicalResult, Note: note}
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
// which kind of stop. The same stop and cause are recorded on the action
// (recordStop), so that `actions show` says it too; the cause is kept as
// the site's, for the site's later actions this pass holds.
func (p *pass) reportHeld(a ledger.Action, entry string, err error) error {
	rep := ActionReport{ActionID: a.ID, Entry: entry, Type: a.Type, Site: a.Site, Status: a.Status, Note: NoteHeld}
	why := p.stoppedFor(a.Site)
	rep.Reason = "hard stop: " + why
	var cause string
	if c := strings.TrimPrefix(err.Error(), "hard stop: "); c != why {
		if r := []rune(c); len(r) > maxCause {
			c = string(r[:maxCause]) + "…"
		}
		cause = printable(c)
		rep.logReason = rep.Reason
		rep.Reason += " (" + cause + ")"
	}
	if _, ok := p.siteCauses[a.Site]; !ok && p.stopped == "" {
		p.siteCauses[a.Site] = cause
	}
	p.add(rep)
	return p.recordStop(a, why, cause)
}

// recordStop records on a planned action the hard stop that holds it in
// this pass: why, as stoppedFor names it, and its cause as the pass
// reported it ("" for none). An action that is not planned (one left
// executing when the lease was lost) is not held by the stop: nothing is
// recorded. Like a transition, it is recorded even while the pass is
// being cancelled.
func (p *pass) recordStop(a ledger.Action, why, cause string) error {
	if a.ID == "" || a.Status != ledger.Planned || why == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(p.ctx), 30*time.Second)
	defer cancel()
	_, err := p.r.db.RecordStop(ctx, p.fence(), a.ID, ledger.Stop{Kind: why, Cause: cause, RunID: p.run.ID})
	return err
}

// recordStopOnReserved records the stop that holds an intent this pass
// does not even reserve (its site stopped earlier in the pass) on the
// action already reserved for it, if one is and it is planned, with the
// cause its site's stop was reported with: what `actions show` says is
// then this pass's stop, not an earlier one's.
func (p *pass) recordStopOnReserved(li ledger.Intent, why string) error {
	key, err := li.Key()
	if err != nil {
		return err
	}
	a, err := p.r.db.ActionByKey(p.ctx, key)
	if errors.Is(err, ledger.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	var cause string
	if p.stopped == "" {
		cause = p.siteCauses[a.Site]
	}
	return p.recordStop(a, why, cause)
}

// nameSite names site on each report of the summary from index from on
// that names none (a budget skip, an intent a stop left unattempted):
// `browserop runs` says which site each is for.
func (p *pass) nameSite(from int, site string) {
	for i := from; i < len(p.sum.Actions); i++ {
		if p.sum.Actions[i].Site == "" {
			p.sum.Actions[i].Site = site
		}
	}
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
	if reason := cmp.Or(rep.logReason, rep.Reason); reason != "" {
		attrs = append(attrs, "reason", reason)
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
