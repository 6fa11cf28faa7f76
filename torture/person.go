package torture

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/browserop/browserop/demosite"
	"github.com/browserop/browserop/intent"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/sites"
	"github.com/browserop/browserop/tasks"
)

// Person faults: the person and a tab browserop handed to them. An agent
// task whose contract lists post under confirm is created in the seed's
// ledger after the chaos phase; a pass prepares its post and hands the tab
// to the person, who then closes it (and confirms or declines) or cancels
// the task, before the next pass or while it runs.
const (
	// PersonClosesHandoff: the person closes the handed-off tab and
	// answers (confirm or decline).
	PersonClosesHandoff = "person_closes_handoff"
	// PersonCancelsTask: the person cancels the task whose tab was handed
	// to them; the tab must stay open and untouched.
	PersonCancelsTask = "person_cancels_task_with_handoff"
	// PersonEditsField: in every chaos run the person types into the
	// editor browserop filled, while its images upload (after the fill's
	// read-back, before the click): demosite's person_edits switch.
	PersonEditsField = "person_edits_field"
)

// PersonFaultNames lists the person faults.
func PersonFaultNames() []string {
	return []string{PersonClosesHandoff, PersonCancelsTask, PersonEditsField}
}

// ValidPersonFault reports whether name is a person fault.
func ValidPersonFault(name string) error {
	if slices.Contains(PersonFaultNames(), name) {
		return nil
	}
	return fmt.Errorf("unknown person fault %q (known: %s)", name, strings.Join(PersonFaultNames(), ", "))
}

// PersonFault is what the person does with a handed-off tab.
type PersonFault struct {
	Name string
	// Text is the task's post, unique to the seed.
	Text string
	// Answer (person_closes_handoff): "confirm" or "decline";
	// AnswerFirst: the answer is given before the tab is closed.
	Answer      string
	AnswerFirst bool
	// Before: the person acts before the next pass starts; else At after
	// it started (while it runs, or after it ended).
	Before bool
	At     time.Duration
}

func (f PersonFault) String() string {
	s := f.Name
	if f.Name == PersonClosesHandoff {
		if f.AnswerFirst {
			s += "(" + f.Answer + " then close"
		} else {
			s += "(close then " + f.Answer
		}
	} else {
		s += "(cancel"
	}
	if f.Before {
		s += ", before the next pass)"
	} else {
		s += fmt.Sprintf(", %s into the next pass)", f.At)
	}
	return s
}

// planPerson draws, from a stream of its own (so that the rest of a seed's
// schedule is what it was), whether the seed runs a person fault: one
// seed in seven does; only, when set, makes every seed run that one.
func planPerson(s *Schedule, only string) {
	rng := rand.New(rand.NewPCG(s.Seed, 0x706572736f6e2121))
	draw := rng.IntN(7) == 0
	name := PersonFaultNames()[rng.IntN(2)]
	f := PersonFault{
		Name:        name,
		Answer:      []string{"confirm", "confirm", "decline"}[rng.IntN(3)],
		AnswerFirst: rng.IntN(3) == 0,
		Before:      rng.IntN(3) == 0,
		At:          time.Duration(rng.IntN(2500)) * time.Millisecond,
		Text:        text(rng, s.Seed, 9, 0) + " (handed off)",
	}
	edits := rng.IntN(3) == 0 && textMedia(s) >= 0
	switch only {
	case "":
	case PersonEditsField:
		draw, edits = false, true
	default:
		draw, f.Name, edits = true, only, false
	}
	if edits {
		planEdits(s, rng)
	}
	if !draw {
		s.Person = nil
		return
	}
	if f.Name != PersonClosesHandoff {
		f.Answer, f.AnswerFirst = "", false
	}
	s.Person = &f
}

// textMedia is the index of the first entry that types a text and
// attaches images, -1 when none does.
func textMedia(s *Schedule) int {
	for i, e := range s.Entries {
		if len(e.Media) > 0 && (e.Type == "post" || e.Type == "reply" || e.Type == "thread") {
			return i
		}
	}
	return -1
}

