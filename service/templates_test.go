package service

import (
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// exampleSpec is the spec the examples in bundled/ are rendered with.
var exampleSpec = Spec{
	Binary:  "/usr/local/bin/browserop",
	Args:    []string{"serve", "--config", "/home/you/.config/browserop/config.yaml"},
	Env:     map[string]string{"PATH": "/usr/local/bin:/usr/bin:/bin"},
	LogFile: "/Users/you/Library/Logs/browserop/browserop.log",
}

// TestServiceExamplesInSync keeps the files in bundled/ equal to what
// `service install` writes. BROWSEROP_UPDATE_EXAMPLES=1 rewrites them.
func TestServiceExamplesInSync(t *testing.T) {
	t.Parallel()
	for path, render := range map[string]func(Spec) (string, error){
		"../bundled/systemd/browserop.service":         renderSystemd,
		"../bundled/launchd/com.browserop.serve.plist": renderLaunchd,
	} {
		want, err := render(exampleSpec)
		require.NoError(t, err)
		if os.Getenv("BROWSEROP_UPDATE_EXAMPLES") == "1" {
			require.NoError(t, os.WriteFile(path, []byte(want), 0o644))
		}
		have, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Equal(t, want, string(have), "%s is generated: BROWSEROP_UPDATE_EXAMPLES=1 go test ./service -run TestServiceExamplesInSync", path)
	}
}

// TestServiceUnitVerifies runs systemd-analyze verify on the unit install
// writes, in system and in user mode: no warning, no error.
func TestServiceUnitVerifies(t *testing.T) {
	t.Parallel()
	sa, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze not installed (scripts/setup.sh installs the systemd package)")
	}
	spec := exampleSpec
	spec.Binary = thisBinary(t)
	spec.Args = []string{"serve", "--config", "/home/with space/100%/$HOME/config.yaml"}
	spec.Env = map[string]string{"BROWSEROP_LOG_LEVEL": "debug", "XDG_STATE_HOME": "/home/a b/%s/$X"}
	unit, err := renderSystemd(spec)
	require.NoError(t, err)
	for _, s := range []string{"network-online.target", "KillSignal", "After="} {
		require.NotContains(t, unit, s, "nothing without effect in a user unit")
	}
	require.Contains(t, unit, "\nKillMode=process\n")
	require.Contains(t, unit, "\nRestartPreventExitStatus=2\n")
	dir := t.TempDir()
	path := filepath.Join(dir, "browserop.service")
	require.NoError(t, os.WriteFile(path, []byte(unit), 0o644))
	runtimeDir := filepath.Join(dir, "run")
	require.NoError(t, os.Mkdir(runtimeDir, 0o700))
	for _, mode := range [][]string{{"verify"}, {"--user", "verify"}} {
		cmd := exec.Command(sa, append(mode, path)...)
		cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+runtimeDir, "SYSTEMD_LOG_LEVEL=notice")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "systemd-analyze %v:\n%s\n%s", mode, out, unit)
		require.Empty(t, strings.TrimSpace(string(out)), "systemd-analyze %v warns:\n%s", mode, out)
	}
}

// thisBinary is the running test binary, absolute and without symlinks:
// a program that exists, for systemd-analyze.
func thisBinary(t *testing.T) string {
	t.Helper()
	bin, err := os.Executable()
	require.NoError(t, err)
	bin, err = filepath.EvalSymlinks(bin)
	require.NoError(t, err)
	return bin
}

// A systemd unit runs each word exactly as given: quoted, with systemd's
// specifiers (%) and, on ExecStart, its variable expansion ($) escaped.
func TestRenderSystemd(t *testing.T) {
	t.Parallel()
	unit, err := renderSystemd(Spec{
		Binary: "/opt/browser op/bin/browserop",
		Args:   []string{"serve", "--config", `/home/u/100%/$HOME/"q"\b.yaml`},
		Env:    map[string]string{"XDG_STATE_HOME": "/s/%h/$X", "BROWSEROP_LOG_LEVEL": "debug", "PATH": "/usr/bin:/bin"},
	})
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(unit, "# "+marker+"; `browserop service uninstall` removes it.\n"), unit)
	require.Contains(t, unit, "\nExecStart=\"/opt/browser op/bin/browserop\" \"serve\" \"--config\" \"/home/u/100%%/$$HOME/\\\"q\\\"\\\\b.yaml\"\n")
	// Environment= is not expanded by systemd: $ stays single. Sorted by name.
	require.Contains(t, unit, "\nEnvironment=\"BROWSEROP_LOG_LEVEL=debug\"\nEnvironment=\"PATH=/usr/bin:/bin\"\nEnvironment=\"XDG_STATE_HOME=/s/%%h/$X\"\n")
	for _, line := range []string{"Type=exec", "KillMode=process", "TimeoutStopSec=90", "Restart=on-failure", "RestartPreventExitStatus=2", "WantedBy=default.target"} {
		require.Contains(t, unit, "\n"+line+"\n")
	}
}

