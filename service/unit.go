// Package service runs `browserop serve` under the person's service
// manager: a systemd user unit on Linux, a launchd agent on macOS. It
// renders the unit from the one template of each platform (templates.go),
// knows where the unit lives, and installs, uninstalls, queries it and
// reads its logs through the manager's own programs (systemctl, launchctl,
// loginctl, journalctl), which it runs through an ExecFunc. Saying what
// happened is the caller's: the functions return what they did.
package service

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/browserop/browserop/config"
	"github.com/browserop/browserop/errcode"
	"github.com/browserop/browserop/internal/atomicfile"
)

// ExecFunc runs a program of the system with args, its standard output
// going to stdout (nil: discarded). The error carries what the program
// wrote to its standard error.
type ExecFunc func(ctx context.Context, stdout io.Writer, name string, args ...string) error

// SystemExec is ExecFunc on the real system.
func SystemExec(ctx context.Context, stdout io.Writer, name string, args ...string) error {
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

// Unit is the service unit of one platform: where its file lives and how
// its manager drives it.
type Unit struct {
	// Path is the unit file.
	Path string
	// Name is what the manager calls the unit: the systemd unit
	// browserop.service, or the launchd label com.browserop.serve.
	Name string
	// LogFile is where a launchd agent's output goes; "" for systemd,
	// whose journal holds it.
	LogFile string

	launchd bool
	uid     string // launchd: the gui/UID domain
	env     []string
	exec    ExecFunc
}

// New returns the service unit of the platform goos ("linux": a systemd
// user unit under $XDG_CONFIG_HOME/systemd/user; "darwin": a launchd agent
// under ~/Library/LaunchAgents), its paths taken from HOME and
// XDG_CONFIG_HOME of env (os.Environ form). The unit runs the service
// manager's programs with exec. It returns an errcode.ErrConfig error when
// those paths cannot be located, and an errcode.ErrUsage error for a
// platform without a service manager browserop knows.
func New(goos string, env []string, exec ExecFunc) (*Unit, error) {
	switch goos {
	case "linux":
		dir, err := config.XDGConfigHome(env)
		if err != nil {
			return nil, fmt.Errorf("%w: locate the systemd user unit directory: %v", errcode.ErrConfig, err)
		}
		return &Unit{Path: filepath.Join(dir, "systemd", "user", systemdUnitName), Name: systemdUnitName, env: env, exec: exec}, nil
	case "darwin":
		home := lookup(env, "HOME")
		if !filepath.IsAbs(home) {
			return nil, fmt.Errorf("%w: $HOME is not set to an absolute path: it holds ~/Library/LaunchAgents", errcode.ErrConfig)
		}
		return &Unit{Path: filepath.Join(home, "Library", "LaunchAgents", launchdLabel+".plist"), Name: launchdLabel,
			LogFile: filepath.Join(home, "Library", "Logs", "browserop", "browserop.log"),
			launchd: true, uid: strconv.Itoa(os.Getuid()), env: env, exec: exec}, nil
	}
	return nil, fmt.Errorf("%w: browserop service supports Linux (systemd) and macOS (launchd), not %s; run `browserop serve` under your own supervisor", errcode.ErrUsage, goos)
}

// Launchd reports whether the unit is a launchd agent (else a systemd
// user unit).
func (u *Unit) Launchd() bool { return u.launchd }

// output runs a program and returns its trimmed standard output.
func (u *Unit) output(ctx context.Context, name string, args ...string) (string, error) {
	var b bytes.Buffer
	err := u.exec(ctx, &b, name, args...)
	return strings.TrimSpace(b.String()), err
}

// state is what is at the unit's path: nothing, a unit browserop wrote,
// or a file someone else wrote.
func (u *Unit) state() (content string, exists, ours bool, err error) {
	data, err := os.ReadFile(u.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, false, nil
	}
	if err != nil {
		return "", false, false, fmt.Errorf("read %s: %w", u.Path, err)
	}
	return string(data), true, bytes.Contains(data, []byte(marker)), nil
}

func (u *Unit) notOurs(verb string) error {
	return fmt.Errorf("%w: refusing to %s %s: browserop service install did not write it (it has no %q line); move it away first, or manage it yourself",
		errcode.ErrConfig, verb, u.Path, marker)
}

func (u *Unit) target() string { return "gui/" + u.uid + "/" + launchdLabel }

func (u *Unit) render(s Spec) (string, error) {
	if u.launchd {
		return renderLaunchd(s)
	}
	return renderSystemd(s)
}

// Linger says whether a systemd user unit runs while its user is logged
// out (loginctl's lingering).
type Linger int

// The answers Install gives about lingering.
const (
	// LingerUnknown: not asked (a launchd agent, or an install that
	// stopped before).
	LingerUnknown Linger = iota
	// LingerOff: off, or loginctl could not say; the unit runs while its
	// user is logged in.
	LingerOff
	// LingerOn: it was on already.
	LingerOn
	// LingerEnabled: this install turned it on.
	LingerEnabled
)

// Installed is what Install did, also when it returns an error.
type Installed struct {
	// Written: the unit file was missing or different, and is written.
	Written bool
	// UpToDate: the unit file was there as Install would write it.
	UpToDate bool
	// Running: the manager has the unit enabled and started.
	Running bool
	// Linger is a systemd unit's lingering after the install.
	Linger Linger
}

// Install writes the unit for s and enables and starts it; with linger, a
// systemd unit also keeps running while its user is logged out. Installing
// the same unit again only makes sure it is enabled and running; a changed
// one is reloaded and restarted. A file at the unit's path that browserop
// did not write is never overwritten: that is an errcode.ErrConfig error.
// A failing manager program is an error that says what is done already.
func (u *Unit) Install(ctx context.Context, s Spec, linger bool) (Installed, error) {
	var done Installed
	want, err := u.render(s)
	if err != nil {
		return done, err
	}
	have, exists, ours, err := u.state()
	if err != nil {
		return done, err
	}
	if exists && !ours {
		return done, u.notOurs("overwrite")
	}
	changed := !exists || have != want
	if changed {
		if err := writeFileAtomic(u.Path, []byte(want), 0o644); err != nil {
			return done, err
		}
		done.Written = true
	} else {
		done.UpToDate = true
	}
	if u.launchd {
		if err := os.MkdirAll(filepath.Dir(u.LogFile), 0o700); err != nil {
			return done, fmt.Errorf("create the log directory: %w", err)
		}
		loaded := u.exec(ctx, nil, "launchctl", "print", u.target()) == nil
		if loaded && changed {
			if err := u.exec(ctx, nil, "launchctl", "bootout", u.target()); err != nil {
				return done, fmt.Errorf("unload the old agent: %w", err)
			}
			loaded = false
		}
		if !loaded {
			if err := u.exec(ctx, nil, "launchctl", "bootstrap", "gui/"+u.uid, u.Path); err != nil {
				return done, fmt.Errorf("load the agent (it is written; run `launchctl bootstrap gui/%s %s` once you are logged in to the desktop): %w", u.uid, u.Path, err)
			}
		}
		done.Running = true
		return done, nil
	}
	steps := [][]string{{"--user", "enable", "--now", systemdUnitName}}
	if changed {
		steps = [][]string{{"--user", "daemon-reload"}, {"--user", "enable", systemdUnitName}, {"--user", "restart", systemdUnitName}}
	}
	for _, st := range steps {
		if err := u.exec(ctx, nil, "systemctl", st...); err != nil {
			return done, fmt.Errorf("the unit is written, but %w; systemctl --user needs your user session: run this from a login shell, or enable lingering with `loginctl enable-linger`", err)
		}
	}
	done.Running = true
	user := lookup(u.env, "USER")
	if user == "" {
		user = strconv.Itoa(os.Getuid())
	}
	if linger {
		if err := u.exec(ctx, nil, "loginctl", "enable-linger", user); err != nil {
			return done, fmt.Errorf("enable lingering: %w", err)
		}
		done.Linger = LingerEnabled
		return done, nil
	}
	done.Linger = LingerOff
	if v, err := u.output(ctx, "loginctl", "show-user", user, "--property=Linger", "--value"); err == nil && v == "yes" {
		done.Linger = LingerOn
	}
	return done, nil
}

// Uninstall stops and disables the unit and removes its file; removed is
// false when there was no unit, and nothing was done. A file browserop did
// not write is left alone: that is an errcode.ErrConfig error.
func (u *Unit) Uninstall(ctx context.Context) (removed bool, err error) {
	_, exists, ours, err := u.state()
	if err != nil {
		return false, err
	}
	if !exists {
		return false, nil
	}
	if !ours {
		return false, u.notOurs("remove")
	}
	if u.launchd {
		if u.exec(ctx, nil, "launchctl", "print", u.target()) == nil {
			if err := u.exec(ctx, nil, "launchctl", "bootout", u.target()); err != nil {
				return false, fmt.Errorf("unload the agent: %w", err)
			}
		}
	} else if err := u.exec(ctx, nil, "systemctl", "--user", "disable", "--now", systemdUnitName); err != nil {
		return false, fmt.Errorf("stop the service (the unit is still installed): %w", err)
	}
	if err := os.Remove(u.Path); err != nil {
		return false, fmt.Errorf("remove %s: %w", u.Path, err)
	}
	if !u.launchd {
		if err := u.exec(ctx, nil, "systemctl", "--user", "daemon-reload"); err != nil {
			return true, fmt.Errorf("the unit is removed, but %w", err)
		}
	}
	return true, nil
}

// Status is what `service status` and `doctor` report.
type Status struct {
	Path      string `json:"path"`
	Installed bool   `json:"installed"`
	Ours      bool   `json:"written_by_browserop"`
	Enabled   string `json:"enabled,omitempty"` // systemd: is-enabled's answer
	Active    string `json:"active,omitempty"`  // systemd: is-active's answer; launchd: "running" or "not running"
	Detail    string `json:"detail,omitempty"`  // what the service manager said
}

// Status asks whether the unit is installed, whether browserop wrote it,
// and what its manager says of it.
func (u *Unit) Status(ctx context.Context) (Status, error) {
	st := Status{Path: u.Path}
	_, exists, ours, err := u.state()
	if err != nil {
		return st, err
	}
	st.Installed, st.Ours = exists, ours
	if !exists {
		return st, nil
	}
	if u.launchd {
		out, err := u.output(ctx, "launchctl", "print", u.target())
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
	st.Enabled, _ = u.output(ctx, "systemctl", "--user", "is-enabled", systemdUnitName)
	st.Active, _ = u.output(ctx, "systemctl", "--user", "is-active", systemdUnitName)
	if st.Enabled == "" {
		st.Enabled = "unknown (no user session?)"
	}
	if st.Active == "" {
		st.Active = "unknown (no user session?)"
	}
	return st, nil
}

// ErrNoLog is returned (wrapped) by Logs when a launchd agent has written
// no log file yet.
var ErrNoLog = errors.New("no log yet")

// Logs writes the service's last n lines to w, and with follow keeps
// writing new ones until ctx ends: the journal (systemd) or the agent's
// log file (launchd).
func (u *Unit) Logs(ctx context.Context, w io.Writer, n int, follow bool) error {
	if !u.launchd {
		args := []string{"--user", "--unit", systemdUnitName, "--no-pager", "--lines", strconv.Itoa(n)}
		if follow {
			args = append(args, "--follow")
		}
		if err := u.exec(ctx, w, "journalctl", args...); err != nil && ctx.Err() == nil {
			return fmt.Errorf("read the journal: %w", err)
		}
		return nil
	}
	if follow {
		if err := u.exec(ctx, w, "tail", "-n", strconv.Itoa(n), "-F", u.LogFile); err != nil && ctx.Err() == nil {
			return fmt.Errorf("follow %s: %w", u.LogFile, err)
		}
		return nil
	}
	f, err := os.Open(u.LogFile)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: %w", u.LogFile, ErrNoLog)
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
		fmt.Fprintln(w, l)
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

// lookup returns the variable key of env (os.Environ form), "" when it is
// unset; a later entry wins.
func lookup(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}
