package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/browserop/browserop/api"
	"github.com/browserop/browserop/config"
	"github.com/browserop/browserop/errcode"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/mcptools"
	"github.com/browserop/browserop/operator"
)

// passCommand is what the commands that run passes (run, serve) work
// with: the configuration, the open ledger and the runner on it.
type passCommand struct {
	cfg config.Config
	db  *ledger.DB
	r   *operator.Runner
}

// openPassCommand is the preamble of run and serve: openCommand with no
// positional arguments, the start-up checks (preflight) and the runner.
// The caller closes the result.
func (e *env) openPassCommand(ctx context.Context, fs *flag.FlagSet, args []string) (*passCommand, error) {
	cfg, db, _, err := e.openCommand(ctx, fs, args, noArgs(fs))
	if err != nil {
		return nil, err
	}
	if err := e.preflight(cfg); err != nil {
		db.Close()
		return nil, err
	}
	r, err := e.runner(cfg, db)
	if err != nil {
		db.Close()
		return nil, err
	}
	return &passCommand{cfg: cfg, db: db, r: r}, nil
}

// Close closes the runner, then the ledger.
func (c *passCommand) Close() {
	c.r.Close()
	c.db.Close()
}

func cmdRun(ctx context.Context, e *env, args []string) error {
	fs := e.flags("run")
	pc, err := e.openPassCommand(ctx, fs, args)
	if err != nil {
		return err
	}
	defer pc.Close()
	cfg, r := pc.cfg, pc.r
	// The person at a terminal is asked, once, which tabs browserop may
	// close (serve, a service, never asks).
	bc, err := cfg.ForBrowser(e.environ)
	if err != nil {
		return err
	}
	if err := e.askCleanupOnce(ctx, pc.db, profileKey(bc)); err != nil {
		return err
	}
	sum, err := drainingPass(ctx, r)
	if err != nil {
		if sum != nil {
			printSummary(e, sum)
		}
		return err
	}
	if err := printSummary(e, sum); err != nil {
		return err
	}
	if !e.json && len(sum.Actions) == 0 && len(sum.Problems) == 0 && sum.Outcome == operator.OutcomeOK {
		adapters, _ := loadSites(cfg)
		for _, h := range e.setupHints(cfg, adapters) {
			fmt.Fprintln(e.stdout, "next step: "+h)
		}
	}
	if err := sum.Err(); err != nil {
		return quietExit{errcode.Of(err).Exit}
	}
	return nil
}

func cmdServe(ctx context.Context, e *env, args []string) error {
	fs := e.flags("serve")
	once := fs.Bool("once-now", false, "also run one pass at start, before the first scheduled time")
	pc, err := e.openPassCommand(ctx, fs, args)
	if err != nil {
		return err
	}
	defer pc.Close()
	cfg, db, r := pc.cfg, pc.db, pc.r
	log := logger(cfg, e.stderr)
	sched, err := cron.ParseStandard(cfg.Schedule)
	if err != nil {
		return fmt.Errorf("%w: schedule %q: %v", errcode.ErrConfig, cfg.Schedule, err)
	}
	// The loopback API and the MCP endpoint for agents, with the same checks.
	user, agent, err := e.tokens(cfg)
	if err != nil {
		return err
	}
	tasks, p, err := e.taskService(cfg, db)
	if err != nil {
		return err
	}
	bc, err := cfg.ForBrowser(e.environ)
	if err != nil {
		return err
	}
	handler := api.New(api.Options{Tasks: tasks, UserToken: user, AgentToken: agent, MaxBody: int64(cfg.API.MaxBody),
		// The person's cleanup preference of the profile the runner opens
		// tabs in (the same key: profileKey), for the user token only.
		Cleanup: db, CleanupProfile: profileKey(bc),
		Status: func(ctx context.Context) (any, error) {
			r, err := db.Status(ctx, cfg.Operator.LeaseName, p)
			if err != nil {
				return nil, err
			}
			if role, _ := api.RoleFromContext(ctx); role != api.RoleUser {
				return agentStatusJSON(r), nil
			}
			return statusJSON(db.Path(), r), nil
		},
		MCP: mcptools.HTTPHandler(mcptools.NewServer(tasks, version)), Log: log})
	ln, err := api.Listen(cfg.API.Addr)
	if err != nil {
		return fmt.Errorf("%w: %v", errcode.ErrConfig, err)
	}
	apiDone := make(chan error, 1)
	go func() { apiDone <- api.Serve(ctx, ln, handler) }()
	defer func() {
		if err := <-apiDone; err != nil {
			log.Error("api server", "err", err)
		}
	}()
	log.Info("serving", "schedule", cfg.Schedule, "jitter", cfg.Jitter.String(), "ledger", db.Path(), "api", "http://"+ln.Addr().String())
	fmt.Fprintf(e.stdout, "browserop serving: api http://%s (token: browserop token), mcp http://%s/mcp\n", ln.Addr(), ln.Addr())
	pass := func() {
		// The runner logs the pass's one summary line; a pass that could
		// not even start has none.
		sum, err := drainingPass(ctx, r)
		switch {
		case err != nil && errors.Is(err, errcode.ErrConfig):
			log.Error("configuration error: fix it, then restart the service", "err", err)
		case err != nil && sum == nil:
			log.Error("pass failed", "err", err)
		}
	}
	if *once {
		pass()
	}
	for {
		next := sched.Next(time.Now())
		if cfg.Jitter > 0 {
			next = next.Add(rand.N(cfg.Jitter))
		}
		select {
		case <-ctx.Done():
			log.Info("stopped", "reason", context.Cause(ctx))
			return nil
		case <-time.After(time.Until(next)):
		}
		if ctx.Err() != nil {
			continue
		}
		pass()
	}
}

// drainGrace bounds how long a signalled pass may take to finish the action
// it is performing.
const drainGrace = time.Minute

// drainingPass runs one pass that a signal (ctx's end) does not cut short:
// the runner drains, the action in progress finishes and is recorded, and
// only after drainGrace is the pass itself cancelled.
func drainingPass(ctx context.Context, r *operator.Runner) (*operator.Summary, error) {
	pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	stop := context.AfterFunc(ctx, func() {
		r.Drain()
		time.AfterFunc(drainGrace, cancel)
	})
	defer stop()
	return r.Pass(pctx)
}

// errDemo marks a demo that did not show what it should.
var errDemo = errors.New("demo")