// A launchd agent's plist holds each argument and variable as given,
// XML-escaped, and reads back to the same values.
func TestRenderLaunchd(t *testing.T) {
	t.Parallel()
	spec := Spec{
		Binary:  "/Applications/A & B/browserop",
		Args:    []string{"serve", "--config", `/Users/u/<cfg> "1".yaml`},
		Env:     map[string]string{"PATH": "/usr/bin:/bin", "BROWSEROP_SITES_DIR": "/Users/u/a&b"},
		LogFile: "/Users/u/Library/Logs/browserop/browserop.log",
	}
	plist, err := renderLaunchd(spec)
	require.NoError(t, err)
	require.Contains(t, plist, "<string>/Applications/A &amp; B/browserop</string>")

	// The top dict, in order: key, value, key, value...
	var doc struct {
		Dict struct {
			Items []struct {
				XMLName xml.Name
				Text    string `xml:",chardata"`
				Inner   []byte `xml:",innerxml"`
			} `xml:",any"`
		} `xml:"dict"`
	}
	dec := xml.NewDecoder(strings.NewReader(plist))
	dec.Strict = true
	require.NoError(t, dec.Decode(&doc))
	values := map[string]int{}
	items := doc.Dict.Items
	require.Zero(t, len(items)%2, "keys and values pair up")
	for i := 0; i < len(items); i += 2 {
		require.Equal(t, "key", items[i].XMLName.Local)
		values[items[i].Text] = i + 1
	}
	value := func(key string) (string, []byte) {
		i, ok := values[key]
		require.True(t, ok, "no %s", key)
		return items[i].XMLName.Local, items[i].Inner
	}
	kind, inner := value("Label")
	require.Equal(t, "string", kind)
	require.Equal(t, launchdLabel, string(inner))

	kind, inner = value("ProgramArguments")
	require.Equal(t, "array", kind)
	var args struct {
		Strings []string `xml:"string"`
	}
	require.NoError(t, xml.Unmarshal(append(append([]byte("<a>"), inner...), "</a>"...), &args))
	require.Equal(t, append([]string{spec.Binary}, spec.Args...), args.Strings)

	kind, inner = value("EnvironmentVariables")
	require.Equal(t, "dict", kind)
	var env struct {
		Items []struct {
			XMLName xml.Name
			Text    string `xml:",chardata"`
		} `xml:",any"`
	}
	require.NoError(t, xml.Unmarshal(append(append([]byte("<d>"), inner...), "</d>"...), &env))
	got := map[string]string{}
	for i := 0; i+1 < len(env.Items); i += 2 {
		got[env.Items[i].Text] = env.Items[i+1].Text
	}
	require.Equal(t, spec.Env, got)

	for key, want := range map[string]string{"RunAtLoad": "true", "AbandonProcessGroup": "true"} {
		kind, _ := value(key)
		require.Equal(t, want, kind, key)
	}
	kind, inner = value("KeepAlive")
	require.Equal(t, "dict", kind)
	require.Equal(t, "<key>Crashed</key><true/>", string(inner), "restarted only after a crash, never on an exit code")
	for _, key := range []string{"StandardOutPath", "StandardErrorPath"} {
		_, inner := value(key)
		require.Equal(t, spec.LogFile, string(inner))
	}

	if py, err := exec.LookPath("python3"); err == nil {
		// A second, independent reader: Python's plistlib.
		path := filepath.Join(t.TempDir(), "agent.plist")
		require.NoError(t, os.WriteFile(path, []byte(plist), 0o644))
		out, err := exec.Command(py, "-c", `import plistlib,sys; d=plistlib.load(open(sys.argv[1],"rb")); print(d["ProgramArguments"][0]); print(d["ProgramArguments"][3]); print(d["EnvironmentVariables"]["BROWSEROP_SITES_DIR"])`, path).CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Equal(t, spec.Binary+"\n"+spec.Args[2]+"\n/Users/u/a&b\n", string(out))
	}
}
