package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/browserop/browserop/config"
	"github.com/browserop/browserop/errcode"
	"github.com/browserop/browserop/internal/atomicfile"
)

// execFunc runs a program of the system with args, its standard output
// going to stdout (nil: discarded). The error carries what the program wrote
// to its standard error.
type execFunc func(ctx context.Context, stdout io.Writer, name string, args ...string) error

// systemExec is execFunc on the real system.
func systemExec(ctx context.Context, stdout io.Writer, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = stdout, &errb
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(errb.String()); msg != "" {
			return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, msg)
		}
		return fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return nil
}

// output runs a program and returns its trimmed standard output.
func (e *env) output(ctx context.Context, name string, args ...string) (string, error) {
	var b bytes.Buffer
	err := e.exec(ctx, &b, name, args...)
	return strings.TrimSpace(b.String()), err
}

// serviceUnit is where the unit of this platform lives and how it is
// driven.
type serviceUnit struct {
	e       *env
	launchd bool
	path    string // the unit file
	logFile string // launchd only
	uid     string // launchd only: the gui/UID domain
}

// unit returns the service unit of this platform: a systemd user unit on
// Linux, a launchd agent on macOS. Paths come from HOME and
// XDG_CONFIG_HOME of the environment.
func (e *env) unit() (*serviceUnit, error) {
	switch e.goos {
	case "linux":
		dir, err := config.XDGConfigHome(e.environ)
		if err != nil {
			return nil, fmt.Errorf("%w: locate the systemd user unit directory: %v", errcode.ErrConfig, err)
		}
		return &serviceUnit{e: e, path: filepath.Join(dir, "systemd", "user", systemdUnitName)}, nil
	case "darwin":
		home := e.getenv("HOME")
		if !filepath.IsAbs(home) {
			return nil, fmt.Errorf("%w: $HOME is not set to an absolute path: it holds ~/Library/LaunchAgents", errcode.ErrConfig)
		}
		return &serviceUnit{e: e, launchd: true, uid: strconv.Itoa(os.Getuid()),
			path:    filepath.Join(home, "Library", "LaunchAgents", launchdLabel+".plist"),
			logFile: filepath.Join(home, "Library", "Logs", "browserop", "browserop.log")}, nil
	}
	return nil, fmt.Errorf("%w: browserop service supports Linux (systemd) and macOS (launchd), not %s; run `browserop serve` under your own supervisor", errcode.ErrUsage, e.goos)
}

// state is what is at the unit's path: nothing, a unit browserop wrote,
// or a file someone else wrote.
func (u *serviceUnit) state() (content string, exists, ours bool, err error) {
	data, err := os.ReadFile(u.path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, false, nil
	}
	if err != nil {
		return "", false, false, fmt.Errorf("read %s: %w", u.path, err)
	}
	return string(data), true, bytes.Contains(data, []byte(serviceMarker)), nil
}

func (u *serviceUnit) notOurs(verb string) error {
	return fmt.Errorf("%w: refusing to %s %s: browserop service install did not write it (it has no %q line); move it away first, or manage it yourself",
		errcode.ErrConfig, verb, u.path, serviceMarker)
}

func (u *serviceUnit) target() string { return "gui/" + u.uid + "/" + launchdLabel }

