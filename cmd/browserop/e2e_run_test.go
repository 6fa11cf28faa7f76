package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/browser/browsertest"
	"github.com/stretchr/testify/require"
)

// TestE2EIdleChromeStoppedAndTabsShown: a Chrome browserop launched and
// left running (its run died) is stopped at the end of the next pass when
// it holds only browserop's tabs, also when nothing is due; `browserop
// tabs` shows the tab ledger.
func TestE2EIdleChromeStoppedAndTabsShown(t *testing.T) {
	w := newWorld(t, opts{browser: true})
	// A Chrome browserop launched, left by a run that died.
	cfg := browsertest.Config(w.profile)
	cfg.ExecPath, cfg.Persistent = w.exe, true
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b, err := browser.Launch(ctx, cfg)
	require.NoError(t, err)
	require.NoError(t, b.Disconnect())
	require.False(t, w.browserGone())

	code, out, errs := w.run(nil, "run")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errs)
	require.Contains(t, out, "nothing to do")
	eventually(t, 20*time.Second, "the idle Chrome is stopped at the end of a pass with nothing due", w.browserGone)

	code, out, _ = w.run(nil, "tabs")
	require.Equal(t, 0, code)
	require.Contains(t, out, "no tab records")

	w.writeCalendar(entry{ID: "tabbed", Type: "post", Text: "a post, then its tab in the ledger", At: time.Now().Add(-time.Second)})
	code, sum, errs := w.pass()
	require.Equal(t, 0, code, "%+v\n%s", sum, errs)
	eventually(t, 20*time.Second, "the Chrome of the pass is stopped at its end", w.browserGone)
	code, out, errs = w.run(nil, "tabs", "--json")
	require.Equal(t, 0, code, errs)
	var tabs []tabJSON
	require.NoError(t, json.Unmarshal([]byte(out), &tabs), out)
	require.NotEmpty(t, tabs)
	for _, tb := range tabs {
		require.Equal(t, "demo", tb.Site)
		require.Equal(t, "closed_verified", string(tb.State))
		require.Contains(t, tb.CloseProof, "proved")
		require.GreaterOrEqual(t, tb.Epoch, 1, "an inspection epoch starts at 1")
		require.NotEmpty(t, tb.RunID)
	}
	code, out, _ = w.run(nil, "tabs")
	require.Equal(t, 0, code)
	require.Contains(t, out, "RECORD")
	require.Contains(t, out, "closed_verified")
	code, out, _ = w.run(nil, "tabs", "--open")
	require.Equal(t, 0, code)
	require.Contains(t, out, "no tab records")
}

// TestE2EDoctor: doctor reports each part of the installation, with who
// is signed in read from the site, and fails (exit 2) on a bad calendar.
func TestE2EDoctor(t *testing.T) {
	w := newWorld(t, opts{browser: true, noCleanup: true}) // no ledger yet
	w.writeCalendar(entry{ID: "soon", Type: "post", Text: "later", At: time.Now().Add(time.Hour)})
	code, out, errs := w.run(nil, "doctor")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errs)
	for _, want := range []string{
		"ok   config     " + w.cfgPath + ": found and valid",
		"ok   ledger     ", "not created yet",
		"ok   chrome     " + w.exe + ": Chromium",
		"ok   profile    " + w.profile + ": not in use",
		"ok   sign-in demo signed in as @alice",
		"ok   calendar   " + w.calDir + ": 1 valid entries",
		"warn service    not installed", "-> browserop service install",
		"warn api        nothing answers",
	} {
		require.Contains(t, out, want)
	}
	require.True(t, w.browserGone(), "doctor stops the Chrome it started")

	code, _, _ = w.run(nil, "run")
	require.Equal(t, 0, code)
	code, out, _ = w.run(nil, "doctor", "--no-browser")
	require.Equal(t, 0, code, out)
	require.Regexp(t, `ok   ledger     .*: schema \d+, up to date`, out)

	w.writeCalendar(entry{ID: "soon", Type: "post", Text: "later", At: time.Now().Add(time.Hour)},
		entry{ID: "bad", Type: "like", At: time.Now().Add(time.Hour)})
	code, out, _ = w.run(nil, "doctor", "--no-browser")
	require.Equal(t, 2, code, out)
	require.Contains(t, out, "FAIL calendar")
	require.Contains(t, out, `entry "bad"`)

	// An entry every pass refuses at load (its target outside the site's
	// authority) fails here too.
	w.writeCalendar(entry{ID: "soon", Type: "post", Text: "later", At: time.Now().Add(time.Hour)},
		entry{ID: "evil", Type: "like", Target: "https://evil.example/p/1", At: time.Now().Add(time.Hour)})
	code, out, _ = w.run(nil, "doctor", "--no-browser")
	require.Equal(t, 2, code, out)
	require.Contains(t, out, `entry "evil": target "https://evil.example/p/1" is outside the authority of site "demo"`)
}

// TestRunWithNothingConfigured: `run` on a fresh machine says what is
// missing and the next step, instead of only "nothing was due".
func TestRunWithNothingConfigured(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	if os.Geteuid() == 0 {
		c.env = append(c.env, "BROWSEROP_BROWSER_NO_SANDBOX=true")
	}
	code, out, errs := c.run("run")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errs)
	require.Contains(t, out, "nothing to do")
	require.Contains(t, out, "next step: no configuration file ("+filepath.Join(c.dir, "config", "browserop", "config.yaml")+")")
	require.Contains(t, out, "next step: no calendar entries in "+filepath.Join(c.dir, "config", "browserop", "calendar"))
	require.Contains(t, out, "next step: nobody signed in yet on profile "+filepath.Join(c.dir, "state", "browserop", "profile")+": run `browserop login --site demo`")
}
