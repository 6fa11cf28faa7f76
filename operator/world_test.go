package operator_test

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/browser/browsertest"
	"github.com/browserop/browserop/budgets"
	"github.com/browserop/browserop/bundled"
	"github.com/browserop/browserop/demosite"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/operator"
	"github.com/browserop/browserop/sites"
)

var shared *browsertest.Shared

func TestMain(m *testing.M) {
	shared = browsertest.Start()
	code := m.Run()
	shared.Close()
	os.Exit(code)
}

// hosts hands each world its own loopback address: cookies are kept per
// host, so worlds sharing the browser never see each other's sessions.
var hosts atomic.Int32

// world is one demosite, one ledger and one Runner over the shared browser.
type world struct {
	t      testing.TB
	srv    *demosite.Server
	base   string
	db     *ledger.DB
	calDir string
	site   sites.Adapter
	policy budgets.Policy
	cfg    operator.Config
	b      *browser.Browser
	// Planner, when set before the first pass, is the runner's planner.
	planner operator.Planner
	runner  *operator.Runner
}

// settle is the demo adapter's settle time in these tests: short, so that
// definitive absence is reached quickly.
const settle = 2 * time.Second

func newWorld(t testing.TB, faults demosite.Faults) *world {
	t.Helper()
	b := shared.Browser(t)
	host := fmt.Sprintf("127.0.0.%d", 2+hosts.Add(1))
	srv := demosite.New(demosite.Options{Oracle: true})
	base, err := srv.Start(host + ":0")
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	dir := t.TempDir()
	if d := os.Getenv("BENCH_LEDGER_DIR"); d != "" {
		// Benchmarks may put the ledger on another disk to see its share.
		dir, err = os.MkdirTemp(d, "ledger-")
		require.NoError(t, err)
		t.Cleanup(func() { os.RemoveAll(dir) })
	}
	db, err := ledger.Open(context.Background(), filepath.Join(dir, "ledger.db"), ledger.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	w := &world{t: t, srv: srv, base: base, db: db, calDir: filepath.Join(dir, "calendar"), b: b}
	require.NoError(t, os.MkdirAll(w.calDir, 0o700))
	w.site = demoAdapter(t, base)
	w.policy, err = budgets.NewPolicy(map[string]budgets.FormatLimit{
		budgets.PostText: {Max: 100, Window: 24 * time.Hour},
		budgets.Reply:    {Max: 100, Window: 24 * time.Hour},
	}, map[string]budgets.GroupLimit{"original": {Formats: []string{budgets.PostText, budgets.PostImage, budgets.Thread}, Max: 100, Window: 24 * time.Hour}})
	require.NoError(t, err)
	w.cfg = operator.Config{CalendarDir: w.calDir, ActionTimeout: 4 * time.Second, Heartbeat: time.Second, LeaseTTL: 10 * time.Second}
	// The person's answer, given once: these tests' tabs are closed as
	// they were before the preference was asked (cleanup_test.go tests
	// the others, and an unknown one).
	_, err = db.SetCleanupPreference(context.Background(), w.cfg.Profile, ledger.CleanupSubmittedAndProbeBlockers, "test")
	require.NoError(t, err)
	w.login("alice")
	require.NoError(t, srv.SetFaults(faults))
	return w
}

// demoAdapter is the bundled demo adapter on base, with a short settle.
func demoAdapter(t testing.TB, base string) sites.Adapter { return demoAdapterNamed(t, base, "demo") }

// demoAdapterNamed is the demo adapter under another name.
func demoAdapterNamed(t testing.TB, base, name string) sites.Adapter {
	t.Helper()
	raw, err := fs.ReadFile(bundled.Sites, "sites/demo.yaml")
	require.NoError(t, err)
	spec := strings.Replace(string(raw), "settle: 15s", "settle: "+settle.String(), 1)
	spec = strings.Replace(spec, "http://127.0.0.1:8787", base, 1)
	d, err := sites.Parse(name+".yaml", []byte(spec))
	require.NoError(t, err)
	require.Equal(t, name, d.Name())
	return d
}

// login signs the shared browser in to this world's demosite.
func (w *world) login(handle string) {
	w.t.Helper()
	ctx := context.Background()
	tab, err := w.b.NewTab(ctx, "about:blank")
	require.NoError(w.t, err)
	defer w.b.CloseTab(ctx, tab)
	_, err = tab.Navigate(ctx, w.base+"/login")
	require.NoError(w.t, err)
	_, err = tab.Fill(ctx, "input#login-handle", handle)
	require.NoError(w.t, err)
	_, err = tab.Fill(ctx, "input#login-password", demosite.Password)
	require.NoError(w.t, err)
	_, err = tab.ClickOnceAndWait(ctx, "button#login-submit")
	require.NoError(w.t, err)
	who, err := tab.Attr(ctx, "span#whoami", "data-handle")
	require.NoError(w.t, err)
	require.Equal(w.t, handle, who)
}

func (w *world) getRunner() *operator.Runner {
	if w.runner == nil {
		w.useRunner(nil, w.site)
	}
	return w.runner
}

// useRunner makes w's runner one over adapters on the shared browser,
// logging to log (nil: nowhere).
func (w *world) useRunner(log *slog.Logger, adapters ...sites.Adapter) {
	w.runner = operator.NewRunner(w.db, adapters, w.policy, w.planner, w.connect(), w.cfg, log)
}

// pass runs one pass and returns its summary.
func (w *world) pass() *operator.Summary {
	w.t.Helper()
	sum, err := w.getRunner().Pass(context.Background())
	require.NoError(w.t, err)
	return sum
}

// calendar writes the calendar file; entries use {base} and {at}.
func (w *world) calendar(yaml string) { fixedCalendar(w, time.Now().Add(-time.Second), yaml) }

func post(id, text string) string {
	return fmt.Sprintf("  - {id: %s, site: demo, actor: alice, type: post, at: \"{at}\", text: %q}\n", id, text)
}

// effects returns the oracle's committed effects of a kind ("" for all).
func (w *world) effects(kind string) []demosite.Effect {
	var out []demosite.Effect
	for _, e := range w.srv.Effects() {
		if kind == "" || e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// actions returns the ledger's actions.
func (w *world) actions() []ledger.Action {
	as, err := w.db.ListActions(context.Background(), ledger.ActionFilter{})
	require.NoError(w.t, err)
	return as
}

// checkBooks asserts docs/design.md invariant 5 and that the ledger agrees with
// the oracle: every verified post-like action is exactly one committed
// effect at its permalink, and budget usage equals verified actions.
func (w *world) checkBooks() {
	w.t.Helper()
	perURL := map[string]int{}
	for _, e := range w.effects("") {
		if e.Kind == demosite.EffectPost || e.Kind == demosite.EffectReply {
			perURL[fmt.Sprintf("%s/p/%d", w.base, e.PostID)]++
		}
	}
	verified := 0
	for _, a := range w.actions() {
		if a.Status != ledger.Verified {
			continue
		}
		if a.Format != "" {
			verified++
		}
		if a.Type.Creates() {
			require.Equal(w.t, 1, perURL[a.CanonicalResult], "verified %s has exactly one effect at %s", a.ID, a.CanonicalResult)
		}
	}
	all, err := budgets.NewPolicy(nil, map[string]budgets.GroupLimit{"all": {Formats: budgets.Formats, Max: 1 << 30, Window: 1 << 62}})
	require.NoError(w.t, err)
	u, err := w.db.BudgetUsage(context.Background(), all)
	require.NoError(w.t, err)
	require.Equal(w.t, verified, u[0].Used, "budget consumed equals verified actions")
}

// statuses counts the ledger's actions by status.
func (w *world) statuses() map[ledger.Status]int {
	out := map[ledger.Status]int{}
	for _, a := range w.actions() {
		out[a.Status]++
	}
	return out
}

func hostOf(base string) string {
	u, _ := url.Parse(base)
	return u.Hostname()
}

func browserTarget(raw string) browser.TargetID { return browser.TargetID(raw) }
