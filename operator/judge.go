package operator

import (
	"fmt"
	"slices"
	"strings"

	"github.com/browserop/browserop/authority"
	"github.com/browserop/browserop/calendar"
	"github.com/browserop/browserop/sites"
)

// JudgeCalendar refuses, at load, the entries that can be judged without a
// browser: an entry naming a site that has no adapter, one whose media
// the site does not take (sites.MediaLimits: too many, a type it does not
// take, a file too large, or media on an action that takes none), one
// whose entry fields the site's action does not declare as set
// (sites.Adapter.RefuseFields), or
// whose target is outside the authority its task would get (its site's
// hosts, within the ceiling: the check the pass makes before the click).
// Each becomes a problem naming its file and line (a media item's own
// line); the other entries are untouched, so a bad entry never stops the
// rest of the calendar. Passes judge the calendar so; `browserop doctor`
// shows the same verdict.
func JudgeCalendar(cal calendar.Calendar, adapters []sites.Adapter, ceiling []string) calendar.Calendar {
	r := &Runner{sites: map[string]sites.Adapter{}}
	var as []authority.Site
	for _, a := range adapters {
		r.sites[a.Name()] = a
		as = append(as, a)
	}
	r.ceiling, r.ceilingErr = authority.NewCeiling(ceiling, as)
	return r.judge(cal)
}

func (r *Runner) judge(cal calendar.Calendar) calendar.Calendar {
	out := calendar.Calendar{Problems: cal.Problems}
	for _, e := range cal.Entries {
		if prob := r.refuse(e); prob != nil {
			out.Problems = append(out.Problems, prob)
			continue
		}
		out.Entries = append(out.Entries, e)
	}
	return out
}

// refuse returns why an entry cannot be performed, or nil.
func (r *Runner) refuse(e calendar.Entry) *calendar.Error {
	if why := r.refuseEntry(e); why != "" {
		return &calendar.Error{File: e.File, Line: e.Line, EntryID: e.ID, Problem: why}
	}
	if mp := calendar.RefuseMedia(r.sites[e.Site], e); mp != nil {
		return &calendar.Error{File: e.File, Line: mp.At.Line, EntryID: e.ID, Problem: mp.Error()}
	}
	if name, err := r.sites[e.Site].RefuseFields(e.Type.Kind, e.Fields); err != nil {
		line := e.Line
		if l, ok := e.FieldsAt[name]; ok {
			line = l
		}
		return &calendar.Error{File: e.File, Line: line, EntryID: e.ID, Problem: err.Error() + "; it is never performed"}
	}
	return nil
}

// refuseEntry returns why an entry's site or target cannot be used, or "".
func (r *Runner) refuseEntry(e calendar.Entry) string {
	site, ok := r.sites[e.Site]
	if !ok {
		return fmt.Sprintf("site %q has no adapter (configured: %s)", e.Site, strings.Join(r.siteNames(), ", "))
	}
	if e.Target == "" {
		return ""
	}
	// The same check the pass makes right before the click (package
	// authority, as refuseOutsideAuthority does), over the contract the
	// entry's task gets: the site's own hosts and the entry's capability.
	if r.ceilingErr != nil {
		return "" // every action is refused at perform time, with the reason
	}
	c := contractFor(site, e.Type.Capability())
	if err := r.ceiling.Check(authority.Task{Capabilities: c.Capabilities, Domains: c.Domains}, site, e.Target, e.Type.Capability()); err != nil {
		domains := slices.Sorted(slices.Values(c.Domains))
		return fmt.Sprintf("target %q is outside the authority of site %q (its domains: %s): %s; it is never performed",
			e.Target, e.Site, strings.Join(domains, ", "), authorityReason(err))
	}
	return ""
}
