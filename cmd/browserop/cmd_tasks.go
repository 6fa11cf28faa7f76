package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/browserop/browserop/budgets"
	"github.com/browserop/browserop/config"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/tasks"
)

// openTaskCommand is openCommand for the commands that work on tasks: it
// also builds the task service on the ledger. It returns the positional
// arguments; the caller closes the ledger.
func (e *env) openTaskCommand(ctx context.Context, fs *flag.FlagSet, args []string, check func(pos []string) error) (*tasks.Service, *ledger.DB, []string, error) {
	cfg, db, pos, err := e.openCommand(ctx, fs, args, check)
	if err != nil {
		return nil, nil, nil, err
	}
	svc, _, err := e.taskService(cfg, db)
	if err != nil {
		db.Close()
		return nil, nil, nil, err
	}
	return svc, db, pos, nil
}

// taskService builds the task service on db from the configuration: the
// site adapters, the authority ceiling, the media directory and the
// budget policy, which it returns too. The media directory is located in
// the command's environment, as the runner's is.
func (e *env) taskService(cfg config.Config, db *ledger.DB) (*tasks.Service, budgets.Policy, error) {
	adapters, err := loadSites(cfg)
	if err != nil {
		return nil, budgets.Policy{}, err
	}
	p, err := cfg.Policy()
	if err != nil {
		return nil, budgets.Policy{}, err
	}
	opts := []tasks.Option{tasks.WithBudget(p)}
	// A media directory that cannot be located (no HOME) refuses only the
	// intents that attach media, naming calendar.media_dir.
	if dir, err := cfg.MediaDir(e.environ); err == nil {
		opts = append(opts, tasks.WithMediaDir(dir))
	}
	return tasks.New(db, adapters, cfg.Authority.Ceiling, opts...), p, nil
}

// cmdGrant records a domain the person approves for one task.
func cmdGrant(ctx context.Context, e *env, args []string) error {
	e.mustExist = true
	svc, db, pos, err := e.openTaskCommand(ctx, e.flags("grant"), args, func(pos []string) error {
		if len(pos) != 2 {
			return usageError("usage: browserop grant TASK DOMAIN")
		}
		return nil
	})
	if err != nil {
		return err
	}
	defer db.Close()
	st, err := svc.Grant(ctx, pos[0], pos[1], "person (cli)")
	if err != nil {
		return err
	}
	if e.json {
		return writeJSON(e.stdout, st)
	}
	fmt.Fprintf(e.stdout, "task %s may now also act on %s (within the ceiling; its contract is unchanged)\n", st.ID, strings.ToLower(pos[1]))
	return nil
}

// cmdConfirm answers an action that waits for confirmation.
func cmdConfirm(ctx context.Context, e *env, args []string) error {
	fs := e.flags("confirm")
	decline := fs.Bool("decline", false, "decline instead: the action ends as not done")
	reason := fs.String("reason", "", "why (with --decline)")
	e.mustExist = true
	svc, db, pos, err := e.openTaskCommand(ctx, fs, args, oneActionID)
	if err != nil {
		return err
	}
	defer db.Close()
	id := pos[0]
	var st tasks.ActionState
	if *decline {
		st, err = svc.Decline(ctx, id, "person (cli)", *reason)
	} else {
		st, err = svc.Confirm(ctx, id, "person (cli)")
	}
	if err != nil {
		return err
	}
	if e.json {
		return writeJSON(e.stdout, st)
	}
	if *decline {
		fmt.Fprintf(e.stdout, "%s declined: it will not be performed\n", id)
	} else {
		fmt.Fprintf(e.stdout, "%s confirmed: the next pass performs it\n", id)
	}
	return nil
}

// status is a task's status as a person reads it: open tasks that take
// no more intents are "finishing".
func status(t tasks.State) string {
	if t.Status == ledger.TaskOpen && t.Finished {
		return "finishing"
	}
	return t.Status
}

