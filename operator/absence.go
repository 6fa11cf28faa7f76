package operator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/sites"
	"github.com/browserop/browserop/verify"
)

// knownMargin widens the window of the actor's other results read beside a
// search: the walk ends on the first item older than its window, so an
// item a little older than the window still shows in it.
const knownMargin = 24 * time.Hour

// shownUnexplained bounds how many unexplained items a reason names.
const shownUnexplained = 3

// heldAbsenceDetail names, for the person, what kept a view from proving
// an action absent (docs/design.md invariant 12): each unexplained item of
// the actor's (its link, what differs, its text escaped and cut), and,
// when only the landed page's link stood against absence, what that link
// shows when it is opened. "" when there is nothing to name.
func (p *pass) heldAbsenceDetail(st *siteTab, in intent, vin verify.Intent, v verify.Verdict, id string) string {
	var b strings.Builder
	for i, u := range v.Unexplained {
		if i == shownUnexplained {
			fmt.Fprintf(&b, "; and %d more such items", len(v.Unexplained)-shownUnexplained)
			break
		}
		link := u.Item.URL
		if link == "" {
			link = "a place without a link"
		}
		fmt.Fprintf(&b, "; an item by @%s appeared at %s after the click and does not match the intended item (%s): \"%s\"",
			in.actor, printable(link), u.Why, printable(clip(u.Item.Text, 120)))
	}
	if len(v.Unexplained) > 0 {
		b.WriteString("; if it is this action's result, a person settles it in one step: browserop actions resolve " + id + " --verified URL")
	}
	if vin.LandedURL != "" && len(v.URLs) == 0 && len(v.Unexplained) == 0 {
		b.WriteString("; " + p.lookAtLanded(st, in, vin, id))
	}
	return b.String()
}

// landedLook bounds the look at a landed link: its page, then its item.
const landedLook = 10 * time.Second

// lookAtLanded opens the link the landed page named, in the pass's tab,
// and says what it shows: its status, and whether the item the site's
// result fields read there is the intended one. Only a link on the site's
// origins is opened; nothing on the page is touched.
func (p *pass) lookAtLanded(st *siteTab, in intent, vin verify.Intent, id string) string {
	link := vin.LandedURL
	head := fmt.Sprintf("the landed page named %s", printable(link))
	status, obs, err := p.resultAt(st, in, link)
	switch {
	case errors.Is(err, errOffSite):
		return head + ", which is not on the site: it was not opened"
	case errors.Is(err, errNotOpened):
		return head + "; opening it failed (" + errorClass(err) + ")"
	case status == 404 || status == 410:
		return fmt.Sprintf("%s, which answers %d now: the item may have been removed since; a person checks", head, status)
	case err != nil:
		return fmt.Sprintf("%s (status %d); what it shows could not be read (%s): a person checks it", head, status, errorClass(err))
	case len(obs.Read) == 0:
		return fmt.Sprintf("%s (status %d); the site's result fields read nothing there: a person checks it", head, status)
	}
	if why := verify.CheckLandedResult(vin, obs.LandedResult()); why != "" {
		return fmt.Sprintf("%s (status %d), where %s", head, status, why)
	}
	return fmt.Sprintf("%s (status %d), which shows what the intent predicts in the fields the site's result reads (%s): "+
		"a person checks it and settles the action with browserop actions resolve %s --verified URL", head, status, strings.Join(obs.Read, ", "), id)
}

// errOffSite and errNotOpened say why resultAt read nothing: the link is
// not on the site's origins (nothing was opened), or opening it failed.
var (
	errOffSite   = errors.New("not on the site")
	errNotOpened = errors.New("not opened")
)

// resultAt opens link in the pass's tab, only when it is on the site's
// origins, and reads the site's result fields there (sites.Adapter.Result),
// within landedLook. It returns the page's status and what was read; the
// error wraps errOffSite or errNotOpened when the page was not read, else
// it is Result's.
func (p *pass) resultAt(st *siteTab, in intent, link string) (int, sites.Observed, error) {
	if !slices.Contains(st.site.Origins(), browser.Origin(link)) {
		return 0, sites.Observed{}, errOffSite
	}
	ctx, cancel := context.WithTimeout(p.ctx, landedLook)
	defer cancel()
	status, err := st.tab.Navigate(ctx, link)
	if err != nil {
		return 0, sites.Observed{}, fmt.Errorf("%w: %w", errNotOpened, err)
	}
	if status >= 400 {
		return status, sites.Observed{}, fmt.Errorf("the page answered %d", status)
	}
	obs, err := st.site.Result(ctx, st.tab, in.sitesIntent())
	return status, obs, err
}

// clip cuts s to n runes, marking the cut.
func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