func cmdService(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return usageError("service needs a subcommand: install [--linger] | status | logs [-n N] [--follow] | uninstall")
	}
	sub, args := args[0], args[1:]
	// The flags each subcommand takes; any other is a usage error.
	takes := map[string][]string{"install": {"linger"}, "uninstall": nil, "status": nil, "logs": {"n", "follow"}}
	own, ok := takes[sub]
	if !ok {
		return usageError("unknown service subcommand %q: install, status, logs or uninstall", sub)
	}
	fs := e.flags("service " + sub)
	linger := fs.Bool("linger", false, "install: also keep the service running while you are logged out (loginctl enable-linger)")
	lines := fs.Int("n", 100, "logs: how many of the last lines to show")
	follow := fs.Bool("follow", false, "logs: keep printing new lines")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError("service %s takes no arguments, got %q", sub, pos)
	}
	var wrong []string
	fs.Visit(func(f *flag.Flag) {
		if (f.Name == "linger" || f.Name == "n" || f.Name == "follow") && !slices.Contains(own, f.Name) {
			dash := "--"
			if len(f.Name) == 1 {
				dash = "-"
			}
			wrong = append(wrong, dash+f.Name)
		}
	})
	if len(wrong) > 0 {
		return usageError("service %s does not take %s", sub, strings.Join(wrong, ", "))
	}
	u, err := e.unit()
	if err != nil {
		return err
	}
	switch sub {
	case "install":
		return u.install(ctx, *linger)
	case "uninstall":
		return u.uninstall(ctx)
	case "status":
		return u.status(ctx)
	case "logs":
		if *lines <= 0 {
			return usageError("-n must be positive, got %d", *lines)
		}
		return u.logs(ctx, *lines, *follow)
	}
	return usageError("unknown service subcommand %q: install, status, logs or uninstall", sub)
}

// spec is what the unit runs: this binary (absolute, symlinks resolved),
// `serve` with the configuration file in use and an explicit --ledger, and
// the environment that decides the paths browserop uses (XDG directories,
// PATH to find Chrome, BROWSEROP_* overrides), so that the service sees
// what the installing shell saw. The configuration must load.
func (u *serviceUnit) spec() (serviceSpec, error) {
	e := u.e
	if _, err := e.config(); err != nil {
		return serviceSpec{}, fmt.Errorf("%w (fix it before installing the service: it would only exit 2)", err)
	}
	bin, err := os.Executable()
	if err == nil {
		bin, err = filepath.EvalSymlinks(bin)
	}
	if err != nil {
		return serviceSpec{}, fmt.Errorf("locate the browserop binary: %w", err)
	}
	s := serviceSpec{Binary: bin, Args: []string{"serve"}, Env: map[string]string{}, LogFile: u.logFile}
	cfgPath, explicit, err := config.File(e.configPath, e.environ)
	if err == nil && !explicit {
		// The default file, when there is one; otherwise the service reads
		// it once it exists, like any command.
		if _, err := os.Stat(cfgPath); err != nil {
			cfgPath = ""
		}
	}
	if cfgPath != "" {
		abs, err := filepath.Abs(cfgPath)
		if err != nil {
			return serviceSpec{}, fmt.Errorf("%w: --config %q: %v", errcode.ErrConfig, cfgPath, err)
		}
		s.Args = append(s.Args, "--config", abs)
	}
	if e.ledgerPath != "" {
		abs, err := filepath.Abs(e.ledgerPath)
		if err != nil {
			return serviceSpec{}, fmt.Errorf("%w: --ledger %q: %v", errcode.ErrConfig, e.ledgerPath, err)
		}
		s.Args = append(s.Args, "--ledger", abs)
	}
	vars := map[string]string{}
	for _, kv := range e.environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			vars[k] = v
		}
	}
	for k, v := range vars {
		switch {
		case k == "XDG_CONFIG_HOME" || k == "XDG_STATE_HOME" || k == "XDG_DATA_HOME" || k == "XDG_CACHE_HOME":
			if filepath.IsAbs(v) {
				s.Env[k] = v
			}
		case k == "PATH" && v != "":
			s.Env[k] = v
		case config.IsOverride(k):
			s.Env[k] = v
		}
	}
	return s, nil
}

func (u *serviceUnit) render(s serviceSpec) (string, error) {
	if u.launchd {
		return renderLaunchd(s)
	}
	return renderSystemd(s)
}