// planEdits turns demosite's person_edits on in every chaos run. The
// person types when a file is chosen, so an entry with a text needs
// images: when none has them (the fault forced), the first entry that
// types a text gets one, and with none such the first entry becomes a
// post.
func planEdits(s *Schedule, rng *rand.Rand) {
	s.PersonEdits = true
	if textMedia(s) < 0 {
		i := slices.IndexFunc(s.Entries, func(e Entry) bool { return e.Type == "post" || e.Type == "reply" || e.Type == "thread" })
		if i < 0 {
			i = 0
			s.Entries[0] = Entry{ID: s.Entries[0].ID, Type: "post", Text: text(rng, s.Seed, 0, 0), Due: s.Entries[0].Due}
		}
		e := &s.Entries[i]
		e.Media = append(e.Media, MediaItem{Name: e.ID + "-edit.png", Type: "png", Alt: fmt.Sprintf("torture image %d: the person edits", s.Seed)})
	}
	for i := range s.Runs {
		r := &s.Runs[i]
		r.Faults = append(slices.Clone(r.Faults), Fault{Name: "person_edits", Value: "true"})
		slices.SortFunc(r.Faults, func(a, b Fault) int { return strings.Compare(a.Name, b.Name) })
	}
}

// checkEdits holds person_edits_field's promise: nothing browserop
// published carries the person's words (the person never submits in
// this fault); and counts the fields browserop found edited
// (field_user_edited: actions it held, field_not_ours).
func (w *world) checkEdits(effects []demosite.Effect) {
	if !w.sch.PersonEdits {
		return
	}
	for _, e := range effects {
		if strings.Contains(e.Text, demosite.PersonEdit) {
			w.violation(InvPersonText, "the person's words were published: %s", describeEffects([]demosite.Effect{e}))
		}
	}
	u := url.URL{Scheme: "file", Path: w.ldb, RawQuery: "mode=ro&_busy_timeout=2000"}
	db, err := sql.Open("sqlite3", u.String())
	if err != nil {
		return
	}
	defer db.Close()
	var n int
	if db.QueryRow(`SELECT count(*) FROM field_provenance WHERE state = 'user_edited'`).Scan(&n) == nil {
		w.mu.Lock()
		w.res.Faults["field_user_edited"] += n
		w.mu.Unlock()
	}
}

// handoff is what the person phase saw of the task.
type handoffState struct {
	task   string
	action string
	tab    int64 // the tab record's id
	target target.ID
	text   string // what the handed-off composer held when handed over
	acted  bool   // the person did what the fault says
	// browserDown: a Chrome of the seed was killed or restarted after the
	// handoff (the cancelled task's tab may go with it).
	browserDown bool
}

// browserWentDown notes that the seed's Chrome went down or was started
// again (after the handoff, a cancelled task's tab may go with it).
func (w *world) browserWentDown() {
	if w.handoff != nil {
		w.handoff.browserDown = true
	}
}

// taskService opens the ledger and the tasks service over the seed's
// adapter.
func (w *world) taskService() (*ledger.DB, *tasks.Service, error) {
	raw, err := os.ReadFile(filepath.Join(w.dir, "sites", "demo.yaml"))
	if err != nil {
		return nil, nil, err
	}
	ad, err := sites.Parse("demo", raw)
	if err != nil {
		return nil, nil, err
	}
	db, err := ledger.Open(w.ctx, w.ldb, ledger.Options{})
	if err != nil {
		return nil, nil, err
	}
	return db, tasks.New(db, []sites.Adapter{ad}, nil), nil
}

