package operator

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/browserop/browserop/calendar"
	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/tasks"
)

// Routing: a due calendar entry, and an agent's intent taken as one, become
// the intents process performs (a thread's parts in order). The planner's
// candidates take the same way in plan.go.

// entry carries one due calendar entry through its task and its intents.
func (p *pass) entry(e calendar.Entry) error {
	site, ok := p.r.sites[e.Site]
	if !ok {
		p.problem(fmt.Sprintf("calendar: %s:%d: entry %q: site %q has no adapter", e.File, e.Line, e.ID, e.Site))
		return nil
	}
	task, origin, err := p.entryTask(e, site)
	if errors.Is(err, errEditedAfterPerformed) {
		// Edited after an action of it was performed: never publish the
		// edited version.
		p.sum.count(CountConflicts)
		p.sum.Actions = append(p.sum.Actions, ActionReport{Entry: e.ID, Type: kind.Kind(e.Type), Status: StatusConflict,
			Reason: "the entry changed after an action of it was performed; it is not published"})
		p.problem(fmt.Sprintf("calendar: %s:%d: entry %q changed after an action of it was performed; restore it or give it a new id", e.File, e.Line, e.ID))
		return nil
	}
	if err != nil {
		return err
	}
	if task.Status != ledger.TaskOpen {
		return nil // cancelled, or done: its entry is settled
	}
	late := !p.r.cfg.PublishLate && p.r.now().Sub(e.At) > p.r.cfg.Grace
	return p.runEntry(e, task, origin, late)
}

// runEntry carries an entry's intents (a thread's parts in order) through
// process. late marks a calendar entry past its grace: missed, unless
// something of it was already performed.
func (p *pass) runEntry(e calendar.Entry, task ledger.Task, origin string, late bool) error {
	if late {
		// Missed only while nothing of the entry has been performed: a thread
		// already begun is finished, not left half published.
		performed, err := p.performedAny(task.ID)
		if err != nil {
			return err
		}
		late = !performed
	}
	if e.Type != kind.Thread {
		_, err := p.process(entryIntent(e, task, origin), e.ID, late)
		return err
	}
	parent := e.Target
	for i := range e.Parts {
		a, err := p.process(threadPart(e, task, origin, i, parent), e.ID, late)
		if err != nil {
			return err
		}
		if a.Status != ledger.Verified {
			// Part n+1 waits for part n's verified URL.
			return nil
		}
		parent = a.CanonicalResult
	}
	return nil
}

// taskIntents performs the intents agents submitted to open tasks, in
// submission order, through the same path as calendar entries. An intent
// already settled (verified, or failed for good) is not revisited: each
// task's actions are read once and its settled intents skipped.
func (p *pass) taskIntents() error {
	due, err := tasks.DueIntents(p.ctx, p.r.db, p.r.cfg.MaxAttempts)
	if err != nil {
		return err
	}
	for _, d := range due {
		ti, task := d.Intent, d.Task
		var in tasks.IntentRequest
		if err := json.Unmarshal(ti.Request, &in); err != nil {
			p.problem(fmt.Sprintf("task %s: intent %s: %v", ti.TaskID, ti.ID, err))
			continue
		}
		if _, ok := p.r.sites[in.Site]; !ok {
			p.problem(fmt.Sprintf("task %s: intent %s: site %q has no adapter", ti.TaskID, ti.ID, in.Site))
			continue
		}
		e, err := in.Entry(ti, p.r.cfg.mediaDir(), p.r.sites[in.Site])
		if err != nil {
			p.problem(fmt.Sprintf("task %s: intent %s: %v", ti.TaskID, ti.ID, err))
			continue
		}
		if err := p.runEntry(e, task, d.Origin, false); err != nil {
			return err
		}
	}
	return nil
}
