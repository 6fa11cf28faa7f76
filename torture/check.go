package torture

import (
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/budgets"
	"github.com/browserop/browserop/demosite"
	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/ledger"
	_ "github.com/mattn/go-sqlite3" // the ledger's driver, for the read-only look
)

// The invariants, by the name the summary gives their violation counts,
// each with its number in docs/design.md.
const (
	InvDuplicate  = "duplicate_effects"      // 1: an intent with more than one effect
	InvLost       = "lost_intents"           // 8: an entry without an action, an action stuck or failed without reason
	InvFalseVer   = "false_verified"         // 2: verified without exactly one matching effect at its URL
	InvFalseFail  = "false_failed"           // 9: failed although its effect is on the site
	InvRedone     = "ambiguous_redone"       // 3: performed again without a definitive failure in between
	InvStale      = "stale_writes"           // 4: a write under a generation the lease had moved past
	InvForeignTab = "foreign_tabs"           // 6: the person's tab closed, navigated or typed into
	InvBudget     = "budget"                 // 5: usage differs from verified actions, or passes a limit
	InvIntegrity  = "integrity"              // 10: PRAGMA integrity_check is not ok
	InvUnexpected = "unexpected_effects"     // 1: an effect of no intent, or by another account (unless named on its action)
	InvUnsettled  = "unsettled"              // 11: the settle phase never got an ok pass
	InvHandoff    = "handoff"                // a handed-off tab or its task not ended as the person left it (person faults)
	InvPersonText = "persons_text_published" // an effect carrying the words the person typed into a filled field
	InvTabs       = "tab_consent"            // 13: a tab closed with no cleanup preference, kept with no reason, or kept for want of a preference chosen
)

// InvForeignTabs is InvForeignTab (the name the seed code uses).
const InvForeignTabs = InvForeignTab

// Invariants lists every checked invariant, in the order they are printed.
var Invariants = []string{InvDuplicate, InvLost, InvFalseVer, InvFalseFail, InvRedone, InvStale,
	InvForeignTab, InvBudget, InvIntegrity, InvUnexpected, InvUnsettled, InvHandoff, InvPersonText, InvTabs}

// intentRef is one intent of the schedule: an entry, or a part of a thread.
type intentRef struct {
	entry Entry
	part  int
	kind  kind.Kind // the effect it makes: a post, reply, like or follow (a thread part is a reply, or a post)
	text  string
	// parent is the post a reply answers (0: a thread part answers the
	// previous part, known only from the ledger); post is the liked post;
	// handle the followed account.
	parent int64
	post   int64
	handle string
	// task: the person fault's agent task (its actions are the task's).
	task string
}

func (in intentRef) name() string {
	if in.entry.Type == kind.Thread {
		return fmt.Sprintf("%s part %d", in.entry.ID, in.part)
	}
	return in.entry.ID
}

// intents lists the schedule's intents.
func (w *world) intents() []intentRef {
	var out []intentRef
	for _, e := range w.sch.Entries {
		switch e.Type {
		case "post":
			out = append(out, intentRef{entry: e, kind: kind.Post, text: e.Text})
		case "reply":
			out = append(out, intentRef{entry: e, kind: kind.Reply, text: e.Text, parent: w.postID(w.targetURL(e.Target))})
		case kind.Thread:
			for i, t := range e.Parts {
				in := intentRef{entry: e, part: i, kind: kind.Reply, text: t}
				if i == 0 {
					if e.Target == "" {
						in.kind = kind.Post
					} else {
						in.parent = w.postID(w.targetURL(e.Target))
					}
				}
				out = append(out, in)
			}
		case "like":
			out = append(out, intentRef{entry: e, kind: kind.Like, post: w.postID(w.targetURL(e.Target))})
		case "follow":
			out = append(out, intentRef{entry: e, kind: kind.Follow, handle: strings.TrimPrefix(e.Target, "user:")})
		}
	}
	if h := w.handoff; h != nil && w.sch.Person != nil {
		out = append(out, intentRef{entry: Entry{ID: "handoff-task", Type: "post", Text: w.sch.Person.Text},
			kind: kind.Post, text: w.sch.Person.Text, task: h.task})
	}
	return out
}

