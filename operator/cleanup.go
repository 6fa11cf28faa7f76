package operator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/sites"
)

// mayClose says whether the profile's cleanup preference lets the pass
// close the tab of rec, and why not when it does not (ledger.CleanupAllows
// on the record's disposition). Anything it cannot read keeps the tab.
func (p *pass) mayClose(ctx context.Context, rec ledger.Tab) (bool, string) {
	set, err := p.r.db.CleanupSettingOf(ctx, p.r.cfg.Profile)
	if err != nil {
		return false, "the cleanup preference could not be read"
	}
	d, err := p.r.db.TabDispositionOf(ctx, rec)
	if err != nil {
		return false, "the tab's uses could not be read"
	}
	return ledger.CleanupAllows(set.Preference, d)
}

// keepTab leaves the tab of rec open, as the cleanup preference says: its
// record becomes kept with the reason, the tab is no longer the pass's
// (disowned: it keeps a launched Chrome running, and nothing of
// browserop's stays attached to it), and the summary says so.
func (p *pass) keepTab(ctx context.Context, b *browser.Browser, rec ledger.Tab, tab *browser.Tab, reason string) error {
	if rec.State != ledger.TabKept || rec.KeptReason != reason {
		if _, err := p.r.db.UpdateTab(ctx, p.fence(), rec.ID, ledger.TabChange{State: ledger.TabKept, KeptReason: reason}); err != nil {
			return fmt.Errorf("record the tab kept open: %w", err)
		}
	}
	if tab != nil {
		tab.AllowTeardown(false)
		tab.Release()
	}
	if b != nil && rec.TargetID != "" {
		b.Disown(browser.TargetID(rec.TargetID))
	}
	p.sum.count(tabsCount(ledger.TabKept))
	p.keptReasons[reason]++
	return nil
}

// tabsLeftOpen is the summary's line about the tabs this pass kept open,
// or "": how many, and why, with how to choose a preference when none is
// set.
func (p *pass) tabsLeftOpen() string {
	n := 0
	for _, c := range p.keptReasons {
		n += c
	}
	if n == 0 {
		return ""
	}
	if p.keptReasons[ledger.KeptNoPreference] > 0 {
		return fmt.Sprintf("%d tab(s) left open: %s", n, ledger.KeptNoPreference)
	}
	if len(p.keptReasons) == 1 {
		for reason := range p.keptReasons {
			return fmt.Sprintf("%d tab(s) left open: %s", n, reason)
		}
	}
	return fmt.Sprintf("%d tab(s) left open (browserop tabs --open says why, each)", n)
}

// noteBlocker records on the site tab's record the blocker screen err
// stops on (a captcha, a login wall, a rate limit, a restriction), before
// any close it may allow: a probe tab closes under
// submitted_and_probe_blockers only with its blocker recorded. Only the
// ledger's errors are errors.
func (p *pass) noteBlocker(st *siteTab, err error) error {
	var hs *sites.HardStop
	if st == nil || !errors.As(err, &hs) || !blockerKind(hs.Kind) || st.rec.Blocker != "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(p.ctx), 10*time.Second)
	defer cancel()
	rec, uerr := p.r.db.UpdateTab(ctx, p.fence(), st.rec.ID, ledger.TabChange{Blocker: string(hs.Kind)})
	if uerr != nil {
		return uerr
	}
	st.rec = rec
	return nil
}

// blockerKind reports whether a hard stop is a blocker screen's.
func blockerKind(k sites.HardStopKind) bool {
	switch k {
	case sites.StopLogin, sites.StopCaptcha, sites.StopRateLimit, sites.StopRestricted:
		return true
	}
	return false
}