// install writes the unit and enables and starts it. Installing the same
// unit again only makes sure it is enabled and running; a changed one is
// reloaded and restarted. A file at the unit's path that browserop did not
// write is never overwritten.
func (u *serviceUnit) install(ctx context.Context, linger bool) error {
	e := u.e
	s, err := u.spec()
	if err != nil {
		return err
	}
	want, err := u.render(s)
	if err != nil {
		return err
	}
	have, exists, ours, err := u.state()
	if err != nil {
		return err
	}
	if exists && !ours {
		return u.notOurs("overwrite")
	}
	changed := !exists || have != want
	if changed {
		if err := writeFileAtomic(u.path, []byte(want), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "wrote %s\n", u.path)
	} else {
		fmt.Fprintf(e.stdout, "%s is up to date\n", u.path)
	}
	if u.launchd {
		if err := os.MkdirAll(filepath.Dir(u.logFile), 0o700); err != nil {
			return fmt.Errorf("create the log directory: %w", err)
		}
		loaded := e.exec(ctx, nil, "launchctl", "print", u.target()) == nil
		if loaded && changed {
			if err := e.exec(ctx, nil, "launchctl", "bootout", u.target()); err != nil {
				return fmt.Errorf("unload the old agent: %w", err)
			}
			loaded = false
		}
		if !loaded {
			if err := e.exec(ctx, nil, "launchctl", "bootstrap", "gui/"+u.uid, u.path); err != nil {
				return fmt.Errorf("load the agent (it is written; run `launchctl bootstrap gui/%s %s` once you are logged in to the desktop): %w", u.uid, u.path, err)
			}
		}
		fmt.Fprintf(e.stdout, "running: %s serve (launchd agent %s)\nsee what it did: browserop service logs (the log is %s), browserop status\n",
			s.Binary, launchdLabel, u.logFile)
		return nil
	}
	steps := [][]string{{"--user", "enable", "--now", systemdUnitName}}
	if changed {
		steps = [][]string{{"--user", "daemon-reload"}, {"--user", "enable", systemdUnitName}, {"--user", "restart", systemdUnitName}}
	}
	for _, st := range steps {
		if err := e.exec(ctx, nil, "systemctl", st...); err != nil {
			return fmt.Errorf("the unit is written, but %w; systemctl --user needs your user session: run this from a login shell, or enable lingering with `loginctl enable-linger`", err)
		}
	}
	fmt.Fprintf(e.stdout, "running: %s serve (systemd user unit %s)\nsee what it did: browserop service logs, browserop status\n", s.Binary, systemdUnitName)
	user := e.getenv("USER")
	if user == "" {
		user = strconv.Itoa(os.Getuid())
	}
	if linger {
		if err := e.exec(ctx, nil, "loginctl", "enable-linger", user); err != nil {
			return fmt.Errorf("enable lingering: %w", err)
		}
		fmt.Fprintln(e.stdout, "lingering is on: the service runs while you are logged out too")
		return nil
	}
	if v, err := e.output(ctx, "loginctl", "show-user", user, "--property=Linger", "--value"); err != nil || v != "yes" {
		fmt.Fprintln(e.stdout, "note: the service runs while you are logged in. To run it while you are logged out too (on a server, or after a reboot before you log in), run `browserop service install --linger` (it runs `loginctl enable-linger`).")
	}
	return nil
}

// uninstall stops and disables the unit and removes its file. With no unit
// it does nothing; a file browserop did not write is left alone.
func (u *serviceUnit) uninstall(ctx context.Context) error {
	e := u.e
	_, exists, ours, err := u.state()
	if err != nil {
		return err
	}
	if !exists {
		fmt.Fprintf(e.stdout, "not installed (no %s)\n", u.path)
		return nil
	}
	if !ours {
		return u.notOurs("remove")
	}
	if u.launchd {
		if e.exec(ctx, nil, "launchctl", "print", u.target()) == nil {
			if err := e.exec(ctx, nil, "launchctl", "bootout", u.target()); err != nil {
				return fmt.Errorf("unload the agent: %w", err)
			}
		}
	} else if err := e.exec(ctx, nil, "systemctl", "--user", "disable", "--now", systemdUnitName); err != nil {
		return fmt.Errorf("stop the service (the unit is still installed): %w", err)
	}
	if err := os.Remove(u.path); err != nil {
		return fmt.Errorf("remove %s: %w", u.path, err)
	}
	if !u.launchd {
		if err := e.exec(ctx, nil, "systemctl", "--user", "daemon-reload"); err != nil {
			return fmt.Errorf("the unit is removed, but %w", err)
		}
	}
	fmt.Fprintf(e.stdout, "stopped and removed %s (the ledger, profile and a Chrome with your tabs stay)\n", u.path)
	return nil
}

