package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// fakeSystem records the system programs `service` runs, instead of running
// them: systemctl --user cannot enable units in a test container, and a
// test must never touch the machine's real service manager. answers maps a
// command line to what it prints and whether it fails.
type fakeSystem struct {
	mu      sync.Mutex
	calls   []string
	answers map[string]fakeAnswer
}

type fakeAnswer struct {
	out string
	err bool
}

func (f *fakeSystem) exec(_ context.Context, stdout io.Writer, name string, args ...string) error {
	line := strings.Join(append([]string{name}, args...), " ")
	f.mu.Lock()
	f.calls = append(f.calls, line)
	a := f.answers[line]
	f.mu.Unlock()
	if stdout != nil {
		io.WriteString(stdout, a.out)
	}
	if a.err {
		return fmt.Errorf("%s: exit status 1", line)
	}
	return nil
}

func (f *fakeSystem) take() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.calls
	f.calls = nil
	return out
}

// svcWorld is a fake home: HOME and XDG directories in a temp dir, a
// config file at the default place, and a fake system.
type svcWorld struct {
	t    *testing.T
	home string
	env  []string
	sys  *fakeSystem
	goos string
}

func newSvcWorld(t *testing.T, goos string) *svcWorld {
	t.Helper()
	home := t.TempDir()
	w := &svcWorld{t: t, home: home, goos: goos, sys: &fakeSystem{answers: map[string]fakeAnswer{}}, env: []string{
		"HOME=" + home,
		"USER=alice",
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"XDG_CONFIG_HOME=" + filepath.Join(home, "config"),
		"XDG_STATE_HOME=" + filepath.Join(home, "state"),
	}}
	cfg := filepath.Join(home, "config", "browserop", "config.yaml")
	require.NoError(t, os.MkdirAll(filepath.Dir(cfg), 0o700))
	require.NoError(t, os.WriteFile(cfg, []byte("schedule: \"*/5 * * * *\"\n"), 0o600))
	return w
}

func (w *svcWorld) run(args ...string) (int, string, string) {
	w.t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdout: &out, stderr: &errb, environ: w.env, exec: w.sys.exec, goos: w.goos}
	code := runWith(context.Background(), e, args)
	return code, out.String(), errb.String()
}

func (w *svcWorld) unitPath() string {
	if w.goos == "darwin" {
		return filepath.Join(w.home, "Library", "LaunchAgents", "com.browserop.serve.plist")
	}
	return filepath.Join(w.home, "config", "systemd", "user", "browserop.service")
}

func thisBinary(t *testing.T) string {
	t.Helper()
	bin, err := os.Executable()
	require.NoError(t, err)
	bin, err = filepath.EvalSymlinks(bin)
	require.NoError(t, err)
	return bin
}

func TestServiceInstallSystemd(t *testing.T) {
	t.Parallel()
	w := newSvcWorld(t, "linux")
	code, out, errs := w.run("service", "install")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errs)
	unit, err := os.ReadFile(w.unitPath())
	require.NoError(t, err)
	bin := thisBinary(t)
	cfg := filepath.Join(w.home, "config", "browserop", "config.yaml")
	require.Contains(t, string(unit), fmt.Sprintf("ExecStart=%q \"serve\" \"--config\" %q\n", bin, cfg),
		"the absolute binary and the config in use")
	require.Contains(t, string(unit), fmt.Sprintf("Environment=\"XDG_STATE_HOME=%s\"\n", filepath.Join(w.home, "state")))
	require.Equal(t, []string{
		"systemctl --user daemon-reload",
		"systemctl --user enable browserop.service",
		"systemctl --user restart browserop.service",
		"loginctl show-user alice --property=Linger --value",
	}, w.sys.take())
	require.Contains(t, out, "loginctl enable-linger", "lingering is explained while it is off")
	require.Contains(t, out, "browserop service logs")

	// Idempotent: the same unit again is only made sure to run.
	w.sys.answers["loginctl show-user alice --property=Linger --value"] = fakeAnswer{out: "yes\n"}
	code, out, errs = w.run("service", "install")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errs)
	again, err := os.ReadFile(w.unitPath())
	require.NoError(t, err)
	require.Equal(t, string(unit), string(again))
	require.Equal(t, []string{
		"systemctl --user enable --now browserop.service",
		"loginctl show-user alice --property=Linger --value",
	}, w.sys.take())
	require.NotContains(t, out, "enable-linger", "no lingering note while it is on")

	// Lingering on request.
	code, _, errs = w.run("service", "install", "--linger")
	require.Equal(t, 0, code, errs)
	require.Equal(t, []string{
		"systemctl --user enable --now browserop.service",
		"loginctl enable-linger alice",
	}, w.sys.take())

	// Status asks the manager.
	w.sys.answers["systemctl --user is-active browserop.service"] = fakeAnswer{out: "active\n"}
	w.sys.answers["systemctl --user is-enabled browserop.service"] = fakeAnswer{out: "enabled\n"}
	code, out, _ = w.run("service", "status")
	require.Equal(t, 0, code)
	require.Contains(t, out, "active: active")
	require.Contains(t, out, "enabled: enabled")
	w.sys.take()

	// Logs come from the journal of the unit.
	code, _, _ = w.run("service", "logs", "-n", "20")
	require.Equal(t, 0, code)
	require.Equal(t, []string{"journalctl --user --unit browserop.service --no-pager --lines 20"}, w.sys.take())

	// Uninstall, twice: the second finds nothing to do.
	code, _, errs = w.run("service", "uninstall")
	require.Equal(t, 0, code, errs)
	require.NoFileExists(t, w.unitPath())
	require.Equal(t, []string{
		"systemctl --user disable --now browserop.service",
		"systemctl --user daemon-reload",
	}, w.sys.take())
	code, out, errs = w.run("service", "uninstall")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "not installed")
	require.Empty(t, w.sys.take())
}

