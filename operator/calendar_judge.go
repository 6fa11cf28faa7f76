package operator

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/browserop/browserop/authority"
	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/media"
	"github.com/browserop/browserop/sites"
)

// JudgeCalendar refuses, at load, the entries that can be judged without a
// browser: an entry naming a site that has no adapter, one whose media
// the site does not take (sites.MediaLimits: too many, a type it does not
// take, a file too large, or media on an action that takes none), or
// whose target is outside the authority its task would get (its site's
// hosts, within the ceiling: the check the pass makes before the click).
// Each becomes a problem naming its file and line (a media item's own
// line); the other entries are untouched, so a bad entry never stops the
// rest of the calendar. Passes judge the calendar so; `browserop doctor`
// shows the same verdict.
func JudgeCalendar(cal Calendar, adapters []sites.Adapter, ceiling []string) Calendar {
	r := &Runner{sites: map[string]sites.Adapter{}}
	var as []authority.Site
	for _, a := range adapters {
		r.sites[a.Name()] = a
		as = append(as, a)
	}
	r.ceiling, r.ceilingErr = authority.NewCeiling(ceiling, as)
	return r.judge(cal)
}

func (r *Runner) judge(cal Calendar) Calendar {
	out := Calendar{Problems: cal.Problems}
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
func (r *Runner) refuse(e Entry) *CalendarError {
	if why := r.refuseEntry(e); why != "" {
		return &CalendarError{File: e.File, Line: e.Line, EntryID: e.ID, Problem: why}
	}
	if mp := refuseMedia(r.sites[e.Site], e); mp != nil {
		return &CalendarError{File: e.File, Line: mp.at.line, EntryID: e.ID, Problem: mp.Error()}
	}
	return nil
}

// refuseEntry returns why an entry's site or target cannot be used, or "".
func (r *Runner) refuseEntry(e Entry) string {
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
	c := contractFor(site, e.Capability())
	if err := r.ceiling.Check(authority.Task{Capabilities: c.Capabilities, Domains: c.Domains}, site, e.Target, e.Capability()); err != nil {
		domains := slices.Sorted(slices.Values(c.Domains))
		return fmt.Sprintf("target %q is outside the authority of site %q (its domains: %s): %s; it is never performed",
			e.Target, e.Site, strings.Join(domains, ", "), authorityReason(err))
	}
	return ""
}

// refuseMedia returns why site does not take the media of e under its
// limits (sites.MediaLimits of the kind each action is performed as: a
// thread's first part without a target as a post, its other parts as
// thread parts), naming the item at fault and where it was named; nil
// when it takes them.
func refuseMedia(site sites.Adapter, e Entry) *mediaProblem {
	k, _ := kind.OfRequest(e.Type)
	if k != kind.ThreadPart {
		return checkMediaLimits(site, k, e.Media, e.mediaAt)
	}
	for i, items := range e.PartMedia {
		pk := kind.ThreadPart
		if i == 0 && e.Target == "" {
			pk = kind.Post
		}
		var at []mediaSource
		if i < len(e.partMediaAt) {
			at = e.partMediaAt[i]
		}
		if mp := checkMediaLimits(site, pk, items, at); mp != nil {
			return mp
		}
	}
	return nil
}

// checkMediaIndex drops the "media[i]: " a MediaLimits error starts with:
// the problem names the item already.
var checkMediaIndex = regexp.MustCompile(`^media\[\d+\]: `)

// checkMediaLimits checks the media of one action of kind k against the
// site's limits. The item at fault is the first whose list up to it is
// refused: the first over the count, or the first of a type or size the
// site does not take.
func checkMediaLimits(site sites.Adapter, k kind.Kind, items []media.Item, at []mediaSource) *mediaProblem {
	l := site.MediaLimits(k)
	err := l.Check(items)
	if err == nil {
		return nil
	}
	i := 0
	for i < len(items)-1 && l.Check(items[:i+1]) == nil {
		i++
	}
	src := mediaSource{place: fmt.Sprintf("media[%d]", i), file: items[i].File}
	if i < len(at) {
		src = at[i]
	}
	what := strings.ReplaceAll(string(k), "_", " ")
	return &mediaProblem{src, fmt.Sprintf("site %q does not take it on a %s: %s", site.Name(), what, checkMediaIndex.ReplaceAllString(err.Error(), ""))}
}