// cmdTasks lists tasks or shows one.
func cmdTasks(ctx context.Context, e *env, args []string) error {
	e.mustExist = true
	svc, db, pos, err := e.openTaskCommand(ctx, e.flags("tasks"), args, nil)
	if err != nil {
		return err
	}
	defer db.Close()
	switch {
	case len(pos) == 0 || pos[0] == "list":
		ts, err := svc.List(ctx, 0)
		if err != nil {
			return err
		}
		if e.json {
			return writeJSON(e.stdout, ts)
		}
		tw := table(e.stdout)
		fmt.Fprintln(tw, "ID\tSTATUS\tSOURCE\tTITLE\tACTIONS\tINTERACTION")
		for _, t := range ts {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", t.ID, status(t), dash(clean(t.Source)), dash(clean(t.Title)), len(t.Actions), t.Interaction)
		}
		return tw.Flush()
	case pos[0] == "show" && len(pos) == 2:
		t, err := svc.Get(ctx, pos[1])
		if err != nil {
			return err
		}
		if e.json {
			return writeJSON(e.stdout, t)
		}
		fmt.Fprintf(e.stdout, "task %s (%s, %s): %s\n", t.ID, status(t), dash(clean(t.Source)), dash(clean(t.Title)))
		fmt.Fprintf(e.stdout, "contract: domains %s; capabilities %s; confirm %s; max side effects %d\n",
			strings.Join(cleanAll(t.Contract.Domains), ","), strings.Join(cleanAll(t.Contract.Capabilities), ","),
			dash(strings.Join(cleanAll(t.Contract.Confirm), ",")), t.Contract.MaxSideEffects)
		fmt.Fprintf(e.stdout, "generations: owner %d (the operator that last acted on it), connection %d (its browser connection), interaction %d (observe and act turns)\n",
			t.OwnerGeneration, t.ConnectionGeneration, t.InteractionGeneration)
		for _, g := range t.Grants {
			fmt.Fprintf(e.stdout, "grant: %s by %s at %s\n", clean(g.Domain), clean(g.GrantedBy), fmtTime(g.At))
		}
		for _, tb := range t.Tabs {
			bound := ""
			if tb.Bound {
				bound = " (handed to the person for it)"
			}
			fmt.Fprintf(e.stdout, "tab record %d: %s, inspection epoch %d (first used in %d), %s%s\n",
				tb.Record, tb.State, tb.Epoch, tb.FirstEpoch, dash(clean(tb.Origin)), bound)
		}
		if c := t.Continuity; c != nil {
			printContinuity(e.stdout, c)
		}
		tw := table(e.stdout)
		fmt.Fprintln(tw, "ACTION\tINTENT\tTYPE\tSTATUS\tEFFECT\tRESULT / FAILURE")
		for _, a := range t.Actions {
			effect := a.Effect
			if a.EffectReason != "" {
				effect += " (" + a.EffectReason + ")"
			}
			detail := a.Result + a.Failure
			if a.SiteWords != "" {
				detail += "; the site said " + a.SiteWords
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", a.ID, dash(clean(a.IntentID)), a.Type, a.Status, effect, dash(clean(detail)))
		}
		tw.Flush()
		if t.Result != nil {
			fmt.Fprintln(e.stdout, "result:")
			tw = table(e.stdout)
			fmt.Fprintln(tw, "INTENT\tTYPE\tOUTCOME\tPERMALINK / FAILURE")
			for _, o := range t.Result.Intents {
				outcome := o.Outcome
				if o.Reason != "" {
					outcome += " (" + o.Reason + ")"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", clean(o.ID), clean(o.Type), outcome, dash(clean(o.Permalink+" "+o.Failure)))
			}
			tw.Flush()
		}
		for _, h := range t.History {
			fmt.Fprintf(e.stdout, "%s  %s: %s\n", fmtTime(h.At), clean(h.Kind), clean(h.Detail))
		}
		return nil
	}
	return usageError("usage: browserop tasks [list] | tasks show ID")
}

// printContinuity prints what the agent driving a task reported of itself,
// its words escaped (clean): they are an agent's.
func printContinuity(w io.Writer, c *ledger.Continuity) {
	provider := func(p *ledger.Provider) string {
		if p == nil {
			return "-"
		}
		out := clean(p.ID)
		if len(p.Fallbacks) > 0 {
			out += " (then " + strings.Join(cleanAll(p.Fallbacks), ", ") + ")"
		}
		return out
	}
	fmt.Fprintf(w, "continuity (as the agent reports it, at %s): planner %s; executor %s\n", fmtTime(c.UpdatedAt), provider(c.Planner), provider(c.Executor))
	if c.Subgoal != "" || len(c.SuccessCriteria) > 0 {
		fmt.Fprintf(w, "  subgoal: %s; success when: %s\n", dash(clean(c.Subgoal)), dash(strings.Join(cleanAll(c.SuccessCriteria), "; ")))
	}
	if o := c.Observation; o != nil {
		fmt.Fprintf(w, "  observation: %s, scope %s\n", clean(o.Mode), dash(strings.Join(cleanAll(o.Scope), ",")))
	}
	if c.Confidence != nil || c.EscalationReason != "" {
		conf := "-"
		if c.Confidence != nil {
			conf = fmt.Sprintf("%.2f", *c.Confidence)
		}
		fmt.Fprintf(w, "  confidence %s; escalation: %s\n", conf, dash(clean(c.EscalationReason)))
	}
	if l := c.Limits; l != nil {
		fmt.Fprintf(w, "  steps %d of %s; %ds of %s\n", l.Steps, limit(l.MaxSteps, ""), l.ElapsedSeconds, limit(l.MaxDurationSeconds, "s"))
	}
	if sk := c.Skill; sk != nil {
		fmt.Fprintf(w, "  skill %s version %s\n", clean(sk.ID), clean(sk.Version))
	}
}

func limit(n int, unit string) string {
	if n == 0 {
		return "no limit"
	}
	return fmt.Sprintf("%d%s", n, unit)
}
