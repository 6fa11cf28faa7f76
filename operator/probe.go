package operator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/sites"
)

// probeRunPrefix starts the RunID of a probe record: the command process
// that opened it (a lease holder's form, see newHolder), so that a pass
// leaves its tab alone while that command runs (probeEnded).
const probeRunPrefix = "probe:"

// probeEnded reports whether the command that opened a probe record
// provably no longer runs.
func probeEnded(rec ledger.Tab) bool {
	holder, ok := strings.CutPrefix(rec.RunID, probeRunPrefix)
	return ok && HolderDead(holder)
}

// Probe is the tabs a command opens for itself outside a pass (doctor,
// sites check, login): each recorded in the tab ledger before it exists
// (purpose doctor, sites_check or login), on a marker URL like a pass's
// tab, and at Finish closed through the same close-proof path under the
// same cleanup preference, or kept open and recorded so. It writes
// without the operator lease: the ledger lets a probe record, and only a
// probe record, be written with no fence.
type Probe struct {
	db      *ledger.DB
	b       *browser.Browser
	purpose ledger.TabPurpose
	profile string
	holder  string
	log     *slog.Logger
	tabs    []*probeTab
}

type probeTab struct {
	rec ledger.Tab
	tab *browser.Tab
}

// NewProbe returns the probe tabs of one command on b, for purpose, in
// the browser profile profile (the cleanup preference's key). log may be
// nil.
func NewProbe(db *ledger.DB, b *browser.Browser, purpose ledger.TabPurpose, profile string, log *slog.Logger) *Probe {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Probe{db: db, b: b, purpose: purpose, profile: profile, holder: newHolder(), log: log}
}

// Open records a probe tab for site (its primary origin), then opens it on
// its marker and records its target. The tab is blank: the caller
// navigates it.
func (p *Probe) Open(ctx context.Context, site, origin string) (*browser.Tab, error) {
	rec, err := p.db.RecordTab(ctx, ledger.Fence{}, ledger.Tab{RunID: probeRunPrefix + p.holder, State: ledger.TabOpening,
		Surface: ledger.SurfaceOwned, Ownership: ledger.Owned, URL: browser.LooseURL(origin),
		BindingHash: browser.BindingHash(site, probeRunPrefix+p.holder), Purpose: p.purpose})
	if err != nil {
		return nil, err
	}
	tab, err := p.b.NewTab(ctx, tabMarker(rec))
	if err != nil {
		return nil, err // the record stays opening: a later pass finds the tab by its marker
	}
	rec, err = p.db.UpdateTab(ctx, ledger.Fence{}, rec.ID, ledger.TabChange{State: ledger.TabLive, TargetID: tab.ID().Raw()})
	if err != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		p.b.CloseTab(cctx, tab)
		cancel()
		return nil, err
	}
	p.tabs = append(p.tabs, &probeTab{rec: rec, tab: tab})
	return tab, nil
}

func (p *Probe) find(tab *browser.Tab) *probeTab {
	for _, t := range p.tabs {
		if t.tab == tab {
			return t
		}
	}
	return nil
}

func (p *Probe) change(ctx context.Context, tab *browser.Tab, c ledger.TabChange) error {
	t := p.find(tab)
	if t == nil {
		return fmt.Errorf("not a probe tab of this command")
	}
	rec, err := p.db.UpdateTab(ctx, ledger.Fence{}, t.rec.ID, c)
	if err != nil {
		return err
	}
	t.rec = rec
	return nil
}

// Shown records, before the person sees it, that tab is given to the
// person (login's sign-in window): it is theirs, and browserop never
// closes it.
func (p *Probe) Shown(ctx context.Context, tab *browser.Tab) error {
	return p.change(ctx, tab, ledger.TabChange{Shown: true})
}

// Typed records, before anything is typed, that tab gets text outside
// any action (sites check --text): it is no probe any more, and it stays
// open unless a Chrome started for the command alone takes it down.
func (p *Probe) Typed(ctx context.Context, tab *browser.Tab) error {
	return p.change(ctx, tab, ledger.TabChange{Typed: true})
}