func TestServiceChangedUnitIsReplacedAndRestarted(t *testing.T) {
	t.Parallel()
	w := newSvcWorld(t, "linux")
	code, _, errs := w.run("service", "install")
	require.Equal(t, 0, code, errs)
	w.sys.take()
	// Installed again with another config: rewritten, reloaded, restarted.
	other := filepath.Join(w.home, "other.yaml")
	require.NoError(t, os.WriteFile(other, []byte("schedule: \"0 * * * *\"\n"), 0o600))
	code, _, errs = w.run("--config", other, "service", "install")
	require.Equal(t, 0, code, errs)
	unit, err := os.ReadFile(w.unitPath())
	require.NoError(t, err)
	require.Contains(t, string(unit), fmt.Sprintf("\"--config\" %q", other))
	require.Equal(t, []string{
		"systemctl --user daemon-reload",
		"systemctl --user enable browserop.service",
		"systemctl --user restart browserop.service",
		"loginctl show-user alice --property=Linger --value",
	}, w.sys.take())
}

func TestServiceRefusesUnitItDidNotWrite(t *testing.T) {
	t.Parallel()
	for _, goos := range []string{"linux", "darwin"} {
		t.Run(goos, func(t *testing.T) {
			w := newSvcWorld(t, goos)
			theirs := "[Service]\nExecStart=/opt/their/browserop serve\n"
			require.NoError(t, os.MkdirAll(filepath.Dir(w.unitPath()), 0o755))
			require.NoError(t, os.WriteFile(w.unitPath(), []byte(theirs), 0o644))
			for _, sub := range []string{"install", "uninstall"} {
				code, _, errs := w.run("service", sub)
				require.Equal(t, 2, code, "%s refuses: %s", sub, errs)
				require.Contains(t, errs, "did not write it")
				require.Contains(t, errs, w.unitPath())
				data, err := os.ReadFile(w.unitPath())
				require.NoError(t, err)
				require.Equal(t, theirs, string(data), "%s left the file alone", sub)
			}
			require.Empty(t, w.sys.take(), "no service manager call")
		})
	}
}

func TestServiceRefusesBrokenConfig(t *testing.T) {
	t.Parallel()
	w := newSvcWorld(t, "linux")
	cfg := filepath.Join(w.home, "config", "browserop", "config.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("schedul: \"*/5 * * * *\"\n"), 0o600))
	code, _, errs := w.run("service", "install")
	require.Equal(t, 2, code)
	require.Contains(t, errs, "schedul")
	require.NoFileExists(t, w.unitPath())
	require.Empty(t, w.sys.take())
}

func TestServiceSystemctlUnavailable(t *testing.T) {
	t.Parallel()
	w := newSvcWorld(t, "linux")
	w.sys.answers["systemctl --user daemon-reload"] = fakeAnswer{err: true}
	code, _, errs := w.run("service", "install")
	require.Equal(t, 1, code)
	require.Contains(t, errs, "the unit is written")
	require.Contains(t, errs, "user session")
}

