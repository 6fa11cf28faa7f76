package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/browserop/browserop/budgets"
	"github.com/browserop/browserop/ledger"
	"github.com/stretchr/testify/require"
)

// cli runs browserop in an isolated environment rooted at dir.
type cli struct {
	t   *testing.T
	dir string
	env []string
}

func newCLI(t *testing.T) *cli {
	t.Helper()
	dir := t.TempDir()
	return &cli{t: t, dir: dir, env: []string{
		"HOME=" + dir,
		"XDG_STATE_HOME=" + filepath.Join(dir, "state"),
		"XDG_CONFIG_HOME=" + filepath.Join(dir, "config"),
	}}
}

func (c *cli) run(args ...string) (code int, stdout, stderr string) {
	c.t.Helper()
	var out, errb bytes.Buffer
	code = RunEnv(context.Background(), args, &out, &errb, c.env)
	return code, out.String(), errb.String()
}

func (c *cli) ledgerPath() string { return filepath.Join(c.dir, "state", "browserop", "ledger.db") }

// seed opens the default ledger and leaves one action in each given status.
func (c *cli) seed(statuses ...ledger.Status) []ledger.Action {
	c.t.Helper()
	ctx := context.Background()
	db, err := ledger.Open(ctx, c.ledgerPath(), ledger.Options{})
	require.NoError(c.t, err)
	defer db.Close()
	l, err := db.AcquireLease(ctx, "browser-operator", "seed", time.Minute)
	require.NoError(c.t, err)
	var out []ledger.Action
	for i, s := range statuses {
		p, _ := json.Marshal(map[string]any{"text": "seed " + string(rune('a'+i))})
		a, _, err := db.Reserve(ctx, l.Fence(), ledger.Intent{Type: "post", Format: budgets.PostText, Site: "demo", Actor: "alice", Payload: p})
		require.NoError(c.t, err)
		path := map[ledger.Status][]ledger.Status{
			ledger.Planned:   nil,
			ledger.Executing: {ledger.Executing},
			ledger.Ambiguous: {ledger.Executing, ledger.Ambiguous},
			ledger.Verified:  {ledger.Executing, ledger.Verified},
			ledger.Moderated: {ledger.Executing, ledger.Moderated},
		}[s]
		for _, to := range path {
			a, err = db.Transition(ctx, l.Fence(), a.ID, ledger.Change{To: to, Reason: "seed", Result: "http://127.0.0.1/p/1"})
			require.NoError(c.t, err)
		}
		out = append(out, a)
	}
	require.NoError(c.t, db.ReleaseLease(ctx, l))
	return out
}

func TestUsage(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	code, out, _ := c.run()
	require.Equal(t, 2, code)
	require.Contains(t, out, "exit codes:")
	code, _, errs := c.run("frobnicate")
	require.Equal(t, 2, code)
	require.Contains(t, errs, `unknown command "frobnicate"`)
	code, out, _ = c.run("help")
	require.Equal(t, 0, code)
	require.Contains(t, out, "5  needs a person")
	code, out, _ = c.run("version", "--json")
	require.Equal(t, 0, code)
	require.JSONEq(t, `{"version":"dev"}`, out)
}

func TestMigrateCommand(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	code, out, errs := c.run("migrate")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "applied 0001_init")
	require.Contains(t, out, "applied 0002_tab_opening")
	require.Contains(t, out, "applied 0003_action_other_accounts")
	require.Contains(t, out, "applied 0004_task_bounds")
	require.Contains(t, out, fmt.Sprintf("schema version %d", ledger.LatestSchemaVersion()))
	fi, err := os.Stat(c.ledgerPath())
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	code, out, _ = c.run("migrate", "--json")
	require.Equal(t, 0, code)
	var got map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.Equal(t, float64(ledger.LatestSchemaVersion()), got["schema_version"])
	require.Empty(t, got["applied"], "nothing left to apply")
}

