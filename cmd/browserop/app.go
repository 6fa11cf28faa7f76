package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/browserop/browserop/config"
	"github.com/browserop/browserop/errcode"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/service"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// env holds what every command gets: its output streams, the parsed common
// flags and the environment.
type env struct {
	stdout, stderr io.Writer
	configPath     string
	ledgerPath     string
	json           bool
	environ        []string
	skipMigrate    bool // only `migrate` opens without migrating, to report what it applies
	mustExist      bool // inspection commands never create a ledger
	// exec runs a program of the system (systemctl, launchctl, journalctl,
	// loginctl); tests replace it where the real one cannot run.
	exec service.ExecFunc
	// goos is the platform whose service manager `service` uses.
	goos string
	// stdin is where a question to the person is answered (run's
	// cleanup question), and interactive whether one may be asked:
	// stdin and stdout a terminal (nil: never). Tests replace both.
	stdin       io.Reader
	interactive func() bool
}

// command is one subcommand.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, e *env, args []string) error
}

func commands() []command {
	return []command{
		{"version", "print the version", cmdVersion},
		{"doctor", "check the installation: config, ledger, Chrome, profile, sign-in per site, calendar, service, API [--no-browser]", cmdDoctor},
		{"login", "open a visible browser on the dedicated profile to sign in to a site once: login [--site NAME]", cmdLogin},
		{"status", "lease, action counts, ambiguous actions and budget use (exit 5 while ambiguous actions wait)", cmdStatus},
		{"actions", "list, show or resolve actions: actions list [--status S] [--task T] | show ID | resolve ID (--verified URL | --absent [--retry] --reason TEXT)", cmdActions},
		{"lease", "show the operator lease: holder, generation, expiry", cmdLease},
		{"sites", "the configured sites, or check one adapter on the signed-in profile (opens and reads, follows each action up to its committing click and never clicks it; types only --text, and into an editor that keeps drafts only with --fill): sites list | sites check NAME [--target URL] [--actor A] [--text T [--fill]] | sites template NAME (print a bundled adapter to copy into sites.dir)", cmdSites},
		{"config", "the person's settings in the ledger: config cleanup [never|submitted_only|submitted_and_probe_blockers] (which of its tabs browserop may close; unset, it closes none that needs your consent)", cmdConfig},
		{"tabs", "the tab ledger: record, site, state, epoch, close proof, task (--open: only those not closed with proof) | show RECORD: its close facts, by epoch and surface", cmdTabs},
		{"tasks", "list agent tasks, or show one: tasks [list] | tasks show ID", cmdTasks},
		{"runs", "the operator's passes, newest first, or one with its counts and skips (budget, quality, missed): runs [list] [--limit N] | runs show RUN", cmdRuns},
		{"grant", "approve one more domain for one task, within authority.ceiling: grant TASK DOMAIN", cmdGrant},
		{"confirm", "confirm an action that waits for you (or --decline --reason TEXT): confirm ACTION", cmdConfirm},
		{"token", "print the API bearer token (the person's; --agent for the agents' one)", cmdToken},
		{"migrate", "apply pending ledger migrations", cmdMigrate},
		{"run", "one operator pass: reconcile, then publish what is due (exit 3 hard stop, 4 locked, 5 needs a person)", cmdRun},
		{"mcp", "serve the MCP task tools over stdio for a desktop client: mcp [--config FILE]", cmdMCP},
		{"serve", "run passes on the configured cron schedule until SIGINT or SIGTERM", cmdServe},
		{"service", "run serve as a systemd user unit or launchd agent: service install [--linger] | status | logs [-n N] [--follow] | uninstall", cmdService},
		{"demo", "the demo: demosite + headless Chromium + a small calendar, two passes, nothing published twice", cmdDemo},
		{"demosite", "run the demo site on its own: demosite --addr 127.0.0.1:8787 [--fault name=value]", cmdDemosite},
		{"torture", "prove the promises: random calendars and faults against real operators, invariants checked: torture --seeds N [--seed S] [--json]", cmdTorture},
	}
}

