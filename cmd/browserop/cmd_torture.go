package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/errcode"
	"github.com/browserop/browserop/torture"
)

// cmdTorture runs the torture harness (package torture): random calendars
// and faults against real `browserop run` processes, then the invariants
// checked against the demosite's oracle and the ledger. It exits 1 when any
// seed violates one.
func cmdTorture(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("browserop torture", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	seeds := fs.Int("seeds", 20, "how many seeds to run, from --seed on")
	first := fs.Uint64("seed", 1, "the first seed (with --seeds 1: reproduce exactly this seed)")
	parallel := fs.Int("parallel", 1, "seeds run at once")
	jsonOut := fs.Bool("json", false, "print the report as JSON instead of the summary lines")
	keep := fs.Bool("keep-failed", false, "keep a failed seed's directory (ledger, profile, logs) for inspection")
	keepAll := fs.Bool("keep-all", false, "keep every seed's directory")
	execPath := fs.String("browser", "", "Chrome or Chromium to use (default: found on PATH)")
	bin := fs.String("bin", "", "the browserop binary the operators run (default: this one)")
	dir := fs.String("dir", "", "directory for the seeds' worlds (default: the system's temp dir)")
	quiet := fs.Bool("quiet", false, "no line per seed on stderr")
	verbose := fs.Bool("verbose", false, "print every seed's schedule and timeline on stderr")
	loadCPU := fs.Int("load", 0, "a busy machine: this many processes spinning on a core each, plus one writing and fsyncing files, beside the operators")
	adapterAll := fs.Bool("adapter-faults", false, fmt.Sprintf("every seed runs with a wrong adapter (by default only seeds from %d on may, half of them)", torture.AdapterFaultSeeds))
	adapterOnly := fs.String("adapter-fault", "", "every seed runs with this wrong adapter, its variant drawn: "+strings.Join(torture.AdapterFaultNames(), ", "))
	personOnly := fs.String("person-fault", "", "every seed runs with this person fault: "+strings.Join(torture.PersonFaultNames(), ", "))
	if _, err := parseChecked(fs, args, noArgs(fs)); err != nil {
		return err
	}
	if *seeds < 1 || *parallel < 1 {
		return usageError("--seeds and --parallel must be at least 1")
	}
	if *loadCPU < 0 {
		return usageError("--load must be 0 (no load) or more")
	}
	if *adapterOnly != "" {
		if err := torture.ValidAdapterFault(*adapterOnly); err != nil {
			return usageError("--adapter-fault: %v", err)
		}
	}
	if *personOnly != "" {
		if err := torture.ValidPersonFault(*personOnly); err != nil {
			return usageError("--person-fault: %v", err)
		}
	}
	// --seed S alone reproduces seed S.
	seedSet, countSet := false, false
	fs.Visit(func(f *flag.Flag) {
		seedSet = seedSet || f.Name == "seed"
		countSet = countSet || f.Name == "seeds"
	})
	if seedSet && !countSet {
		*seeds = 1
	}
	exe, err := browser.FindExecutable(*execPath)
	if err != nil {
		return fmt.Errorf("%w: %v", errcode.ErrConfig, err)
	}
	if *bin == "" {
		if *bin, err = os.Executable(); err != nil {
			return err
		}
	}
	o := torture.Options{Bin: *bin, Chrome: exe, Dir: *dir, Parallel: *parallel, KeepFailed: *keep, KeepAll: *keepAll, Verbose: *verbose,
		Load: torture.Load{CPU: *loadCPU, IO: *loadCPU > 0}, Adapter: torture.AdapterPolicy{All: *adapterAll, Only: *adapterOnly, Person: *personOnly}}
	for i := range *seeds {
		o.Seeds = append(o.Seeds, *first+uint64(i))
	}
	if !*quiet {
		o.Progress = e.stderr
	}
	rep, err := torture.Run(ctx, o)
	if err != nil && rep == nil {
		return err
	}
	if *jsonOut {
		out, jerr := rep.JSON()
		if jerr != nil {
			return jerr
		}
		fmt.Fprintln(e.stdout, string(out))
	} else {
		fmt.Fprintln(e.stdout, rep.SummaryLine())
		fmt.Fprintln(e.stdout, rep.ClosingLine())
	}
	if err != nil {
		return err
	}
	// A seed that violated an invariant, and a seed the harness could not
	// run (which proves nothing), both end the run non-zero.
	if rep.Failed > 0 || rep.Errors > 0 {
		return quietExit{errcode.ExitInternal}
	}
	return nil
}