// Blocked records the blocker screen (a sites.BlockerKind) tab met.
func (p *Probe) Blocked(ctx context.Context, tab *browser.Tab, kind string) error {
	if kind == "" {
		return nil
	}
	return p.change(ctx, tab, ledger.TabChange{Blocker: kind})
}

// NoteBlocker records the blocker screen err stops on (a sites.HardStop
// of a login wall, a captcha, a rate limit or a restriction) on tab's
// record; any other error, or nil, records nothing.
func (p *Probe) NoteBlocker(ctx context.Context, tab *browser.Tab, err error) error {
	var hs *sites.HardStop
	if !errors.As(err, &hs) || !blockerKind(hs.Kind) {
		return nil
	}
	return p.Blocked(ctx, tab, string(hs.Kind))
}

// Look asks site whether tab, which answered status, shows a blocker
// screen, and records the one it shows (Blocked), as a pass does before
// it reads who is signed in. It returns the blocker.
func (p *Probe) Look(ctx context.Context, tab *browser.Tab, site sites.Adapter, status int) (sites.Blocker, error) {
	blk, err := site.Blocker(ctx, tab, status)
	if err != nil || !blk.Blocked() {
		return blk, err
	}
	return blk, p.Blocked(ctx, tab, string(sites.StopKindOf(blk.Kind)))
}

// ProbeOutcome is what became of one probe tab at Finish.
type ProbeOutcome struct {
	Record int64           `json:"record"`
	State  ledger.TabState `json:"state"`
	Reason string          `json:"reason,omitempty"` // why it was kept
}

// Finish ends the command's probe tabs. In a Chrome started for the
// command alone (launched, not the persistent one: it stops with the
// command, and every tab in it) each is closed with proof. In a browser
// that outlives the command (the person's, or the dedicated Chrome left
// running), each the cleanup preference covers (ledger.CleanupAllows) is
// closed with proof, and every other one is left open, recorded kept
// with the reason and let go of. Outcomes come in the order the tabs were
// opened; a tab already gone is missing.
func (p *Probe) Finish(ctx context.Context) []ProbeOutcome {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 20*time.Second)
	defer cancel()
	own := p.b.Launched() && !p.b.Dedicated()
	set, serr := p.db.CleanupSettingOf(ctx, p.profile)
	var out []ProbeOutcome
	for _, t := range p.tabs {
		ok, why := own, ""
		if !own {
			ok, why = false, "the cleanup preference could not be read"
			if serr == nil {
				d, err := p.db.TabDispositionOf(ctx, t.rec)
				if err == nil {
					ok, why = ledger.CleanupAllows(set.Preference, d)
				}
			}
		}
		if !ok {
			if _, err := p.db.UpdateTab(ctx, ledger.Fence{}, t.rec.ID, ledger.TabChange{State: ledger.TabKept, KeptReason: why}); err != nil {
				p.log.Error("record the probe tab kept open", "record", t.rec.ID, "err", err)
			}
			t.tab.Release()
			p.b.Disown(t.tab.ID())
			out = append(out, ProbeOutcome{Record: t.rec.ID, State: ledger.TabKept, Reason: why})
			continue
		}
		rec := t.rec
		state := proveCloseWith(ctx, p.b, p.db, ledger.Fence{}, &rec, t.tab.ID(),
			func() (browser.CloseReceipt, error) { return p.b.CloseTab(ctx, t.tab) }, p.log, nil)
		if _, err := p.db.UpdateTab(ctx, ledger.Fence{}, t.rec.ID, ledger.TabChange{State: state}); err != nil {
			p.log.Error("record the probe tab's closure", "record", t.rec.ID, "err", err)
		}
		out = append(out, ProbeOutcome{Record: t.rec.ID, State: state})
	}
	p.tabs = nil
	return out
}

// LeftOpen is the line a command prints about the probe tabs Finish kept
// open, or "".
func LeftOpen(outs []ProbeOutcome) string {
	n, reason := 0, ""
	for _, o := range outs {
		if o.State == ledger.TabKept {
			n++
			if reason == "" || o.Reason == ledger.KeptNoPreference {
				reason = o.Reason
			}
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d tab(s) left open: %s", n, reason)
}
