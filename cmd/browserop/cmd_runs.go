package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/browserop/browserop/tasks"
)

// cmdRuns lists the operator's passes, newest first, or shows one with
// its counts and skips (budget, quality, missed): what each skip was for
// (site, type, calendar entry, action) and why, never an entry's text.
func cmdRuns(ctx context.Context, e *env, args []string) error {
	fs := e.flags("runs")
	limit := fs.Int("limit", tasks.DefaultRuns, fmt.Sprintf("list at most this many runs (1 to %d)", tasks.MaxRuns))
	e.mustExist = true
	svc, db, pos, err := e.openTaskCommand(ctx, fs, args, func(pos []string) error {
		switch {
		case len(pos) == 0 || len(pos) == 1 && pos[0] == "list":
			if *limit < 1 || *limit > tasks.MaxRuns {
				return usageError("--limit must be from 1 to %d, got %d", tasks.MaxRuns, *limit)
			}
			return nil
		case len(pos) == 2 && pos[0] == "show":
			return nil
		}
		return usageError("usage: browserop runs [list] [--limit N] | runs show RUN")
	})
	if err != nil {
		return err
	}
	defer db.Close()
	if len(pos) == 2 {
		r, err := svc.Run(ctx, pos[1])
		if err != nil {
			return err
		}
		if e.json {
			return writeJSON(e.stdout, r)
		}
		printRun(e, r)
		return nil
	}
	rs, err := svc.Runs(ctx, *limit)
	if err != nil {
		return err
	}
	if e.json {
		return writeJSON(e.stdout, rs)
	}
	if len(rs) == 0 {
		fmt.Fprintln(e.stdout, "no runs")
		return nil
	}
	tw := table(e.stdout)
	fmt.Fprintln(tw, "RUN\tGEN\tSTARTED\tENDED\tOUTCOME\tSKIPS\tNEEDS PERSON")
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%d\t%d\n", clean(r.ID), r.Generation, fmtTime(r.StartedAt), runEnd(r), clean(r.Outcome), len(r.Skips), r.NeedsPerson)
	}
	return tw.Flush()
}

func runEnd(r tasks.RunState) string {
	if r.EndedAt == nil {
		return "-"
	}
	return fmtTime(*r.EndedAt)
}

// printRun prints one run: its record, its stops, its counts and its skips.
func printRun(e *env, r tasks.RunState) {
	fmt.Fprintf(e.stdout, "run %s (generation %d): %s\n", clean(r.ID), r.Generation, clean(r.Outcome))
	fmt.Fprintf(e.stdout, "started %s, ended %s\n", fmtTime(r.StartedAt), runEnd(r))
	if r.Unreadable {
		fmt.Fprintln(e.stdout, "its summary in the ledger does not decode: nothing more is known of it")
	}
	if r.HardStop != "" {
		fmt.Fprintf(e.stdout, "hard stop: %s\n", clean(r.HardStop))
	}
	for _, site := range slices.Sorted(maps.Keys(r.StoppedSites)) {
		fmt.Fprintf(e.stdout, "stopped on %s: %s\n", clean(site), clean(r.StoppedSites[site]))
	}
	if r.NeedsPerson > 0 {
		fmt.Fprintf(e.stdout, "needs a person: %d ambiguous actions\n", r.NeedsPerson)
	}
	if len(r.Counts) > 0 {
		var cs []string
		for _, k := range slices.Sorted(maps.Keys(r.Counts)) {
			cs = append(cs, fmt.Sprintf("%s %d", clean(k), r.Counts[k]))
		}
		fmt.Fprintf(e.stdout, "counts: %s\n", strings.Join(cs, ", "))
	}
	if len(r.Skips) == 0 {
		fmt.Fprintln(e.stdout, "skips: none")
		return
	}
	tw := table(e.stdout)
	fmt.Fprintln(tw, "SKIP\tSITE\tTYPE\tENTRY\tACTION\tREASON")
	for _, s := range r.Skips {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", clean(s.Kind), dash(clean(s.Site)), clean(s.Type), dash(clean(s.Entry)), dash(clean(s.ActionID)), clean(s.Reason))
	}
	tw.Flush()
}
