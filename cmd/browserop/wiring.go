package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/bundled"
	"github.com/browserop/browserop/config"
	"github.com/browserop/browserop/errcode"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/operator"
	"github.com/browserop/browserop/sites"
)

// logger builds the slog logger: text on a terminal, JSON otherwise (under
// a service), or as log.format says. Logs carry ids, states and reasons,
// never page text, cookies or tokens.
func logger(cfg config.Config, w io.Writer) *slog.Logger {
	level := slog.LevelInfo
	switch cfg.Log.Level {
	case "debug":
		level = slog.LevelDebug
	case "warn":
		level = slog.LevelWarn
	case "error":
		level = slog.LevelError
	}
	opts := &slog.HandlerOptions{Level: level}
	format := cfg.Log.Format
	if format == "" || format == "auto" {
		format = "json"
		if f, ok := w.(*os.File); ok {
			if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
				format = "text"
			}
		}
	}
	if format == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

// loadSites returns the bundled adapters that are configured as they are
// (bundled.Configured), replaced or extended by those in sites.dir.
func loadSites(cfg config.Config) ([]sites.Adapter, error) {
	shipped, err := sites.LoadFS(bundled.Sites, "sites")
	if err != nil {
		return nil, fmt.Errorf("%w: bundled sites: %v", errcode.ErrConfig, err)
	}
	byName := map[string]sites.Adapter{}
	var order []string
	for _, d := range shipped {
		if !slices.Contains(bundled.Configured, d.Name()) {
			continue
		}
		byName[d.Name()] = d
		order = append(order, d.Name())
	}
	if cfg.Sites.Dir != "" {
		own, err := sites.LoadDir(cfg.Sites.Dir)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errcode.ErrConfig, err)
		}
		for _, d := range own {
			if _, ok := byName[d.Name()]; !ok {
				order = append(order, d.Name())
			}
			byName[d.Name()] = d
		}
	}
	out := make([]sites.Adapter, 0, len(order))
	for _, n := range order {
		out = append(out, byName[n])
	}
	return out, nil
}

// configuredSite returns the configured site called name ("" is the
// first), or a usage error that names it as what ("--site", "site") and
// lists the configured sites.
func configuredSite(cfg config.Config, name, what string) (sites.Adapter, error) {
	adapters, err := loadSites(cfg)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(adapters))
	for _, a := range adapters {
		if a.Name() == name || name == "" {
			return a, nil
		}
		names = append(names, a.Name())
	}
	return nil, usageError("%s %q is not configured (sites: %s)", what, name, strings.Join(names, ", "))
}

// attachMode reports whether the configuration attaches to the person's
// running Chrome (browser.devtools_url or its active-port file is set)
// rather than launching one on the dedicated profile.
func attachMode(bc browser.Config) bool {
	return bc.DevToolsURL != "" || bc.DevToolsActivePortFile != ""
}

// connector attaches to the person's running Chrome in attach mode, else
// launches Chrome on the dedicated profile. A launched Chrome is
// persistent: it may outlive this process (it holds tabs the person opened
// in it), and the next launch attaches to it again.
func connector(bc browser.Config) operator.ConnectFunc {
	return func(ctx context.Context) (*browser.Browser, error) {
		if attachMode(bc) {
			b, err := browser.Attach(ctx, bc)
			return b, connectError(bc, err)
		}
		lc := bc
		lc.Persistent = true
		b, err := browser.Launch(ctx, lc)
		return b, connectError(bc, err)
	}
}

// browserRunning tells a pass whether there is a browser to reconcile
// earlier tab records in without starting one: in attach mode the
// person's Chrome (connecting fails fast when it is down), in launch mode
// a Chrome still running on the dedicated profile.
func browserRunning(bc browser.Config) func() bool {
	if attachMode(bc) {
		return func() bool { return true }
	}
	return func() bool { return browser.ProfileRunning(bc.ProfileDir) }
}

// runner wires a Runner from the configuration.
func (e *env) runner(cfg config.Config, db *ledger.DB) (*operator.Runner, error) {
	adapters, err := loadSites(cfg)
	if err != nil {
		return nil, err
	}
	p, err := cfg.Policy()
	if err != nil {
		return nil, err
	}
	bc, err := cfg.ForBrowser(e.environ)
	if err != nil {
		return nil, err
	}
	rc, err := cfg.ForOperator(e.environ)
	if err != nil {
		return nil, err
	}
	rc.BrowserRunning, rc.StopIdleBrowser, rc.Profile = browserRunning(bc), !attachMode(bc), profileKey(bc)
	planner := operator.Planner{Command: cfg.Planner.Command, Timeout: cfg.Planner.Timeout, MaxOutput: cfg.Planner.MaxOutput}
	return operator.NewRunner(db, adapters, p, planner, connector(bc), rc, logger(cfg, e.stderr)), nil
}

// printSummary prints a pass's summary as a table, or JSON.
func printSummary(e *env, sum *operator.Summary) error {
	if e.json {
		return writeJSON(e.stdout, sum)
	}
	w := e.stdout
	switch sum.Outcome {
	case operator.OutcomeLockedSkip:
		if sum.LockedBy == "" || sum.LockedUntil == nil {
			fmt.Fprintln(w, "another operator holds the lease: nothing done (locked_skip)")
			return nil
		}
		fmt.Fprintf(w, "another operator holds the lease: %s, until %s (in %s unless it renews it): nothing done (locked_skip)\n",
			sum.LockedBy, fmtTime(*sum.LockedUntil), time.Until(*sum.LockedUntil).Round(time.Second))
		return nil
	}
	fmt.Fprintf(w, "run %s (generation %d): %s\n", sum.RunID, sum.Generation, sum.Outcome)
	if len(sum.Actions) > 0 {
		tw := table(w)
		fmt.Fprintln(tw, "ENTRY\tTYPE\tOUTCOME\tPERMALINK / REASON")
		for _, a := range sum.Actions {
			detail := a.Result
			if detail == "" {
				detail = a.Reason
			}
			outcome := string(a.Status)
			if a.Note != "" && string(a.Note) != outcome {
				outcome += " (" + strings.ReplaceAll(string(a.Note), "_", " ") + ")"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", dash(clean(a.Entry)), clean(string(a.Type)), clean(outcome), clean(detail))
		}
		tw.Flush()
	} else {
		fmt.Fprintln(w, "nothing to do: no entry or intent is due that is not already settled")
	}
	if sum.TabsLeftOpen != "" {
		fmt.Fprintln(w, clean(sum.TabsLeftOpen))
	}
	for _, site := range slices.Sorted(maps.Keys(sum.StoppedSites)) {
		wentOn := " (the other sites went on)"
		if sum.PassStop != "" {
			wentOn = ""
		}
		fmt.Fprintf(w, "hard stop on site %s: %s%s\n", site, clean(sum.StoppedSites[site]), wentOn)
	}
	switch {
	case sum.PassStop != "":
		fmt.Fprintf(w, "hard stop: %s\n", clean(sum.PassStop))
	case len(sum.StoppedSites) == 0 && sum.HardStop != "":
		fmt.Fprintf(w, "hard stop: %s\n", clean(sum.HardStop))
	}
	for _, id := range sum.NeedsPerson {
		fmt.Fprintf(w, "needs a person: %s (browserop actions show %s)\n", id, id)
	}
	for _, id := range sum.WaitingForSite {
		fmt.Fprintf(w, "waiting for the site: %s settles by itself; a later pass decides it (browserop actions show %s)\n", id, id)
	}
	for _, p := range sum.Problems {
		fmt.Fprintf(w, "problem: %s\n", clean(p))
	}
	return nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