// postID is the id of a demosite permalink of this world (/p/N, or
// /post?id=N), 0 for anything else.
func (w *world) postID(u string) int64 {
	rest, ok := strings.CutPrefix(u, w.base+"/p/")
	if !ok {
		if rest, ok = strings.CutPrefix(u, w.base+"/post?id="); !ok {
			return 0
		}
	}
	id, err := strconv.ParseInt(rest, 10, 64)
	if err != nil {
		return 0
	}
	return id
}

// effectsOf returns the effects an intent caused: posts and replies by
// their exact text (texts are unique to their intent), likes by post,
// follows by account.
func effectsOf(in intentRef, effects []demosite.Effect) []demosite.Effect {
	var out []demosite.Effect
	for _, e := range effects {
		switch {
		case (in.kind == kind.Post || in.kind == kind.Reply) && (e.Kind == demosite.EffectPost || e.Kind == demosite.EffectReply) && e.Text == in.text:
			out = append(out, e)
		case in.kind == kind.Like && e.Kind == demosite.EffectLike && e.PostID == in.post:
			out = append(out, e)
		case in.kind == kind.Follow && e.Kind == demosite.EffectFollow && e.Target == in.handle:
			out = append(out, e)
		}
	}
	return out
}

// byAuthor keeps the effects by author.
func byAuthor(es []demosite.Effect, author string) []demosite.Effect {
	var out []demosite.Effect
	for _, e := range es {
		if e.Author == author {
			out = append(out, e)
		}
	}
	return out
}

// toldOtherAccount reports whether an effect by another account than the
// actor's belongs to an intent whose action names that account as one its
// effect may be on (Action.OtherAccounts): browserop told the person.
func (w *world) toldOtherAccount(e demosite.Effect, all []intentRef, acts []ledger.Action) bool {
	for _, in := range all {
		if !slices.ContainsFunc(effectsOf(in, []demosite.Effect{e}), func(x demosite.Effect) bool { return x.Seq == e.Seq }) {
			continue
		}
		for _, a := range actionsFor(in, acts) {
			if slices.Contains(a.OtherAccounts, e.Author) {
				return true
			}
		}
	}
	return false
}

// actionFor finds the actions of an intent in the ledger.
func actionsFor(in intentRef, acts []ledger.Action) []ledger.Action {
	var out []ledger.Action
	for _, a := range acts {
		if in.task != "" {
			if a.TaskID == in.task {
				out = append(out, a)
			}
			continue
		}
		p, err := ledger.ParsePayload(a.Payload)
		if err != nil || p.Intent != "calendar:"+in.entry.ID {
			continue
		}
		pos := 0
		if p.Position != nil {
			pos = *p.Position
		}
		if pos == in.part {
			out = append(out, a)
		}
	}
	return out
}

// resolveByOracle is the person settling ambiguous actions: they look at
// the site (the oracle) and say verified at the URL they found, or absent.
func (w *world) resolveByOracle() {
	db, err := w.openLedger()
	if err != nil || db == nil {
		w.logf("person: open the ledger: %v", err)
		return
	}
	acts, err := db.ListActions(w.ctx, ledger.ActionFilter{Statuses: []ledger.Status{ledger.Ambiguous}})
	db.Close()
	if err != nil {
		w.logf("person: list actions: %v", err)
		return
	}
	all := w.intents()
	effects := w.site.Effects()
	for _, a := range acts {
		var in *intentRef
		for i := range all {
			if slices.ContainsFunc(actionsFor(all[i], []ledger.Action{a}), func(x ledger.Action) bool { return x.ID == a.ID }) {
				in = &all[i]
			}
		}
		if in == nil {
			continue
		}
		args := []string{"actions", "resolve", a.ID, "--config", w.cfg}
		// Only the actor's effect is the action's: one that landed on
		// another account (a click carried out after the account changed)
		// is not, and the person says so.
		found := byAuthor(effectsOf(*in, effects), "alice")
		switch {
		case len(found) == 0:
			args = append(args, "--absent", "--reason", "torture: the person found no such effect by @alice on the site")
		case in.kind == kind.Post || in.kind == kind.Reply:
			args = append(args, "--verified", w.permalink(found[0].PostID))
		default:
			args = append(args, "--verified", a.TargetURL)
		}
		p, err := startProc(w.opts.Bin, w.dir, w.env, "person resolves "+a.ID, args...)
		if err != nil {
			w.logf("%v", err)
			continue
		}
		p.Wait(30 * time.Second)
		p.kill()
		w.count("person_resolve")
		if w.sch.Adapter != nil {
			w.observe(ObsAmbiguousByAdapter)
		}
		w.logf("%s: %s", p.describe(), strings.Join(args[3:], " "))
	}
}

