package operator

import (
	"encoding/json"
	"fmt"

	"github.com/browserop/browserop/ledger"
)

// taskIntents performs the intents agents submitted to open tasks, in
// submission order, through the same path as calendar entries. An intent
// already settled (verified, or failed for good) is not revisited: each
// task's actions are read once and its settled intents skipped.
func (p *pass) taskIntents() error {
	intents, err := p.r.db.TaskIntents(p.ctx, "")
	if err != nil {
		return err
	}
	tasks := map[string]ledger.Task{}
	groups := map[string]map[string][]ledger.Action{}
	for _, ti := range intents {
		task, ok := tasks[ti.TaskID]
		if !ok {
			if task, err = p.r.db.GetTask(p.ctx, ti.TaskID); err != nil {
				return err
			}
			acts, err := p.r.db.ListActions(p.ctx, ledger.ActionFilter{TaskID: ti.TaskID})
			if err != nil {
				return err
			}
			tasks[ti.TaskID], groups[ti.TaskID] = task, byIntent(acts)
		}
		ref := refOf(ti)
		if outcomeOf(ref, groups[ti.TaskID][ref.origin], p.r.cfg.MaxAttempts).Settled() {
			continue
		}
		var in IntentRequest
		if err := json.Unmarshal(ti.Request, &in); err != nil {
			p.problem(fmt.Sprintf("task %s: intent %s: %v", ti.TaskID, ti.ID, err))
			continue
		}
		if _, ok := p.r.sites[in.Site]; !ok {
			p.problem(fmt.Sprintf("task %s: intent %s: site %q has no adapter", ti.TaskID, ti.ID, in.Site))
			continue
		}
		e := Entry{ID: ti.ID, Site: in.Site, Actor: in.Actor, Type: in.Type, Text: in.Text, Parts: in.Parts, Target: in.Target, At: ti.CreatedAt}
		if err := p.runEntry(e, task, ref.origin, false); err != nil {
			return err
		}
	}
	return nil
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
		done, err := completeIfSettled(p.ctx, p.r.db, t, p.r.cfg.MaxAttempts)
		if err != nil {
			return err
		}
		if done {
			p.sum.count("tasks_done")
		}
	}
	return nil
}
