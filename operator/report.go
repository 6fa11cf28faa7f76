package operator

import "strings"

// logAction writes an action's line: its calendar entry, the action, the
// outcome, and the permalink or the reason. An entry verified in an
// earlier pass is logged at debug level only: it is not news.
func (p *pass) logAction(rep ActionReport) {
	attrs := []any{"run", p.run.ID, "entry", rep.Entry, "action", rep.ActionID, "type", rep.Type, "outcome", rep.Note, "status", rep.Status}
	if rep.Result != "" {
		attrs = append(attrs, "permalink", rep.Result)
	}
	if rep.Reason != "" {
		attrs = append(attrs, "reason", rep.Reason)
	}
	if rep.Note == "already_verified" {
		p.r.log.Debug("action", attrs...)
		return
	}
	p.r.log.Info("action", attrs...)
}

// entryOf is the calendar entry an action's origin names ("calendar:ID",
// or "calendar:ID~N" for a later version), or the origin itself.
func entryOf(origin string) string {
	id, ok := strings.CutPrefix(origin, "calendar:")
	if !ok {
		return origin
	}
	if i := strings.LastIndex(id, "~"); i > 0 {
		id = id[:i]
	}
	return id
}