func TestStatusAndResolve(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	code, _, errs := c.run("status")
	require.Equal(t, 2, code, "status never creates a ledger")
	require.Contains(t, errs, "no ledger at")
	_, err := os.Stat(c.ledgerPath())
	require.True(t, os.IsNotExist(err), "no file was created")
	code, _, errs = c.run("status", "--ledger", filepath.Join(c.dir, "typo.db"))
	require.Equal(t, 2, code, errs)

	c.seed()
	code, out, errs := c.run("status")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "no ambiguous actions")

	seeded := c.seed(ledger.Verified, ledger.Ambiguous, ledger.Planned)
	amb := seeded[1]

	code, out, _ = c.run("status")
	require.Equal(t, 5, code, "ambiguous actions waiting: exit 5")
	require.Contains(t, out, amb.ID)
	require.Contains(t, out, "lease browser-operator: free")
	require.Regexp(t, `post_text\s+post_text\s+1\s+1\s+8`, out, "budget use per limit: 1 used, 1 in flight, default max 8")

	code, out, _ = c.run("status", "--json")
	require.Equal(t, 5, code)
	var st struct {
		Lease  struct{ Holder string }
		Counts map[string]int
		Ambig  []struct{ ID string } `json:"ambiguous"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &st))
	require.Equal(t, "seed", st.Lease.Holder)
	require.Equal(t, 1, st.Counts["ambiguous"])
	require.Equal(t, 1, st.Counts["verified"])
	require.Len(t, st.Ambig, 1)

	code, out, _ = c.run("actions", "list", "--status", "ambiguous", "--json")
	require.Equal(t, 0, code)
	var list []struct{ ID, Status string }
	require.NoError(t, json.Unmarshal([]byte(out), &list))
	require.Len(t, list, 1)
	require.Equal(t, amb.ID, list[0].ID)

	code, out, _ = c.run("actions", "show", amb.ID)
	require.Equal(t, 0, code)
	require.Contains(t, out, "history:")
	require.Regexp(t, `executing\s+ambiguous`, out)

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"actions", "resolve", amb.ID}, "give --verified URL or --absent"},
		{[]string{"actions", "resolve", amb.ID, "--verified", "http://127.0.0.1/p/1", "--absent"}, "not both"},
		{[]string{"actions", "resolve", amb.ID, "--absent"}, "--absent needs --reason"},
		{[]string{"actions", "resolve", amb.ID, "--verified", "not a url"}, "not an absolute http(s) URL"},
		{[]string{"actions", "resolve", amb.ID, "--verified", "https://elsewhere.example/p/1"}, "not on the action's site"},
		{[]string{"actions", "resolve", seeded[2].ID, "--verified", "http://127.0.0.1/p/1"}, "only an ambiguous or moderated action"},
		{[]string{"actions", "resolve", "act_missing", "--verified", "http://127.0.0.1/p/1"}, "not found"},
		{[]string{"actions", "list", "--status", "done"}, `--status "done" is not one of`},
		{[]string{"actions", "frob"}, "unknown actions subcommand"},
		{[]string{"actions", "show"}, "expected one action id"},
	} {
		code, _, errs := c.run(tc.args...)
		require.Equal(t, 2, code, "%v: %s", tc.args, errs)
		require.Contains(t, errs, tc.want, tc.args)
	}

	code, out, errs = c.run("actions", "resolve", amb.ID, "--verified", "http://127.0.0.1/p/42", "--reason", "I saw it")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "is now verified")
	code, out, _ = c.run("actions", "show", amb.ID, "--json")
	require.Equal(t, 0, code)
	var shown struct {
		Status  string `json:"status"`
		History []struct{ By string }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &shown))
	require.Equal(t, "verified", shown.Status)
	require.Equal(t, "person", shown.History[len(shown.History)-1].By, "recorded as the person's")

	code, out, _ = c.run("status", "--json")
	require.Equal(t, 0, code, "nothing waits for a person now")
	require.Contains(t, out, `"used": 2`, "the person's verified action consumed its budget")
}

func TestLeaseCommand(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	code, _, _ := c.run("lease")
	require.Equal(t, 2, code, "no ledger yet")
	c.run("migrate")
	code, out, _ := c.run("lease")
	require.Equal(t, 0, code)
	require.Contains(t, out, "never acquired")
	c.seed()
	code, out, _ = c.run("lease", "--json")
	require.Equal(t, 0, code)
	require.Contains(t, out, `"holder": "seed"`)
	require.Contains(t, out, `"held": false`)
}

func TestBadLedgerAndConfig(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	notes := filepath.Join(c.dir, "notes.txt")
	require.NoError(t, os.WriteFile(notes, []byte("my notes\n"), 0o600))
	code, _, errs := c.run("status", "--ledger", notes)
	require.Equal(t, 2, code)
	require.Contains(t, errs, "not a browserop ledger")
	b, _ := os.ReadFile(notes)
	require.Equal(t, "my notes\n", string(b), "the file is untouched")

	bad := filepath.Join(c.dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("budgets:\n  formats:\n    post_txt:\n      limit: 3\n"), 0o600))
	code, _, errs = c.run("status", "--config", bad)
	require.Equal(t, 2, code)
	require.Contains(t, errs, "post_txt")

	code, _, errs = c.run("status", "--config", filepath.Join(c.dir, "missing.yaml"))
	require.Equal(t, 2, code)
	require.True(t, strings.Contains(errs, "missing.yaml"), errs)
}

// An action whose effect may be on another account says so where a person
// looks: actions show (text and JSON) and status.
func TestActionsShowOtherAccounts(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	amb := c.seed(ledger.Ambiguous)[0]
	ctx := context.Background()
	db, err := ledger.Open(ctx, c.ledgerPath(), ledger.Options{})
	require.NoError(t, err)
	l, err := db.AcquireLease(ctx, "browser-operator", "op", time.Minute)
	require.NoError(t, err)
	_, err = db.NoteOtherAccount(ctx, l.Fence(), amb.ID, "carol", "the effect may be on @carol; a person checks there and resolves it")
	require.NoError(t, err)
	require.NoError(t, db.ReleaseLease(ctx, l))
	require.NoError(t, db.Close())

	code, out, errs := c.run("actions", "show", amb.ID)
	require.Equal(t, 0, code, errs)
	require.Regexp(t, `may be on:\s+@carol`, out)
	require.Contains(t, out, "a person checks there")
	code, out, _ = c.run("actions", "show", amb.ID, "--json")
	require.Equal(t, 0, code)
	var shown struct {
		OtherAccounts []string `json:"other_accounts"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &shown))
	require.Equal(t, []string{"carol"}, shown.OtherAccounts)
	code, out, _ = c.run("status")
	require.Equal(t, 5, code)
	require.Contains(t, out, "@carol", "status shows why it waits")
}