// personPhase runs the seed's person fault: the task is created, passes
// run until its post is handed to the person, and the person does what
// the fault says.
func (w *world) personPhase() {
	f := w.sch.Person
	w.setFaults(nil)
	db, svc, err := w.taskService()
	if err != nil {
		w.logf("person: %v", err)
		return
	}
	ctx := w.ctx
	req := tasks.CreateRequest{Title: "torture handoff", Contract: ledger.Contract{
		Domains: []string{"127.0.0.1"}, Capabilities: []string{"post"}, Confirm: []string{"post"}}}
	t, _, err := svc.Agent().Create(ctx, fmt.Sprintf("torture-%d", w.sch.Seed), req, "api")
	if err == nil {
		_, err = svc.Submit(ctx, t.ID, intent.Request{Site: "demo", Actor: "alice", Type: intent.Post, Text: f.Text})
	}
	db.Close()
	if err != nil {
		w.logf("person: create the task: %v", err)
		return
	}
	w.handoff = &handoffState{task: t.ID}
	w.count("task_confirm")
	w.logf("person: task %s created (post, confirm post)", t.ID)
	for n := 0; n < 4 && w.ctx.Err() == nil; n++ {
		w.prepareBrowser()
		p := w.start("handoff pass", nil)
		if p == nil {
			return
		}
		w.finish(p)
		if w.findHandoff() {
			break
		}
	}
	h := w.handoff
	if h.target == "" {
		w.logf("person: no tab was handed over; %s not injected", f.Name)
		return
	}
	h.text = w.tabText(h.target)
	w.logf("person: tab %s handed over, holding %q", h.target, h.text)
	act := func() {
		switch f.Name {
		case PersonCancelsTask:
			if err := w.withTasks(func(svc *tasks.Service) error {
				_, err := svc.Cancel(w.ctx, h.task, "torture: the person cancelled the task")
				return err
			}); err != nil {
				w.logf("person: cancel: %v", err)
				return
			}
			w.logf("person: cancelled task %s", h.task)
		case PersonClosesHandoff:
			if f.AnswerFirst {
				w.answer(f.Answer)
			}
			w.closeHandedOff()
			if !f.AnswerFirst {
				w.answer(f.Answer)
			}
		}
		h.acted = true
		w.count(f.Name)
	}
	if f.Before {
		act()
	}
	w.prepareBrowser()
	p := w.start("pass after the handoff", nil)
	if p == nil {
		return
	}
	if !f.Before {
		deadline := p.Started.Add(f.At)
		for time.Now().Before(deadline) && w.ctx.Err() == nil {
			time.Sleep(min(20*time.Millisecond, time.Until(deadline)))
		}
		act()
	}
	w.finish(p)
}

// withTasks runs fn with the tasks service on the seed's ledger.
func (w *world) withTasks(fn func(*tasks.Service) error) error {
	db, svc, err := w.taskService()
	if err != nil {
		return err
	}
	defer db.Close()
	return fn(svc)
}

// answer is the person confirming or declining the task's action.
func (w *world) answer(how string) {
	h := w.handoff
	err := w.withTasks(func(svc *tasks.Service) error {
		var err error
		if how == "decline" {
			_, err = svc.Decline(w.ctx, h.action, "torture person", "torture: not wanted")
		} else {
			_, err = svc.Confirm(w.ctx, h.action, "torture person")
		}
		return err
	})
	w.logf("person: %s %s: err=%v", how, h.action, err)
}

// findHandoff looks for the task's action and a tab record handed off
// for it.
func (w *world) findHandoff() bool {
	h := w.handoff
	db, err := w.openLedger()
	if err != nil || db == nil {
		return false
	}
	defer db.Close()
	acts, err := db.ListActions(w.ctx, ledger.ActionFilter{TaskID: h.task})
	if err != nil || len(acts) == 0 {
		return false
	}
	h.action = acts[0].ID
	tabs, err := db.ListTabs(w.ctx, h.task)
	if err != nil {
		return false
	}
	for _, t := range tabs {
		if t.State == ledger.TabHandoff && t.TargetID != "" {
			h.tab, h.target = t.ID, target.ID(t.TargetID)
			return true
		}
	}
	return false
}

// personConn is a DevTools connection of the person's to the seed's
// Chrome: theirs in attach mode, the launched one's relay in launch mode.
func (w *world) personConn() (*person, func(), error) {
	if w.sch.Mode == ModeAttach {
		w.mu.Lock()
		p := w.person
		w.mu.Unlock()
		if p == nil || !p.alive() {
			return nil, nil, fmt.Errorf("no connection to the person's Chrome")
		}
		return p, func() {}, nil
	}
	p, err := dialPerson(w.prof, time.Time{}, 2*time.Second)
	if err != nil {
		return nil, nil, err
	}
	return p, p.close, nil
}