// usageError marks a malformed command line (exit 2).
func usageError(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errcode.ErrUsage, fmt.Sprintf(format, args...))
}

// Run runs browserop with args (without the program name) and returns its
// exit code. Tests call it directly.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return RunEnv(ctx, args, stdout, stderr, os.Environ())
}

// RunEnv is Run with an explicit environment.
func RunEnv(ctx context.Context, args []string, stdout, stderr io.Writer, environ []string) int {
	return runWith(ctx, &env{stdout: stdout, stderr: stderr, environ: environ, exec: service.SystemExec, goos: runtime.GOOS,
		stdin: os.Stdin, interactive: func() bool { return isTerminal(os.Stdin) && isTerminal(stdout) }}, args)
}

// isTerminal reports whether v is a file open on a terminal (a character
// device): never a pipe, a regular file or a buffer.
func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	if !ok || f == nil {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// runWith runs a command line in e.
func runWith(ctx context.Context, e *env, args []string) int {
	stdout, stderr := e.stdout, e.stderr
	args, err := globalFlags(e, args)
	if err != nil {
		return report(e, err)
	}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		printUsage(stdout)
		if len(args) == 0 {
			return errcode.ExitUsage
		}
		return errcode.ExitOK
	}
	for _, c := range commands() {
		if c.name == args[0] {
			err := c.run(ctx, e, args[1:])
			return report(e, err)
		}
	}
	fmt.Fprintf(stderr, "browserop: unknown command %q; run 'browserop help'\n", args[0])
	return errcode.ExitUsage
}

func report(e *env, err error) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return errcode.ExitOK
	}
	var q quietExit
	if errors.As(err, &q) {
		return q.code
	}
	// An error of several lines (every problem of an adapter) prints one
	// line each, the later ones indented; each is cleaned on its own, so no
	// line can start with anything but what browserop wrote.
	for i, line := range strings.Split(err.Error(), "\n") {
		if i == 0 {
			fmt.Fprintf(e.stderr, "browserop: %s\n", clean(line))
		} else {
			fmt.Fprintf(e.stderr, "  %s\n", clean(line))
		}
	}
	return errcode.Of(err).Exit
}

// quietExit ends a command with a code and no message: the command has
// already said everything.
type quietExit struct{ code int }

func (q quietExit) Error() string { return fmt.Sprintf("exit %d", q.code) }

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: browserop COMMAND [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "commands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "common flags, before or after the command: --config FILE, --ledger FILE, --json")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "exit codes:")
	for _, x := range errcode.ExitCodes {
		fmt.Fprintf(w, "  %d  %s\n", x.Code, x.Meaning)
	}
}

// flags returns a flag set with the common flags bound to e. Their
// defaults are what the global flags (before the command) set.
func (e *env) flags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("browserop "+name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.StringVar(&e.configPath, "config", e.configPath, "configuration file (default $XDG_CONFIG_HOME/browserop/config.yaml)")
	fs.StringVar(&e.ledgerPath, "ledger", e.ledgerPath, "ledger file (default from config, else the XDG state directory)")
	fs.BoolVar(&e.json, "json", e.json, "print JSON for scripts")
	return fs
}

// globalFlags takes the common flags that come before the command
// (`browserop --config FILE run`) and returns the rest of args, starting
// with the command.
func globalFlags(e *env, args []string) ([]string, error) {
	fs := flag.NewFlagSet("browserop", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&e.configPath, "config", "", "")
	fs.StringVar(&e.ledgerPath, "ledger", "", "")
	fs.BoolVar(&e.json, "json", false, "")
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && args[0] != "-h" && args[0] != "--help" && args[0] != "-" {
		// One flag at a time, so that -h after the flags still reaches help.
		n := 1
		if name := strings.TrimLeft(args[0], "-"); !strings.Contains(name, "=") && name != "json" && len(args) > 1 {
			n = 2
		}
		if err := fs.Parse(args[:n]); err != nil {
			return nil, usageError("%v (the flags before a command are --config FILE, --ledger FILE and --json)", err)
		}
		args = args[n:]
	}
	return args, nil
}