// An action that waits on the person's confirmation shows the answer and
// why a pass holds it (a handed-off tab not proven closed), in text and
// JSON: the person reads there what to do.
func TestActionsShowConfirmationHold(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	a := c.seed(ledger.Planned)[0]
	ctx := context.Background()
	db, err := ledger.Open(ctx, c.ledgerPath(), ledger.Options{})
	require.NoError(t, err)
	l, err := db.AcquireLease(ctx, "browser-operator", "op", time.Minute)
	require.NoError(t, err)
	_, err = db.RequestConfirmation(ctx, l.Fence(), a.ID)
	require.NoError(t, err)
	_, err = db.AnswerConfirmation(ctx, a.ID, "confirmed", "person", "looks right")
	require.NoError(t, err)
	const why = "confirmed, not published yet: the handed-off tab could not be closed with proof; close it yourself"
	_, err = db.HoldConfirmation(ctx, l.Fence(), a.ID, why)
	require.NoError(t, err)
	require.NoError(t, db.ReleaseLease(ctx, l))
	require.NoError(t, db.Close())

	code, out, errs := c.run("actions", "show", a.ID)
	require.Equal(t, 0, code, errs)
	require.Regexp(t, `confirmation:\s+confirmed person: looks right`, out)
	require.Regexp(t, `held:\s+`+regexp.QuoteMeta(why), out)
	code, out, _ = c.run("actions", "show", a.ID, "--json")
	require.Equal(t, 0, code)
	var shown struct {
		Confirmation string `json:"confirmation"`
		Held         string `json:"held"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &shown))
	require.Equal(t, "confirmed person: looks right", shown.Confirmation)
	require.Equal(t, why, shown.Held)
}

// A person who found an ambiguous effect absent may ask for the intent to
// be tried again (--retry): the action ends failed as a definitive
// failure, which a later pass replans; without --retry it is abandoned
// (never tried again). A moderated action is listed, shown and resolved
// like an ambiguous one.
func TestActionsResolveRetry(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	seeded := c.seed(ledger.Ambiguous, ledger.Ambiguous, ledger.Moderated)
	again, never, held := seeded[0], seeded[1], seeded[2]

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"actions", "resolve", again.ID, "--retry", "--reason", "x"}, "--retry goes with --absent"},
		{[]string{"actions", "resolve", again.ID, "--retry", "--verified", "http://127.0.0.1/p/1"}, "--retry goes with --absent"},
	} {
		code, _, errs := c.run(tc.args...)
		require.Equal(t, 2, code, "%v: %s", tc.args, errs)
		require.Contains(t, errs, tc.want, tc.args)
	}

	code, out, errs := c.run("actions", "resolve", again.ID, "--absent", "--retry", "--reason", "not on the profile")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "is now failed; a later pass tries it again")
	code, out, errs = c.run("actions", "resolve", never.ID, "--absent", "--reason", "not on the profile")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "is now failed\n")
	var shown struct {
		Status       string `json:"status"`
		FailureClass string `json:"failure_class"`
	}
	for id, class := range map[string]string{again.ID: "definitive", never.ID: "abandoned"} {
		code, out, _ = c.run("actions", "show", id, "--json")
		require.Equal(t, 0, code)
		require.NoError(t, json.Unmarshal([]byte(out), &shown))
		require.Equal(t, "failed", shown.Status)
		require.Equal(t, class, shown.FailureClass, id)
	}

	code, out, _ = c.run("actions", "list", "--status", "moderated")
	require.Equal(t, 0, code)
	require.Contains(t, out, held.ID)
	require.Contains(t, out, "moderated")
	code, out, _ = c.run("status")
	require.Equal(t, 0, code, "a moderated action waits for the site, not for a person")
	require.Regexp(t, `moderated\s+1`, out)
	code, out, errs = c.run("actions", "resolve", held.ID, "--absent", "--reason", "the moderators rejected it")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "is now failed")
}
