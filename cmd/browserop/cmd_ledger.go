package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/browserop/browserop/errcode"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/operator"
	"github.com/browserop/browserop/tasks"
)

func cmdStatus(ctx context.Context, e *env, args []string) error {
	e.mustExist = true
	cfg, db, _, err := e.openCommand(ctx, e.flags("status"), args, nil)
	if err != nil {
		return err
	}
	defer db.Close()
	p, err := cfg.Policy()
	if err != nil {
		return err
	}
	r, err := db.Status(ctx, cfg.Operator.LeaseName, p)
	if err != nil {
		return err
	}
	if e.json {
		err = writeJSON(e.stdout, statusJSON(db.Path(), r))
	} else {
		w := e.stdout
		fmt.Fprintf(w, "ledger: %s\n", db.Path())
		printLease(w, r.Lease, r.LeaseHeld)
		fmt.Fprintln(w)
		tw := table(w)
		fmt.Fprintln(tw, "STATUS\tACTIONS")
		for _, s := range ledger.Statuses {
			fmt.Fprintf(tw, "%s\t%d\n", s, r.Counts[s])
		}
		tw.Flush()
		fmt.Fprintln(w)
		if len(r.Budgets) > 0 {
			tw = table(w)
			fmt.Fprintln(tw, "LIMIT\tFORMATS\tUSED\tIN FLIGHT\tMAX\tWINDOW")
			for _, u := range r.Budgets {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\n", u.Limit.Name, strings.Join(u.Limit.Formats, ","), u.Used, u.InFlight, u.Limit.Max, u.Limit.Window)
			}
			tw.Flush()
			fmt.Fprintln(w)
		}
		if len(r.Ambiguous) == 0 {
			fmt.Fprintln(w, "no ambiguous actions")
		} else {
			fmt.Fprintf(w, "%d ambiguous action(s) need a person (browserop actions resolve ID --verified URL | --absent [--retry] --reason TEXT):\n", len(r.Ambiguous))
			printActions(w, r.Ambiguous)
		}
	}
	if err != nil {
		return err
	}
	if len(r.Ambiguous) > 0 {
		return quietExit{errcode.ExitNeedsPerson}
	}
	return nil
}

func printActions(w interface{ Write([]byte) (int, error) }, as []ledger.Action) {
	tw := table(w)
	fmt.Fprintln(tw, "ID\tSTATUS\tTYPE\tACTOR\tATTEMPT\tUPDATED\tRESULT / REASON")
	for _, a := range as {
		detail := a.CanonicalResult
		if detail == "" {
			detail = a.FailureReason
		}
		if detail == "" && a.LastStop != nil {
			detail = a.LastStop.Reason()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", a.ID, a.Status, clean(string(a.Type)), clean(a.Actor), a.Attempt, fmtTime(a.UpdatedAt), clean(detail))
	}
	tw.Flush()
}

func cmdActions(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return usageError("actions needs a subcommand: list, show or resolve")
	}
	switch args[0] {
	case "list":
		return actionsList(ctx, e, args[1:])
	case "show":
		return actionsShow(ctx, e, args[1:])
	case "resolve":
		return actionsResolve(ctx, e, args[1:])
	}
	return usageError("unknown actions subcommand %q: use list, show or resolve", args[0])
}

func actionsList(ctx context.Context, e *env, args []string) error {
	fs := e.flags("actions list")
	status := fs.String("status", "", "only actions in this status ("+strings.Join(statusNames(), ", ")+")")
	task := fs.String("task", "", "only actions of this task")
	var fl ledger.ActionFilter
	check := func(pos []string) error {
		if err := noArgs(fs)(pos); err != nil {
			return err
		}
		if *status != "" {
			s := ledger.Status(*status)
			if !s.Valid() {
				return usageError("--status %q is not one of %s", *status, strings.Join(statusNames(), ", "))
			}
			fl.Statuses = []ledger.Status{s}
		}
		fl.TaskID = *task
		return nil
	}
	e.mustExist = true
	_, db, _, err := e.openCommand(ctx, fs, args, check)
	if err != nil {
		return err
	}
	defer db.Close()
	as, err := db.ListActions(ctx, fl)
	if err != nil {
		return err
	}
	if e.json {
		out := []actionJSON{}
		for _, a := range as {
			out = append(out, toActionJSON(a, nil))
		}
		return writeJSON(e.stdout, out)
	}
	if len(as) == 0 {
		fmt.Fprintln(e.stdout, "no actions")
		return nil
	}
	printActions(e.stdout, as)
	return nil
}

