package operator

import "github.com/browserop/browserop/tasks"

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