// check compares the oracle and the ledger and records every violation.
func (w *world) check() error {
	effects := w.site.Effects()
	db, err := w.openLedger()
	if err != nil {
		return fmt.Errorf("open the ledger: %w", err)
	}
	var acts []ledger.Action
	events := map[string][]ledger.Event{}
	if db != nil {
		defer db.Close()
		if acts, err = db.ListActions(w.ctx, ledger.ActionFilter{}); err != nil {
			return err
		}
		for _, a := range acts {
			if events[a.ID], err = db.Events(w.ctx, a.ID); err != nil {
				return err
			}
		}
	}
	all := w.intents()

	// Effects: each intent at most once; nothing else, nobody else.
	claimed := make([]bool, len(effects))
	for _, in := range all {
		found := effectsOf(in, effects)
		if len(found) > 1 {
			w.violation(InvDuplicate, "%s: %d effects %s", in.name(), len(found), describeEffects(found))
		}
		for _, f := range found {
			claimed[f.Seq-1] = true
		}
	}
	for i, e := range effects {
		if claimed[i] && e.Author != "alice" && (e.Kind != demosite.EffectUnlike && e.Kind != demosite.EffectUnfollow) &&
			w.toldOtherAccount(e, all, acts) {
			// A click carried out after the account changed landed on
			// another account, and browserop named that account to the
			// person: no client can prevent it, and nothing was redone.
			w.observe(ObsOtherAccount)
			w.logf("an effect on another account, named to the person: %s", describeEffects([]demosite.Effect{e}))
			continue
		}
		if !claimed[i] || e.Author != "alice" || e.Kind == demosite.EffectUnlike || e.Kind == demosite.EffectUnfollow {
			w.violation(InvUnexpected, "effect %s", describeEffects([]demosite.Effect{e}))
		}
	}

	// Every intent ends verified, failed with a reason, ambiguous or planned.
	byIntent := map[string][]ledger.Action{}
	for _, in := range all {
		byIntent[in.name()] = actionsFor(in, acts)
	}
	for _, e := range w.sch.Entries {
		var mine []intentRef
		for _, in := range all {
			if in.entry.ID == e.ID {
				mine = append(mine, in)
			}
		}
		if len(byIntent[mine[0].name()]) == 0 {
			if w.settledOK {
				w.violation(InvLost, "%s: no action after an ok pass", e.ID)
			}
			continue
		}
		for k, in := range mine {
			as := byIntent[in.name()]
			if len(as) > 1 {
				w.violation(InvDuplicate, "%s: %d actions for one intent", in.name(), len(as))
			}
			if len(as) == 0 {
				prev := byIntent[mine[k-1].name()]
				if w.settledOK && len(prev) > 0 && prev[0].Status == ledger.Verified {
					w.violation(InvLost, "%s: never reserved although part %d is verified", in.name(), k-1)
				}
				break
			}
			for _, a := range as {
				switch a.Status {
				case ledger.Executing:
					w.violation(InvLost, "%s: action %s left executing", in.name(), a.ID)
				case ledger.Failed:
					if strings.TrimSpace(a.FailureReason) == "" {
						w.violation(InvLost, "%s: action %s failed without a reason", in.name(), a.ID)
					}
				}
			}
		}
	}

	// Verified means exactly one matching effect at the canonical URL;
	// failed means none.
	for _, in := range all {
		for _, a := range byIntent[in.name()] {
			found := byAuthor(effectsOf(in, effects), "alice")
			switch a.Status {
			case ledger.Verified:
				why := w.falseVerified(in, a, effects, byIntent, verifiedByPerson(events[a.ID]))
				if why == "" && !verifiedByPerson(events[a.ID]) {
					why = w.otherMedia(in, a, effects)
				}
				if why != "" {
					w.violation(InvFalseVer, "%s: action %s verified at %s: %s", in.name(), a.ID, a.CanonicalResult, why)
				}
			case ledger.Failed:
				if len(found) > 0 && w.sch.Adapter != nil && w.sch.Adapter.refusalMistake() {
					// The adapter's refusal rule said the site created
					// nothing; the operator has only its word. A second
					// effect would still be a violation.
					w.observe(ObsFalseFailedByAdapter)
					w.logf("%s: action %s failed (%s) though the site has %s: the adapter's refusal rule said so", in.name(), a.ID, a.FailureReason, describeEffects(found))
				} else if len(found) > 0 {
					w.violation(InvFalseFail, "%s: action %s failed (%s) but the site has %s", in.name(), a.ID, a.FailureReason, describeEffects(found))
				}
			}
		}
	}

	// Histories: never performed again without a definitive failure in
	// between; an operator's generations never go back.
	for _, a := range acts {
		redone, stale := checkHistory(events[a.ID])
		for _, v := range redone {
			w.violation(InvRedone, "action %s: %s", a.ID, v)
		}
		for _, v := range stale {
			w.violation(InvStale, "action %s: %s", a.ID, v)
		}
	}
	if err := w.checkRaw(events); err != nil {
		return err
	}
	w.checkHandoff(w.ctx, db, effects)
	w.checkEdits(effects)

	// Budgets: usage equals verified actions and stays within every limit.
	if db != nil {
		verified := 0
		for _, a := range acts {
			if a.Status == ledger.Verified && a.Format != "" {
				verified++
			}
		}
		catchAll, err := budgets.NewPolicy(nil, map[string]budgets.GroupLimit{"all": {Formats: budgets.Formats, Max: 1 << 30, Window: 1 << 62}})
		if err != nil {
			return err
		}
		u, err := db.BudgetUsage(w.ctx, catchAll)
		if err != nil {
			return err
		}
		if u[0].Used != verified {
			w.violation(InvBudget, "budget usage %d, verified actions %d", u[0].Used, verified)
		}
		limits := map[string]budgets.FormatLimit{}
		for _, f := range budgets.Formats {
			limits[f] = budgets.FormatLimit{Max: budgetLimit, Window: 24 * time.Hour}
		}
		configured, err := budgets.NewPolicy(limits, map[string]budgets.GroupLimit{"original": {
			Formats: []string{budgets.PostText, budgets.PostImage, budgets.Thread}, Max: budgetLimit, Window: 24 * time.Hour}})
		if err != nil {
			return err
		}
		cu, err := db.BudgetUsage(w.ctx, configured)
		if err != nil {
			return err
		}
		for _, x := range cu {
			if x.Used > x.Limit.Max {
				w.violation(InvBudget, "limit %s: used %d of %d", x.Limit.Name, x.Used, x.Limit.Max)
			}
		}
	}

	// Tabs browserop handed to the person stay open on purpose, and so do
	// those the cleanup preference keeps, each recorded kept with why: an
	// open tab with neither record is a leak. Under the preference the
	// world chose, no tab is kept for want of one; with none chosen, a
	// tab closed by browserop would have been closed without consent.
	handedOff := map[string]bool{}
	if db != nil {
		if tabs, err := db.ListTabs(w.ctx, "", ledger.TabHandoff, ledger.TabKept); err == nil {
			for _, t := range tabs {
				handedOff[t.TargetID] = true
				if t.State != ledger.TabKept {
					continue
				}
				switch {
				case t.KeptReason == "":
					w.violation(InvTabs, "tab record %d is kept with no reason", t.ID)
				case !w.sch.CleanupUnknown && t.KeptReason == ledger.KeptNoPreference:
					w.violation(InvTabs, "tab record %d is kept for want of a cleanup preference the person chose", t.ID)
				}
			}
		}
		if w.sch.CleanupUnknown {
			if tabs, err := db.ListTabs(w.ctx, "", ledger.TabClosedVerified); err == nil {
				for _, t := range tabs {
					if t.Purpose == ledger.PurposePass {
						w.violation(InvTabs, "tab record %d was closed (closed_verified) though no cleanup preference is set", t.ID)
					}
				}
			}
		}
	}

	// The person's tab (attach mode): still there, on its URL, their draft
	// untouched, never navigated.
	if w.sch.Mode == ModeAttach {
		w.mu.Lock()
		p, t := w.person, w.userTab
		w.mu.Unlock()
		if p != nil && t != nil {
			vs, _ := p.checkUserTab(t, true)
			for _, v := range vs {
				w.violation(InvForeignTab, "%s", v)
			}
			if pages, err := p.pages(); err == nil {
				for _, info := range pages {
					if !w.keep[info.TargetID] && info.TargetID != t.id && !handedOff[string(info.TargetID)] {
						w.observe(ObsLeakedTabs)
						w.logf("a tab browserop left open in the person's Chrome: %s", info.URL)
					}
				}
			}
		}
	}
	// Launch mode: a Chrome left running on the dedicated profile (it
	// holds the person's tabs) has no browserop tab left in it.
	if w.sch.Mode == ModeLaunch && len(browsersOn(w.prof)) > 0 {
		if p, err := dialPerson(w.prof, time.Time{}, 2*time.Second); err == nil {
			if pages, err := p.pages(); err == nil {
				w.mu.Lock()
				mine := maps.Clone(w.personTabs)
				w.mu.Unlock()
				for _, info := range pages {
					// The tab Chrome started with, untouched (on its
					// start-up page), is not a tab browserop opened.
					if info.URL == browser.StartupURL {
						continue
					}
					if !mine[info.TargetID] && !handedOff[string(info.TargetID)] {
						w.observe(ObsLeakedTabs)
						w.logf("a tab browserop left open in the Chrome it left running: %s", info.URL)
					}
				}
			}
			p.close()
		}
	}
	switch {
	case w.settledOK || w.waitsForPerson:
	case w.sch.Adapter != nil && w.lastHardStop:
		// The wrong adapter stops the site, every pass, and says why: it
		// waits for a person to mend it.
		w.observe(ObsHardStopByAdapter)
		w.logf("settle: every pass stops the site under the wrong adapter (%s): left to a person", w.lastPass)
	default:
		w.violation(InvUnsettled, "no ok pass within %d settle runs; last: %s", settleRuns, w.lastPass)
	}
	return nil
}