// parse parses args, allowing flags after positional arguments, and
// returns the positional ones.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, fmt.Errorf("%w: %v", errcode.ErrUsage, err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// config loads the configuration file the flags and the environment name
// (config.File).
func (e *env) config() (config.Config, error) {
	path, explicit, err := config.File(e.configPath, e.environ)
	if err != nil {
		return config.Config{}, err
	}
	return config.Load(path, explicit, e.environ)
}

// getenv returns the variable key of e's environment, "" when it is unset;
// a later entry wins, as in os.Environ.
func (e *env) getenv(key string) string {
	for i := len(e.environ) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(e.environ[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}

// open loads the configuration and opens the ledger (applying migrations).
func (e *env) open(ctx context.Context) (config.Config, *ledger.DB, error) {
	cfg, err := e.config()
	if err != nil {
		return config.Config{}, nil, err
	}
	path := e.ledgerPath
	if path == "" {
		path = cfg.Ledger.Path
	}
	if path == "" {
		if path, err = ledger.DefaultPathEnv(e.getenv); err != nil {
			return config.Config{}, nil, fmt.Errorf("%w: %v", errcode.ErrConfig, err)
		}
	}
	db, err := ledger.Open(ctx, path, ledger.Options{SkipMigrate: e.skipMigrate, MustExist: e.mustExist})
	if err != nil {
		return config.Config{}, nil, err
	}
	return cfg, db, nil
}

// openCommand is the preamble of every command that works on the ledger:
// it parses args with fs (flags may follow positional arguments), checks
// the positional ones with check (nil accepts any) before anything is
// opened, loads the configuration and opens the ledger (applying
// migrations unless e.skipMigrate; refusing a missing ledger with
// e.mustExist). It returns the positional arguments; the caller closes
// the ledger.
func (e *env) openCommand(ctx context.Context, fs *flag.FlagSet, args []string, check func(pos []string) error) (config.Config, *ledger.DB, []string, error) {
	pos, err := parseChecked(fs, args, check)
	if err != nil {
		return config.Config{}, nil, nil, err
	}
	cfg, db, err := e.open(ctx)
	if err != nil {
		return config.Config{}, nil, nil, err
	}
	return cfg, db, pos, nil
}

// parseChecked parses args with fs and checks the positional arguments
// with check (nil accepts any).
func parseChecked(fs *flag.FlagSet, args []string, check func(pos []string) error) ([]string, error) {
	pos, err := parse(fs, args)
	if err != nil {
		return nil, err
	}
	if check != nil {
		if err := check(pos); err != nil {
			return nil, err
		}
	}
	return pos, nil
}

// noArgs is the check of a command that takes no positional arguments.
func noArgs(fs *flag.FlagSet) func(pos []string) error {
	return func(pos []string) error {
		if len(pos) > 0 {
			return usageError("%s takes no arguments, got %q", strings.TrimPrefix(fs.Name(), "browserop "), pos)
		}
		return nil
	}
}

func cmdVersion(_ context.Context, e *env, args []string) error {
	fs := e.flags("version")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	if e.json {
		return writeJSON(e.stdout, map[string]string{"version": version})
	}
	fmt.Fprintf(e.stdout, "browserop %s\n", version)
	return nil
}

// oneActionID is the check of a command that takes one action id.
func oneActionID(pos []string) error {
	if len(pos) != 1 {
		return usageError("expected one action id, got %d arguments (%s)", len(pos), strings.Join(pos, " "))
	}
	return nil
}