// tabText reads the handed-off composer's text; "" when it cannot.
func (w *world) tabText(id target.ID) string {
	p, done, err := w.personConn()
	if err != nil {
		return ""
	}
	defer done()
	v, err := inTab(p, id, 5*time.Second, chromedp.Value(chromedp.CSS("textarea#compose-text")))
	if err != nil {
		return ""
	}
	return v
}

// closeHandedOff is the person closing the handed-off tab.
func (w *world) closeHandedOff() {
	p, done, err := w.personConn()
	if err != nil {
		w.logf("person: close the handed-off tab: %v", err)
		return
	}
	defer done()
	_, err = call(p, target.CloseTarget, target.CloseTargetParams{TargetID: w.handoff.target})
	w.logf("person: closed the handed-off tab %s: err=%v", w.handoff.target, err)
}

// handoffTabState is what the person finds of the handed-off tab at the
// end: whether it is open, and its composer's text.
func (w *world) handoffTabState() (open bool, text string, err error) {
	p, done, err := w.personConn()
	if err != nil {
		return false, "", err
	}
	defer done()
	if _, ok := p.urlOf(w.handoff.target); !ok {
		return false, "", nil
	}
	return true, w.tabText(w.handoff.target), nil
}

// checkHandoff holds the person fault's promises: one effect at most; a
// closed and confirmed handoff ends published once, verified; a declined
// or cancelled one publishes nothing; a closed tab's record ends missing or
// closed_verified; a cancelled task's tab stays open with its text while
// its browser stays up.
//
// Duplicates, unexpected effects, false verified and false failed of the
// task's intent are checked with the entries' (intents lists it).
func (w *world) checkHandoff(ctx context.Context, db *ledger.DB, effects []demosite.Effect) {
	h, f := w.handoff, w.sch.Person
	if h == nil || f == nil || db == nil || !h.acted {
		return
	}
	mine := 0
	for _, e := range effects {
		if e.Text == f.Text {
			mine++
		}
	}
	acts, err := db.ListActions(ctx, ledger.ActionFilter{TaskID: h.task})
	if err != nil {
		w.violation(InvHandoff, "list the task's actions: %v", err)
		return
	}
	var a ledger.Action
	if len(acts) > 0 {
		a = acts[0]
	}
	rec, err := db.GetTab(ctx, h.tab)
	if err != nil {
		w.violation(InvHandoff, "the handed-off tab's record %d: %v", h.tab, err)
		return
	}
	switch {
	case f.Name == PersonClosesHandoff:
		if rec.State != ledger.TabMissing && rec.State != ledger.TabClosedVerified {
			w.violation(InvHandoff, "the tab the person closed: its record ends %s, not missing or closed_verified", rec.State)
		}
		if f.Answer == "confirm" && w.settledOK && (a.Status != ledger.Verified || mine != 1) {
			w.violation(InvHandoff, "confirmed and settled, but the action is %s with %d effects", a.Status, mine)
		}
		if f.Answer == "decline" && (mine != 0 || a.Status == ledger.Verified) {
			w.violation(InvHandoff, "declined, but the action is %s with %d effects", a.Status, mine)
		}
	case f.Name == PersonCancelsTask:
		if mine != 0 || a.Status == ledger.Verified {
			w.violation(InvHandoff, "cancelled, but the action is %s with %d effects", a.Status, mine)
		}
		if h.browserDown {
			return
		}
		open, text, err := w.handoffTabState()
		switch {
		case err != nil:
			w.logf("person: the handed-off tab cannot be looked at: %v", err)
		case !open:
			w.violation(InvHandoff, "the cancelled task's handed-off tab was closed while its browser stayed up (record %s)", rec.State)
		case text != h.text:
			w.violation(InvHandoff, "the cancelled task's handed-off tab was changed: %q, was %q", text, h.text)
		}
		if rec.State != ledger.TabHandoff {
			w.violation(InvHandoff, "the cancelled task's handed-off tab record ends %s, not handoff", rec.State)
		}
	}
}