// falseVerified returns why a verified action is not proven by the oracle,
// or "".
func (w *world) falseVerified(in intentRef, a ledger.Action, effects []demosite.Effect, byIntent map[string][]ledger.Action, byPerson bool) string {
	switch in.kind {
	case kind.Like, kind.Follow:
		var found []demosite.Effect
		for _, e := range effects {
			if e.Author != "alice" {
				continue
			}
			if in.kind == kind.Like && (e.Kind == demosite.EffectLike || e.Kind == demosite.EffectUnlike) && e.PostID == in.post ||
				in.kind == kind.Follow && (e.Kind == demosite.EffectFollow || e.Kind == demosite.EffectUnfollow) && e.Target == in.handle {
				found = append(found, e)
			}
		}
		if strings.TrimRight(a.CanonicalResult, "/") != strings.TrimRight(a.TargetURL, "/") {
			return "the result is not the target " + a.TargetURL
		}
		if len(found) != 1 || (found[0].Kind != demosite.EffectLike && found[0].Kind != demosite.EffectFollow) {
			return fmt.Sprintf("the site has %s", describeEffects(found))
		}
		return ""
	}
	id := w.postID(a.CanonicalResult)
	if id == 0 {
		return "the result is not a permalink of the site"
	}
	var at []demosite.Effect
	for _, e := range effects {
		if (e.Kind == demosite.EffectPost || e.Kind == demosite.EffectReply) && e.PostID == id {
			at = append(at, e)
		}
	}
	if len(at) != 1 {
		return fmt.Sprintf("%d effects at that post (a seeded post is none)", len(at))
	}
	e := at[0]
	p, _ := ledger.ParsePayload(a.Payload)
	wantParent := in.parent
	if in.entry.Type == kind.Thread && in.part > 0 {
		wantParent = w.postID(p.Parent)
		prev := byIntent[fmt.Sprintf("%s part %d", in.entry.ID, in.part-1)]
		if len(prev) == 0 || prev[0].Status != ledger.Verified || prev[0].CanonicalResult != p.Parent {
			return "its expected parent is not the previous part's verified result"
		}
	}
	if byPerson && wantParent != 0 && w.siteSwitch("flat_replies") == "true" {
		// The site attached a reply to a reply to its thread's root; the
		// person who looked at it took it as the intent's effect.
		wantParent = rootOf(wantParent, effects)
	}
	switch {
	case e.Author != "alice":
		return "the effect's author is " + e.Author
	case e.Text != in.text:
		return fmt.Sprintf("the effect's text is %q", e.Text)
	case wantParent == 0 && e.Kind != demosite.EffectPost:
		return "the effect is a reply, not a post"
	case wantParent != 0 && (e.Kind != demosite.EffectReply || e.ParentID != wantParent):
		return fmt.Sprintf("the effect answers %d, not %d", e.ParentID, wantParent)
	case !byPerson && w.sch.Adapter != nil && w.sch.Adapter.Name == "late_if" && e.Category != lateIfCategory:
		// The adapter's step chooses the category: verified means the
		// post is the one the adapter says it makes.
		return fmt.Sprintf("the effect's category is %q, not %q: the adapter's step never ran", e.Category, lateIfCategory)
	}
	return ""
}

