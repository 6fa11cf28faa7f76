package operator

import (
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/browserop/browserop/authority"
)

// judge refuses, at load, the entries that can be judged without a
// browser: an entry naming a site that has no adapter, or whose target is
// outside the domains of its site (its task's authority). Each becomes a
// problem naming its file and line; the other entries are untouched, so a
// bad entry never stops the rest of the calendar.
func (r *Runner) judge(cal Calendar) Calendar {
	out := Calendar{Problems: cal.Problems}
	for _, e := range cal.Entries {
		if why := r.refuse(e); why != "" {
			out.Problems = append(out.Problems, &CalendarError{File: e.File, Line: e.Line, EntryID: e.ID, Problem: why})
			continue
		}
		out.Entries = append(out.Entries, e)
	}
	return out
}

// refuse returns why an entry cannot be performed, or "".
func (r *Runner) refuse(e Entry) string {
	site, ok := r.sites[e.Site]
	if !ok {
		return fmt.Sprintf("site %q has no adapter (configured: %s)", e.Site, strings.Join(r.siteNames(), ", "))
	}
	if e.Target == "" {
		return ""
	}
	domains := contractFor(site, e.Capability()).Domains
	allowed, err := authority.ParseDomains(domains)
	var host string
	if u, perr := url.Parse(e.Target); perr == nil {
		host, perr = authority.ParseHost(u.Hostname())
		err = errors.Join(err, perr)
	} else {
		err = perr
	}
	if err != nil || !allowed.Match(host) {
		sort.Strings(domains)
		return fmt.Sprintf("target %q is outside the authority of site %q (its domains: %s); it is never performed",
			e.Target, e.Site, strings.Join(domains, ", "))
	}
	return ""
}