// serviceStatus is what `service status` and `doctor` report.
type serviceStatus struct {
	Path      string `json:"path"`
	Installed bool   `json:"installed"`
	Ours      bool   `json:"written_by_browserop"`
	Enabled   string `json:"enabled,omitempty"` // systemd: is-enabled's answer
	Active    string `json:"active,omitempty"`  // systemd: is-active's answer; launchd: "running" or "not running"
	Detail    string `json:"detail,omitempty"`  // what the service manager said
}

func (u *serviceUnit) query(ctx context.Context) (serviceStatus, error) {
	st := serviceStatus{Path: u.path}
	_, exists, ours, err := u.state()
	if err != nil {
		return st, err
	}
	st.Installed, st.Ours = exists, ours
	if !exists {
		return st, nil
	}
	if u.launchd {
		out, err := u.e.output(ctx, "launchctl", "print", u.target())
		switch {
		case err != nil:
			st.Active = "not loaded"
		case strings.Contains(out, "state = running"):
			st.Active = "running"
		default:
			st.Active = "loaded, not running"
		}
		st.Detail = out
		return st, nil
	}
	// is-enabled and is-active answer on stdout and exit non-zero for
	// "disabled" and "inactive": the answer is what counts.
	st.Enabled, _ = u.e.output(ctx, "systemctl", "--user", "is-enabled", systemdUnitName)
	st.Active, _ = u.e.output(ctx, "systemctl", "--user", "is-active", systemdUnitName)
	if st.Enabled == "" {
		st.Enabled = "unknown (no user session?)"
	}
	if st.Active == "" {
		st.Active = "unknown (no user session?)"
	}
	return st, nil
}

func (u *serviceUnit) status(ctx context.Context) error {
	st, err := u.query(ctx)
	if err != nil {
		return err
	}
	if u.e.json {
		return writeJSON(u.e.stdout, st)
	}
	w := u.e.stdout
	switch {
	case !st.Installed:
		fmt.Fprintf(w, "not installed (no %s): browserop service install\n", st.Path)
		return nil
	case !st.Ours:
		fmt.Fprintf(w, "%s exists but browserop did not write it\n", st.Path)
	default:
		fmt.Fprintf(w, "installed: %s\n", st.Path)
	}
	if st.Enabled != "" {
		fmt.Fprintf(w, "enabled: %s\n", st.Enabled)
	}
	fmt.Fprintf(w, "active: %s\n", st.Active)
	fmt.Fprintln(w, "see what it did: browserop service logs; what is recorded: browserop status, browserop actions list")
	return nil
}

// logs shows the service's last lines: the journal (systemd) or the
// agent's log file (launchd).
func (u *serviceUnit) logs(ctx context.Context, n int, follow bool) error {
	e := u.e
	if !u.launchd {
		args := []string{"--user", "--unit", systemdUnitName, "--no-pager", "--lines", strconv.Itoa(n)}
		if follow {
			args = append(args, "--follow")
		}
		if err := e.exec(ctx, e.stdout, "journalctl", args...); err != nil && ctx.Err() == nil {
			return fmt.Errorf("read the journal: %w", err)
		}
		return nil
	}
	if follow {
		if err := e.exec(ctx, e.stdout, "tail", "-n", strconv.Itoa(n), "-F", u.logFile); err != nil && ctx.Err() == nil {
			return fmt.Errorf("follow %s: %w", u.logFile, err)
		}
		return nil
	}
	f, err := os.Open(u.logFile)
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(e.stdout, "no log yet (%s): is the service installed? browserop service status\n", u.logFile)
		return nil
	}
	if err != nil {
		return fmt.Errorf("read the log: %w", err)
	}
	defer f.Close()
	var last []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		last = append(last, sc.Text())
		if len(last) > n {
			last = last[1:]
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read the log: %w", err)
	}
	for _, l := range last {
		fmt.Fprintln(e.stdout, l)
	}
	return nil
}

// writeFileAtomic writes data to path through a temporary file in the same
// directory (created 0755 when missing), so a reader never sees half a unit.
func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	if err := atomicfile.Write(path, data, mode); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
