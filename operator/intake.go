package operator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/browserop/browserop/calendar"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/sites"
	"github.com/browserop/browserop/tasks"
)

// Routing: a due calendar entry, and an agent's intent taken as one, become
// the intents process performs (a thread's parts in order). The planner's
// candidates take the same way in planner.go.

// entry carries one due calendar entry through its task and its intents.
func (p *pass) entry(e calendar.Entry) error {
	site, ok := p.r.sites[e.Site]
	if !ok {
		p.problem(fmt.Sprintf("calendar: %s:%d: entry %q: site %q has no adapter", e.File, e.Line, e.ID, e.Site))
		return nil
	}
	task, key, err := p.entryTask(e, site)
	if errors.Is(err, errEditedAfterPerformed) {
		// Edited after an action of it was performed: never publish the
		// edited version.
		p.sum.count(CountConflicts)
		p.sum.Actions = append(p.sum.Actions, ActionReport{Entry: e.ID, Type: e.Type.Kind, Site: e.Site, Status: StatusConflict,
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
	return p.runEntry(e, task, ownTask(key), late)
}

// runEntry carries an entry's intents (a thread's parts in order) through
// process. late marks a calendar entry past its grace: missed, unless
// something of it was already performed.
func (p *pass) runEntry(e calendar.Entry, task ledger.Task, o owner, late bool) (err error) {
	defer p.nameSite(len(p.sum.Actions), e.Site)
	conn, err := p.claim(task.ID, -1)
	if err != nil {
		return err
	}
	defer func() {
		if err == nil {
			_, err = p.claim(task.ID, conn)
		}
	}()
	if late {
		// Missed only while nothing of the entry has been performed: a thread
		// already begun is finished, not left half published.
		performed, err := p.performedAny(task.ID)
		if err != nil {
			return err
		}
		late = !performed
	}
	if !e.Type.IsThread() {
		_, err := p.process(entryIntent(e, task, o), e.ID, late)
		return err
	}
	parent := e.Target
	for i := range e.Parts {
		a, err := p.process(threadPart(e, task, o, i, parent), e.ID, late)
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

// claim records that this pass, through its browser connection, acts on
// the task (its owner and connection generations), unless it claimed it
// already through the same connection (had; -1 for none): a pass of an
// older generation is refused (ledger.ErrStaleGeneration), as its writes
// are. Called before and after acting, as the browser may connect (again)
// in between. It returns the connection it claimed the task through.
// Like a transition, it is recorded even while the pass is being
// cancelled.
func (p *pass) claim(taskID string, had int64) (int64, error) {
	conn := p.r.connection()
	if conn == had {
		return conn, nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(p.ctx), 30*time.Second)
	defer cancel()
	_, err := p.r.db.ClaimTask(ctx, p.fence(), taskID, conn)
	return conn, err
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
		if d.Err != nil {
			p.problem(fmt.Sprintf("task %s: %v", ti.TaskID, d.Err))
			continue
		}
		site, ok := p.r.sites[d.Request.Site]
		if !ok {
			p.problem(fmt.Sprintf("task %s: intent %s: site %q has no adapter", ti.TaskID, ti.ID, d.Request.Site))
			continue
		}
		e, err := tasks.Entry(ti, p.r.cfg.mediaDir(), site)
		if err != nil {
			p.problem(fmt.Sprintf("task %s: intent %s: %v", ti.TaskID, ti.ID, err))
			continue
		}
		if err := p.runEntry(e, task, owner{origin: d.Origin(), id: ti.ID}, false); err != nil {
			return err
		}
	}
	return nil
}

// errEditedAfterPerformed marks a calendar entry edited after an action of
// it went executing: the edited version is never published.
var errEditedAfterPerformed = errors.New("the entry changed after an action of it was performed")

// supersededReason is why the actions of an entry's earlier version end.
const supersededReason = "superseded: the calendar entry was edited before anything of it was performed"

// entryTask returns the task of a calendar entry and its key, which is the
// entry's origin in its actions' payloads ("calendar:ID", or
// "calendar:ID~N" for the N-th version). An entry may change freely until
// an action of it reaches executing: an edit before that supersedes the
// task of the earlier version (its planned actions end abandoned) with a
// task of the new version; an edit after it is errEditedAfterPerformed.
func (p *pass) entryTask(e calendar.Entry, site sites.Adapter) (ledger.Task, string, error) {
	key := ledger.KeyCalendar + e.ID
	req := ledger.TaskRequest{Title: e.ID, Source: tasks.SourceCalendar, Contract: contractFor(site, e.Type.Capability()), Input: entryInput(e)}
	revs, err := p.r.db.TaskRevisions(p.ctx, key)
	if err != nil {
		return ledger.Task{}, "", err
	}
	if len(revs) == 0 {
		t, _, err := p.r.db.CreateTask(p.ctx, key, req)
		return t, key, err
	}
	cur := revs[len(revs)-1]
	t, _, err := p.r.db.CreateTask(p.ctx, cur.IdempotencyKey, req)
	if err == nil {
		if t.Status != ledger.TaskCancelled {
			return t, cur.IdempotencyKey, nil
		}
		if ok, err := p.superseded(t); err != nil || !ok {
			return t, cur.IdempotencyKey, err // cancelled by a person: stays so
		}
		// Superseded, then restored to this version: a new version below.
	} else if !errors.Is(err, ledger.ErrConflict) {
		return ledger.Task{}, "", err
	} else if cur.Status == ledger.TaskOpen {
		if err := p.r.db.SupersedeTask(p.ctx, p.fence(), cur.ID, supersededReason); errors.Is(err, ledger.ErrConflict) {
			return cur, cur.IdempotencyKey, errEditedAfterPerformed
		} else if err != nil {
			return ledger.Task{}, "", err
		}
		p.r.log.Info("calendar entry edited before it was performed: its new version replaces the old", "entry", e.ID, "old_task", cur.ID)
	} else if cur.Status == ledger.TaskDone {
		// Done: every intent of it settled. Performed, it is a conflict;
		// settled without a click (missed, declined), the new version is
		// a new task.
		if performed, err := p.performedAny(cur.ID); err != nil {
			return ledger.Task{}, "", err
		} else if performed {
			return cur, cur.IdempotencyKey, errEditedAfterPerformed
		}
	} else if ok, err := p.superseded(cur); err != nil {
		return ledger.Task{}, "", err
	} else if !ok {
		return cur, cur.IdempotencyKey, nil // cancelled by a person
	}
	next := fmt.Sprintf("%s%s%d", key, ledger.RevisionSep, len(revs)+1)
	t, _, err = p.r.db.CreateTask(p.ctx, next, req)
	return t, next, err
}

// superseded reports whether a cancelled task was cancelled by an edit of
// its entry (rather than by a person).
func (p *pass) superseded(t ledger.Task) (bool, error) {
	evs, err := p.r.db.TaskEvents(p.ctx, t.ID)
	if err != nil {
		return false, err
	}
	return len(evs) > 0 && evs[len(evs)-1].Kind == "superseded", nil
}

// performedAny reports whether an action of the task ever went executing.
func (p *pass) performedAny(taskID string) (bool, error) {
	acts, err := p.r.db.ListActions(p.ctx, ledger.ActionFilter{TaskID: taskID})
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(acts, ledger.Action.Performed), nil
}

// completeTasks makes done, with their result, the open tasks whose
// intents are all settled: a calendar or planner task once its entry is,
// an agent's or the person's task once it is also finished. A later pass
// then skips them.
func (p *pass) completeTasks() error {
	ts, err := p.r.db.OpenTasks(p.ctx)
	if err != nil {
		return err
	}
	for _, t := range ts {
		done, err := tasks.CompleteIfSettled(p.ctx, p.r.db, t, p.r.cfg.MaxAttempts)
		if err != nil {
			return err
		}
		if done {
			p.sum.count(CountTasksDone)
		}
	}
	return nil
}