func TestServiceInstallLaunchd(t *testing.T) {
	t.Parallel()
	w := newSvcWorld(t, "darwin")
	target := fmt.Sprintf("gui/%d/com.browserop.serve", os.Getuid())
	w.sys.answers["launchctl print "+target] = fakeAnswer{err: true} // not loaded yet
	code, out, errs := w.run("service", "install")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errs)
	require.Equal(t, []string{
		"launchctl print " + target,
		fmt.Sprintf("launchctl bootstrap gui/%d %s", os.Getuid(), w.unitPath()),
	}, w.sys.take())
	logDir := filepath.Join(w.home, "Library", "Logs", "browserop")
	require.DirExists(t, logDir)

	data, err := os.ReadFile(w.unitPath())
	require.NoError(t, err)
	p := parsePlist(t, data)
	require.Equal(t, "com.browserop.serve", p["Label"])
	args := p["ProgramArguments"].([]any)
	require.Equal(t, thisBinary(t), args[0])
	require.Equal(t, []any{"serve", "--config", filepath.Join(w.home, "config", "browserop", "config.yaml")}, args[1:])
	require.Equal(t, true, p["RunAtLoad"])
	require.Equal(t, map[string]any{"Crashed": true}, p["KeepAlive"], "never restarted on an exit code")
	require.Equal(t, true, p["AbandonProcessGroup"], "a launched Chrome keeps running")
	require.Equal(t, filepath.Join(logDir, "browserop.log"), p["StandardErrorPath"])
	require.Equal(t, filepath.Join(logDir, "browserop.log"), p["StandardOutPath"])
	require.Equal(t, filepath.Join(w.home, "state"), p["EnvironmentVariables"].(map[string]any)["XDG_STATE_HOME"])
	if py, err := exec.LookPath("python3"); err == nil {
		// A second, independent reader: Python's plistlib.
		out, err := exec.Command(py, "-c", `import plistlib,sys; d=plistlib.load(open(sys.argv[1],"rb")); print(d["Label"], d["KeepAlive"]["Crashed"])`, w.unitPath()).CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Equal(t, "com.browserop.serve True\n", string(out))
	}

	// Loaded and unchanged: nothing to do. Changed: booted out and in again.
	w.sys.answers["launchctl print "+target] = fakeAnswer{out: "state = running\n"}
	code, _, errs = w.run("service", "install")
	require.Equal(t, 0, code, errs)
	require.Equal(t, []string{"launchctl print " + target}, w.sys.take())
	code, _, errs = w.run("--ledger", filepath.Join(w.home, "l.db"), "service", "install")
	require.Equal(t, 0, code, errs)
	require.Equal(t, []string{
		"launchctl print " + target,
		"launchctl bootout " + target,
		fmt.Sprintf("launchctl bootstrap gui/%d %s", os.Getuid(), w.unitPath()),
	}, w.sys.take())

	// Logs are the agent's log file.
	require.NoError(t, os.WriteFile(filepath.Join(logDir, "browserop.log"), []byte("one\ntwo\nthree\n"), 0o600))
	code, out, _ = w.run("service", "logs", "-n", "2")
	require.Equal(t, 0, code)
	require.Equal(t, "two\nthree\n", out)

	code, _, errs = w.run("service", "uninstall")
	require.Equal(t, 0, code, errs)
	require.NoFileExists(t, w.unitPath())
	require.Equal(t, []string{"launchctl print " + target, "launchctl bootout " + target}, w.sys.take())
	code, out, _ = w.run("service", "uninstall")
	require.Equal(t, 0, code)
	require.Contains(t, out, "not installed")
}

// parsePlist decodes an XML property list of dicts, arrays, strings,
// integers and booleans into Go values, failing on anything else.
func parsePlist(t *testing.T, data []byte) map[string]any {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(data))
	var root any
	for {
		tok, err := dec.Token()
		require.NoError(t, err, "plist ends before its dict")
		if se, ok := tok.(xml.StartElement); ok {
			if se.Name.Local == "plist" {
				continue
			}
			root = plistValue(t, dec, se)
			break
		}
	}
	m, ok := root.(map[string]any)
	require.True(t, ok, "the plist's root is a dict")
	return m
}

func plistValue(t *testing.T, dec *xml.Decoder, se xml.StartElement) any {
	t.Helper()
	switch se.Name.Local {
	case "string", "integer", "key":
		var s string
		require.NoError(t, dec.DecodeElement(&s, &se))
		return s
	case "true", "false":
		require.NoError(t, dec.Skip())
		return se.Name.Local == "true"
	case "dict":
		m := map[string]any{}
		var key string
		for {
			tok, err := dec.Token()
			require.NoError(t, err)
			switch tk := tok.(type) {
			case xml.StartElement:
				v := plistValue(t, dec, tk)
				if tk.Name.Local == "key" {
					key = v.(string)
					continue
				}
				require.NotEmpty(t, key, "a dict value without a key")
				_, dup := m[key]
				require.False(t, dup, "key %q twice", key)
				m[key], key = v, ""
			case xml.EndElement:
				require.Empty(t, key, "key %q without a value", key)
				return m
			}
		}
	case "array":
		var a []any
		for {
			tok, err := dec.Token()
			require.NoError(t, err)
			switch tk := tok.(type) {
			case xml.StartElement:
				a = append(a, plistValue(t, dec, tk))
			case xml.EndElement:
				return a
			}
		}
	}
	t.Fatalf("plist: unexpected element <%s>", se.Name.Local)
	return nil
}

// A flag another subcommand takes, or an unknown subcommand, is a usage
// error before anything is written or run.
func TestServiceRefusesFlagsItDoesNotTake(t *testing.T) {
	t.Parallel()
	w := newSvcWorld(t, "linux")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"service", "status", "--linger"}, "service status does not take --linger"},
		{[]string{"service", "install", "-n", "5"}, "service install does not take -n"},
		{[]string{"service", "uninstall", "--follow"}, "service uninstall does not take --follow"},
		{[]string{"service", "restart"}, `unknown service subcommand "restart"`},
	} {
		code, _, errs := w.run(tc.args...)
		require.Equal(t, 2, code, "%v: %s", tc.args, errs)
		require.Contains(t, errs, tc.want, tc.args)
	}
	require.NoFileExists(t, w.unitPath())
	require.Empty(t, w.sys.take(), "no service manager call")
}
