package operator

import (
	"errors"
	"fmt"
	"slices"

	"github.com/browserop/browserop/calendar"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/sites"
	"github.com/browserop/browserop/tasks"
)

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
	req := ledger.TaskRequest{Title: e.ID, Source: tasks.SourceCalendar, Contract: contractFor(site, e.Capability()), Input: entryInput(e)}
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
