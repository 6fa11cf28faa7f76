package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/browserop/browserop/config"
	"github.com/browserop/browserop/service"
)

// unit returns the service unit of this platform (service.New), driven
// through e.exec.
func (e *env) unit() (*service.Unit, error) {
	return service.New(e.goos, e.environ, e.exec)
}

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
		return e.serviceInstall(ctx, u, *linger)
	case "uninstall":
		return e.serviceUninstall(ctx, u)
	case "status":
		return e.serviceStatus(ctx, u)
	case "logs":
		if *lines <= 0 {
			return usageError("-n must be positive, got %d", *lines)
		}
		return e.serviceLogs(ctx, u, *lines, *follow)
	}
	return usageError("unknown service subcommand %q: install, status, logs or uninstall", sub)
}

// serviceInstall installs the unit for `serve` with the configuration in
// use, which must load: the file the flags or $BROWSEROP_CONFIG name, else
// the default file when there is one (otherwise the service reads it once
// it exists, like any command), and an explicit --ledger.
func (e *env) serviceInstall(ctx context.Context, u *service.Unit, linger bool) error {
	if _, err := e.config(); err != nil {
		return fmt.Errorf("%w (fix it before installing the service: it would only exit 2)", err)
	}
	cfgPath, explicit, err := config.File(e.configPath, e.environ)
	if err == nil && !explicit {
		if _, err := os.Stat(cfgPath); err != nil {
			cfgPath = ""
		}
	}
	s, err := u.Spec(cfgPath, e.ledgerPath)
	if err != nil {
		return err
	}
	done, err := u.Install(ctx, s, linger)
	switch {
	case done.Written:
		fmt.Fprintf(e.stdout, "wrote %s\n", u.Path)
	case done.UpToDate:
		fmt.Fprintf(e.stdout, "%s is up to date\n", u.Path)
	}
	if done.Running && u.Launchd() {
		fmt.Fprintf(e.stdout, "running: %s serve (launchd agent %s)\nsee what it did: browserop service logs (the log is %s), browserop status\n",
			s.Binary, u.Name, u.LogFile)
	} else if done.Running {
		fmt.Fprintf(e.stdout, "running: %s serve (systemd user unit %s)\nsee what it did: browserop service logs, browserop status\n", s.Binary, u.Name)
	}
	switch done.Linger {
	case service.LingerEnabled:
		fmt.Fprintln(e.stdout, "lingering is on: the service runs while you are logged out too")
	case service.LingerOff:
		fmt.Fprintln(e.stdout, "note: the service runs while you are logged in. To run it while you are logged out too (on a server, or after a reboot before you log in), run `browserop service install --linger` (it runs `loginctl enable-linger`).")
	}
	return err
}

// serviceUninstall stops and removes the unit, if there is one.
func (e *env) serviceUninstall(ctx context.Context, u *service.Unit) error {
	removed, err := u.Uninstall(ctx)
	switch {
	case err != nil:
		return err
	case !removed:
		fmt.Fprintf(e.stdout, "not installed (no %s)\n", u.Path)
	default:
		fmt.Fprintf(e.stdout, "stopped and removed %s (the ledger, profile and a Chrome with your tabs stay)\n", u.Path)
	}
	return nil
}

func (e *env) serviceStatus(ctx context.Context, u *service.Unit) error {
	st, err := u.Status(ctx)
	if err != nil {
		return err
	}
	if e.json {
		return writeJSON(e.stdout, st)
	}
	w := e.stdout
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

// serviceLogs prints the service's last lines.
func (e *env) serviceLogs(ctx context.Context, u *service.Unit, n int, follow bool) error {
	err := u.Logs(ctx, e.stdout, n, follow)
	if errors.Is(err, service.ErrNoLog) {
		fmt.Fprintf(e.stdout, "no log yet (%s): is the service installed? browserop service status\n", u.LogFile)
		return nil
	}
	return err
}