// rootOf is the top-level post of the thread id is in, by the site's
// effects (a seeded post is top-level).
func rootOf(id int64, effects []demosite.Effect) int64 {
	for range len(effects) + 1 {
		parent := int64(0)
		for _, e := range effects {
			if e.Kind == demosite.EffectReply && e.PostID == id {
				parent = e.ParentID
			}
		}
		if parent == 0 {
			return id
		}
		id = parent
	}
	return id
}

// verifiedByPerson reports whether a person, not browserop, verified the
// action: one who looked at the site and said it was published, whatever
// the site did to its media.
func verifiedByPerson(evs []ledger.Event) bool {
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].To == ledger.Verified {
			return evs[i].By == ledger.ByPerson
		}
	}
	return false
}

// otherMedia returns why the effect a verified action names does not carry
// the intended media (the bytes uploaded, the type they are, the alt
// text), or "": browserop must never verify a post whose image the site
// re-encoded or whose alt text it dropped.
func (w *world) otherMedia(in intentRef, a ledger.Action, effects []demosite.Effect) string {
	var want []MediaItem
	if in.kind == kind.Post || in.kind == kind.Reply {
		if in.entry.Type != kind.Thread || in.part == 0 {
			want = in.entry.Media
		}
	}
	id := w.postID(a.CanonicalResult)
	for _, e := range effects {
		if (e.Kind != demosite.EffectPost && e.Kind != demosite.EffectReply) || e.PostID != id {
			continue
		}
		if len(e.Media) != len(want) {
			return fmt.Sprintf("the effect has %d media items, the intent %d", len(e.Media), len(want))
		}
		for i, m := range want {
			data, err := imageBytes(m.Name, m.Type)
			if err != nil {
				return err.Error()
			}
			sum := sha256.Sum256(data)
			got := e.Media[i]
			switch {
			case got.SHA256 != hex.EncodeToString(sum[:]):
				return fmt.Sprintf("media[%d] is another file", i)
			case got.Type != m.Type:
				return fmt.Sprintf("media[%d] is a %s, the intent's a %s", i, got.Type, m.Type)
			case got.Alt != m.Alt:
				return fmt.Sprintf("media[%d] has the alt text %q, the intent %q", i, got.Alt, m.Alt)
			}
		}
	}
	return ""
}