func statusNames() []string {
	var out []string
	for _, s := range ledger.Statuses {
		out = append(out, string(s))
	}
	return out
}

func actionsShow(ctx context.Context, e *env, args []string) error {
	e.mustExist = true
	_, db, pos, err := e.openCommand(ctx, e.flags("actions show"), args, oneActionID)
	if err != nil {
		return err
	}
	defer db.Close()
	id := pos[0]
	a, err := db.GetAction(ctx, id)
	if err != nil {
		return err
	}
	evs, err := db.Events(ctx, id)
	if err != nil {
		return err
	}
	// An action that needs the person's confirmation: what they answered,
	// and why a pass holds it, if one does.
	var confirmation, held string
	if c, err := db.GetConfirmation(ctx, id); err == nil {
		confirmation = strings.TrimSpace(c.State + " " + c.By)
		if c.Reason != "" {
			confirmation += ": " + c.Reason
		}
		held = c.Held
	} else if !errors.Is(err, ledger.ErrNotFound) {
		return err
	}
	if e.json {
		out := toActionJSON(a, evs)
		out.Confirmation, out.Held = confirmation, held
		return writeJSON(e.stdout, out)
	}
	// A planned action a pass's hard stop held: which stop, its cause, in
	// which run and when.
	var stopped string
	if s := a.LastStop; s != nil {
		stopped = fmt.Sprintf("%s; in run %s at %s", s.Reason(), s.RunID, fmtTime(s.At))
	}
	w := e.stdout
	tw := table(w)
	for _, kv := range [][2]string{
		{"id", a.ID}, {"status", string(a.Status)}, {"type", string(a.Type)}, {"format", a.Format}, {"site", a.Site},
		{"actor", a.Actor}, {"target", a.TargetURL}, {"payload", string(a.Payload)}, {"attempt", fmt.Sprint(a.Attempt)},
		{"result", a.CanonicalResult}, {"landed link", a.LandedURL}, {"failure", strings.TrimSpace(string(a.FailureClass) + " " + a.FailureReason)}, {"site said", a.FailureSiteWords},
		{"may be on", operator.Handles(a.OtherAccounts)}, {"confirmation", confirmation}, {"held", held}, {"last stop", stopped},
		{"task", a.TaskID}, {"run", a.RunID}, {"key", a.IdempotencyKey}, {"created", fmtTime(a.CreatedAt)},
		{"updated", fmtTime(a.UpdatedAt)},
	} {
		if kv[1] != "" {
			fmt.Fprintf(tw, "%s:\t%s\n", kv[0], clean(kv[1]))
		}
	}
	tw.Flush()
	fmt.Fprintln(w, "\nhistory:")
	tw = table(w)
	fmt.Fprintln(tw, "AT\tFROM\tTO\tGEN\tBY\tREASON")
	for _, ev := range evs {
		from := string(ev.From)
		if from == "" {
			from = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", fmtTime(ev.At), from, ev.To, ev.Generation, clean(ev.By), clean(ev.Reason))
	}
	return tw.Flush()
}

func actionsResolve(ctx context.Context, e *env, args []string) error {
	fs := e.flags("actions resolve")
	verified := fs.String("verified", "", "the canonical URL of the effect you found on the site")
	absent := fs.Bool("absent", false, "the effect is not on the site: the action ends failed, not to be retried (unless --retry)")
	retry := fs.Bool("retry", false, "with --absent: a later pass tries the intent again")
	reason := fs.String("reason", "", "why (required with --absent)")
	check := func(pos []string) error {
		if err := oneActionID(pos); err != nil {
			return err
		}
		switch {
		case *retry && !*absent:
			return usageError("--retry goes with --absent")
		case *verified != "" && *absent:
			return usageError("give either --verified URL or --absent, not both")
		case *verified == "" && !*absent:
			return usageError("give --verified URL or --absent --reason TEXT")
		case *absent && strings.TrimSpace(*reason) == "":
			return usageError("--absent needs --reason TEXT saying how you know")
		}
		return nil
	}
	e.mustExist = true
	svc, db, pos, err := e.openTaskCommand(ctx, fs, args, check)
	if err != nil {
		return err
	}
	defer db.Close()
	id := pos[0]
	// The one route of the CLI, REST and MCP: the URL must be on the
	// action's site, and the budget counts a verified effect.
	if _, err := svc.Resolve(ctx, id, tasks.Resolution{VerifiedURL: *verified, Reason: *reason, Retry: *retry}); err != nil {
		if errors.Is(err, ledger.ErrIllegalTransition) {
			return fmt.Errorf("%w: %v", errcode.ErrUsage, err)
		}
		return err
	}
	a, err := db.GetAction(ctx, id)
	if err != nil {
		return err
	}
	if e.json {
		return writeJSON(e.stdout, toActionJSON(a, nil))
	}
	if a.Status == ledger.Failed && a.FailureClass == ledger.Definitive {
		fmt.Fprintf(e.stdout, "%s is now %s; a later pass tries it again\n", a.ID, a.Status)
		return nil
	}
	fmt.Fprintf(e.stdout, "%s is now %s\n", a.ID, a.Status)
	return nil
}

func cmdLease(ctx context.Context, e *env, args []string) error {
	e.mustExist = true
	cfg, db, _, err := e.openCommand(ctx, e.flags("lease"), args, nil)
	if err != nil {
		return err
	}
	defer db.Close()
	l, err := db.GetLease(ctx, cfg.Operator.LeaseName)
	var lp *ledger.Lease
	switch {
	case err == nil:
		lp = &l
	case !errors.Is(err, ledger.ErrNotFound):
		return err
	}
	held := lp != nil && lp.Held(time.Now())
	if e.json {
		return writeJSON(e.stdout, map[string]any{"lease": toLeaseJSON(lp, held)})
	}
	printLease(e.stdout, lp, held)
	return nil
}

func cmdMigrate(ctx context.Context, e *env, args []string) error {
	e.skipMigrate = true
	_, db, _, err := e.openCommand(ctx, e.flags("migrate"), args, nil)
	if err != nil {
		return err
	}
	defer db.Close()
	applied, err := db.Migrate(ctx)
	if err != nil {
		return err
	}
	v, err := db.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	if e.json {
		names := []string{}
		for _, m := range applied {
			names = append(names, fmt.Sprintf("%04d_%s", m.Version, m.Name))
		}
		return writeJSON(e.stdout, map[string]any{"ledger": db.Path(), "schema_version": v, "applied": names})
	}
	for _, m := range applied {
		fmt.Fprintf(e.stdout, "applied %04d_%s\n", m.Version, m.Name)
	}
	fmt.Fprintf(e.stdout, "ledger %s is at schema version %d\n", db.Path(), v)
	return nil
}

// statusJSON is the status report as scripts and the person see it.
func statusJSON(path string, r ledger.Report) map[string]any {
	counts := map[string]int{}
	for s, n := range r.Counts {
		counts[string(s)] = n
	}
	amb := []actionJSON{}
	for _, a := range r.Ambiguous {
		amb = append(amb, toActionJSON(a, nil))
	}
	return map[string]any{"ledger": path, "lease": toLeaseJSON(r.Lease, r.LeaseHeld),
		"counts": counts, "ambiguous": amb, "budgets": toBudgetJSON(r.Budgets)}
}

// agentStatusJSON is the status report as an agent sees it: no ledger
// path, no lease holder (host:pid), and the ambiguous actions only
// counted, for they may be the person's own.
func agentStatusJSON(r ledger.Report) map[string]any {
	counts := map[string]int{}
	for s, n := range r.Counts {
		counts[string(s)] = n
	}
	var lease map[string]any
	if l := toLeaseJSON(r.Lease, r.LeaseHeld); l != nil {
		lease = map[string]any{"held": l.Held, "generation": l.Generation, "expires_at": l.ExpiresAt}
	}
	return map[string]any{"lease": lease, "counts": counts, "ambiguous": len(r.Ambiguous), "budgets": toBudgetJSON(r.Budgets)}
}
