package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/browserop/browserop/browser"
	"github.com/stretchr/testify/require"
)

// writeConfig writes c's config file at the default place.
func (c *cli) writeConfig(yaml string) {
	c.t.Helper()
	p := filepath.Join(c.dir, "config", "browserop", "config.yaml")
	require.NoError(c.t, os.MkdirAll(filepath.Dir(p), 0o700))
	require.NoError(c.t, os.WriteFile(p, []byte(yaml), 0o600))
}

// TestConfigErrorsFoundAtStart: a profile held by a Chrome browserop did
// not start, a devtools_url off loopback and root without no_sandbox are
// configuration errors: exit 2 with what to change, at start, although
// nothing is due (they used to pass as "nothing was due", or exit 3 once
// something was). login exits 2 for the same error.
func TestConfigErrorsFoundAtStart(t *testing.T) {
	t.Run("DevtoolsURLNotLoopback", func(t *testing.T) {
		t.Parallel()
		c := newCLI(t)
		c.writeConfig("browser:\n  devtools_url: http://10.1.2.3:9222\n")
		code, out, errs := c.run("run")
		require.Equal(t, 2, code, "stdout:\n%s\nstderr:\n%s", out, errs)
		require.Contains(t, errs, "not loopback")
		require.Contains(t, errs, "http://127.0.0.1:9222", "says what to change")
		require.NotContains(t, out, "nothing to do")
	})
	t.Run("RootWithoutNoSandbox", func(t *testing.T) {
		t.Parallel()
		if os.Geteuid() != 0 {
			t.Skip("runs only as root")
		}
		c := newCLI(t)
		c.writeConfig("browser:\n  no_sandbox: false\n")
		code, _, errs := c.run("run")
		require.Equal(t, 2, code, errs)
		require.Contains(t, errs, "browser.no_sandbox")
		code, _, errs = c.run("login", "--headless", "--timeout", "5s")
		require.Equal(t, 2, code, errs)
		require.Contains(t, errs, "browser.no_sandbox")
	})
	t.Run("ProfileInUseByAnotherChrome", func(t *testing.T) {
		t.Parallel()
		exe, err := browser.FindExecutable(os.Getenv("BROWSEROP_TEST_CHROME"))
		if err != nil {
			t.Skipf("no Chromium: %v (scripts/setup.sh installs it)", err)
		}
		c := newCLI(t)
		profile := filepath.Join(c.dir, "profile")
		require.NoError(t, os.MkdirAll(profile, 0o700))
		c.writeConfig(fmt.Sprintf("browser:\n  profile_dir: %s\n  no_sandbox: %t\n", profile, os.Geteuid() == 0))
		// The person's own Chrome on that profile, not started by browserop.
		chrome := exec.Command(exe, "--headless", "--no-first-run", "--user-data-dir="+profile, "--remote-debugging-port=0", "about:blank")
		if os.Geteuid() == 0 {
			chrome.Args = append(chrome.Args[:1], append([]string{"--no-sandbox"}, chrome.Args[1:]...)...)
		}
		chrome.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		require.NoError(t, chrome.Start())
		t.Cleanup(func() {
			syscall.Kill(-chrome.Process.Pid, syscall.SIGKILL)
			chrome.Wait()
		})
		eventually(t, 30*time.Second, "Chrome holds the profile", func() bool {
			_, err := os.Readlink(filepath.Join(profile, "SingletonLock"))
			return err == nil
		})

		code, out, errs := c.run("run")
		require.Equal(t, 2, code, "stdout:\n%s\nstderr:\n%s", out, errs)
		require.Contains(t, errs, "in use by a Chrome that browserop did not start")
		require.Contains(t, errs, "browser.devtools_url", "says how to attach instead")
		require.NotContains(t, out, "nothing to do")

		code, _, errs = c.run("login", "--headless", "--timeout", "10s")
		require.Equal(t, 2, code, errs)
		require.Contains(t, errs, "in use by a Chrome that browserop did not start")
		require.True(t, strings.Count(errs, "\n") <= 2, "one message: %s", errs)
	})
}

// TestUnreachableChromeSaysWhatToCheck: attach mode with nothing at the
// DevTools address: the reason says what to check, not the DevTools
// client's internals.
func TestUnreachableChromeSaysWhatToCheck(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	c.writeConfig("browser:\n  devtools_url: http://127.0.0.1:9\n")
	cal := filepath.Join(c.dir, "config", "browserop", "calendar", "cal.yaml")
	require.NoError(t, os.MkdirAll(filepath.Dir(cal), 0o700))
	at := time.Now().Add(-time.Second).UTC().Format(time.RFC3339)
	require.NoError(t, os.WriteFile(cal, []byte("entries:\n  - {id: p, site: demo, actor: alice, type: post, at: \""+at+"\", text: hi}\n"), 0o600))
	code, out, errs := c.run("run")
	require.Equal(t, 3, code, "stdout:\n%s\nstderr:\n%s", out, errs)
	require.Contains(t, out, "Chrome is not reachable at browser.devtools_url http://127.0.0.1:9: check that Chrome is running")
	require.Contains(t, out, "planned (held)  hard stop: error: browser: Chrome is not reachable", "the action's row says why")
	require.NotContains(t, out, "websocket")
	require.NotContains(t, out, "dial tcp")
}