// checkRaw reads what the ledger package does not export: runs, for
// writes made after the lease moved past their generation, and the
// database's integrity.
func (w *world) checkRaw(events map[string][]ledger.Event) error {
	u := url.URL{Scheme: "file", Path: w.ldb, RawQuery: "mode=ro"}
	db, err := sql.Open("sqlite3", u.String())
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(w.ctx, "SELECT 1"); err != nil {
		// No ledger: nothing ran far enough to create one.
		return nil
	}
	var ok string
	if err := db.QueryRowContext(w.ctx, "PRAGMA integrity_check").Scan(&ok); err != nil || ok != "ok" {
		w.violation(InvIntegrity, "integrity_check: %q %v", ok, err)
	}
	rows, err := db.QueryContext(w.ctx, "SELECT generation, started_at FROM runs")
	if err != nil {
		return fmt.Errorf("read runs: %w", err)
	}
	defer rows.Close()
	type run struct {
		gen int64
		at  int64
	}
	var runs []run
	for rows.Next() {
		var r run
		if err := rows.Scan(&r.gen, &r.at); err != nil {
			return err
		}
		runs = append(runs, r)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	// movedPast(g): the first start of a run of a newer generation; the
	// lease had moved past g by then.
	movedPast := func(g int64) (time.Time, bool) {
		var best int64
		for _, r := range runs {
			if r.gen > g && (best == 0 || r.at < best) {
				best = r.at
			}
		}
		return time.Unix(0, best), best != 0
	}
	for id, evs := range events {
		for _, ev := range evs {
			if ev.By == ledger.ByPerson {
				continue
			}
			if t, ok := movedPast(ev.Generation); ok && ev.At.After(t) {
				w.violation(InvStale, "action %s: %s->%s under generation %d at %s, after a newer generation's run started at %s",
					id, ev.From, ev.To, ev.Generation, ev.At.Format(time.RFC3339Nano), t.UTC().Format(time.RFC3339Nano))
			}
		}
	}
	return nil
}

// checkHistory reads one action's history: redone lists every executing
// without a failed since the previous executing (an action performed again
// while it may have happened); stale every operator event whose
// generation is below an earlier one's.
func checkHistory(evs []ledger.Event) (redone, stale []string) {
	executed, failedSince := false, false
	var lastGen int64
	for _, ev := range evs {
		switch ev.To {
		case ledger.Executing:
			if executed && !failedSince {
				redone = append(redone, "executing again without a failure in between: "+history(evs))
			}
			executed, failedSince = true, false
		case ledger.Failed:
			failedSince = true
		}
		if ev.By == ledger.ByPerson {
			continue
		}
		if ev.Generation < lastGen {
			stale = append(stale, fmt.Sprintf("generation went back from %d to %d: %s", lastGen, ev.Generation, history(evs)))
		}
		lastGen = max(lastGen, ev.Generation)
	}
	return redone, stale
}

func history(evs []ledger.Event) string {
	var parts []string
	for _, ev := range evs {
		s := fmt.Sprintf("%s@%d", ev.To, ev.Generation)
		if ev.By == ledger.ByPerson {
			s = string(ev.To) + "@person"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

func describeEffects(es []demosite.Effect) string {
	if len(es) == 0 {
		return "no effect"
	}
	var parts []string
	for _, e := range es {
		s := fmt.Sprintf("#%d %s by %s", e.Seq, e.Kind, e.Author)
		switch e.Kind {
		case demosite.EffectPost, demosite.EffectReply:
			s += fmt.Sprintf(" post %d", e.PostID)
			if e.ParentID != 0 {
				s += fmt.Sprintf(" parent %d", e.ParentID)
			}
		default:
			s += " on " + e.Target
		}
		parts = append(parts, s)
	}
	return "[" + strings.Join(parts, "; ") + "]"
}
