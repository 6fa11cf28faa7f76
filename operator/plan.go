package operator

import (
	"errors"
	"fmt"
	"sort"

	"github.com/browserop/browserop/calendar"
	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/tasks"
)

// plan asks the planner command for candidates and carries those that pass
// the quality gate through the same path as calendar entries. A planner
// failure is reported and costs only its candidates.
func (p *pass) plan(due []calendar.Entry) error {
	if len(p.r.planner.Command) == 0 || p.stopped != "" {
		return nil
	}
	obs, err := p.observations(due)
	if err != nil {
		return err
	}
	cands, err := p.r.planner.Plan(p.ctx, obs)
	if err != nil {
		if errors.Is(err, ErrPlanner) {
			p.sum.count(CountPlannerFailures)
			p.problem(err.Error())
			return nil
		}
		return err
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].Score > cands[j].Score })
	for _, c := range cands {
		if c.Score < p.r.cfg.QualityThreshold {
			p.sum.count(CountQualitySkips)
			p.sum.Actions = append(p.sum.Actions, ActionReport{Type: kind.Kind(c.Type), Status: StatusQualitySkip,
				Reason: fmt.Sprintf("score %.2f is below the threshold %.2f", c.Score, p.r.cfg.QualityThreshold)})
			continue
		}
		site, ok := p.r.sites[c.Site]
		if !ok {
			p.problem(fmt.Sprintf("planner: a candidate names site %q, which has no adapter", c.Site))
			continue
		}
		origin := candidateKey(c)
		e := calendar.Entry{ID: origin, Site: c.Site, Actor: c.Actor, Type: c.Type, Text: c.Text, Parts: c.Parts, Target: c.Target, At: p.r.now()}
		// The contract comes from configuration; the planner names only what to do.
		task, _, err := p.r.db.CreateTask(p.ctx, origin, ledger.TaskRequest{Title: "planner candidate", Source: tasks.SourcePlanner,
			Contract: contractFor(site, c.Type), Input: entryInput(calendar.Entry{ID: "planner", Site: c.Site, Actor: c.Actor, Type: c.Type,
				Text: c.Text, Parts: c.Parts, Target: c.Target})})
		if err != nil {
			return err
		}
		if task.Status != ledger.TaskOpen {
			continue // done (its candidate is settled) or cancelled
		}
		if c.Type != kind.Thread {
			if _, err := p.process(entryIntent(e, task, origin), "", false); err != nil {
				return err
			}
			continue
		}
		parent := c.Target
		for i := range c.Parts {
			a, err := p.process(threadPart(e, task, origin, i, parent), "", false)
			if err != nil {
				return err
			}
			if a.Status != ledger.Verified {
				break
			}
			parent = a.CanonicalResult
		}
	}
	return nil
}

// observations is what the planner is shown: sites, remaining budgets,
// recent actions without payloads, and due calendar entries by id.
func (p *pass) observations(due []calendar.Entry) (Observations, error) {
	obs := Observations{Now: p.r.now(), Sites: []ObservedSite{}, Budgets: []ObservedBudget{}, Recent: []ObservedAction{}, Due: []ObservedCalendar{}}
	for _, name := range p.r.siteNames() {
		obs.Sites = append(obs.Sites, ObservedSite{Name: name, Origins: p.r.sites[name].Origins()})
	}
	usage, err := p.r.db.BudgetUsage(p.ctx, p.r.policy)
	if err != nil {
		return obs, err
	}
	for _, u := range usage {
		obs.Budgets = append(obs.Budgets, ObservedBudget{Limit: u.Limit.Name, Formats: u.Limit.Formats, Remaining: u.Remaining()})
	}
	acts, err := p.r.db.ListActions(p.ctx, ledger.ActionFilter{})
	if err != nil {
		return obs, err
	}
	if len(acts) > 50 {
		acts = acts[len(acts)-50:]
	}
	for _, a := range acts {
		obs.Recent = append(obs.Recent, ObservedAction{Type: string(a.Type), Status: string(a.Status), TargetURL: a.TargetURL, Result: a.CanonicalResult})
	}
	for _, e := range due {
		obs.Due = append(obs.Due, ObservedCalendar{ID: e.ID, Type: e.Type})
	}
	return obs, nil
}
