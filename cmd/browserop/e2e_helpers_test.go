package main

// Helpers of the process-level end-to-end tests (e2e_test.go): a browserop
// binary built once per test process, a world per test (its own HOME and
// XDG directories, config, site adapter, calendar, demosite and signed-in
// browser profile), and real browserop processes with their exit status.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/browser/browsertest"
	"github.com/browserop/browserop/bundled"
	"github.com/browserop/browserop/demosite"
	"github.com/browserop/browserop/internal/child"
	"github.com/stretchr/testify/require"
)

var (
	e2eBinDir   string
	e2eOnce     sync.Once
	e2eBin      string
	e2eBuildErr error
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "browserop-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	e2eBinDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// binary returns the browserop binary, built from this package the first
// time a test asks (so tests that need no process pay nothing).
func binary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("e2e: skipped with -short")
	}
	e2eOnce.Do(func() {
		out := filepath.Join(e2eBinDir, "browserop")
		if err := child.Build(context.Background(), out); err != nil {
			e2eBuildErr = err
			return
		}
		e2eBin = out
	})
	if e2eBuildErr != nil {
		t.Fatalf("e2e: %v", e2eBuildErr)
	}
	return e2eBin
}

// proc is one browserop process of a test.
type proc struct {
	t *testing.T
	*child.Proc
}

// exit waits (at most d) for the process and returns its exit code, or -1
// and the signal that ended it.
func (p *proc) exit(d time.Duration) (code int, sig syscall.Signal) {
	p.t.Helper()
	if !p.Wait(d) {
		p.t.Fatalf("e2e: %s did not end within %s\nstdout:\n%s\nstderr:\n%s", p.Name, d, p.Stdout, p.Stderr)
	}
	return p.Exit()
}

// code waits for the process and fails the test unless it exited (rather
// than being killed).
func (p *proc) code(d time.Duration) int {
	p.t.Helper()
	c, sig := p.exit(d)
	require.Zero(p.t, sig, "%s was killed by %v\nstdout:\n%s\nstderr:\n%s", p.Name, sig, p.Stdout, p.Stderr)
	return c
}

func (p *proc) signal(s syscall.Signal) {
	p.t.Helper()
	require.NoError(p.t, p.Cmd.Process.Signal(s), "signal %s", p.Name)
}

func (p *proc) String() string {
	return fmt.Sprintf("%s\nstdout:\n%s\nstderr:\n%s", p.Name, p.Stdout, p.Stderr)
}

// opts configure a world.
type opts struct {
	// browser: the world needs Chromium and a profile signed in as alice.
	browser bool
	// noSignIn: with browser, leave the profile fresh (not signed in).
	noSignIn bool
	// attach: browserop attaches to a Chrome the test keeps running
	// (browser.devtools_active_port_file) instead of launching its own.
	attach      bool
	leaseTTL    string
	heartbeat   string
	schedule    string
	publishLate bool
	// settle is the demo adapter's search settle time (default 2s here,
	// instead of the bundled 15s, so definitive absence comes quickly).
	settle string
	// noCleanup: the person never chose a cleanup preference (and no
	// ledger exists before the test's first command). Otherwise the
	// world's person chose submitted_and_probe_blockers, with browserop
	// config cleanup, so that tabs are closed with proof.
	noCleanup bool
}

// world is one test's isolated browserop installation.
type world struct {
	t       *testing.T
	o       opts
	bin     string
	exe     string // the Chromium executable, "" without browser
	dir     string
	env     []string
	cfgPath string
	profile string
	calDir  string
	site    *demosite.Server
	base    string
	// chrome is the browser the test keeps open in attach mode.
	chrome *browser.Browser

	gate *postGate

	mu    sync.Mutex
	procs []*proc
}

// newWorld builds a world: directories, the demosite (oracle on) behind a
// gate the test can hold mutation POSTs at, the demo adapter pointed at it,
// a config file at the default location, and, when o.browser, a profile
// signed in as alice.
func newWorld(t *testing.T, o opts) *world {
	t.Helper()
	w := &world{t: t, o: o, bin: binary(t)}
	if o.browser || o.attach {
		w.exe = browsertest.Executable(t)
	}
	w.dir = t.TempDir()
	w.profile = filepath.Join(w.dir, "profile")
	w.calDir = filepath.Join(w.dir, "calendar")
	require.NoError(t, os.MkdirAll(w.calDir, 0o700))
	w.env = child.Env(map[string]string{
		"HOME":            w.dir,
		"XDG_STATE_HOME":  filepath.Join(w.dir, "state"),
		"XDG_CONFIG_HOME": filepath.Join(w.dir, "config"),
	})
	t.Cleanup(w.cleanup)

	// The demosite, served through a gate that can hold mutation POSTs.
	w.site = demosite.New(demosite.Options{Oracle: true})
	w.gate = &postGate{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	hs := &http.Server{Handler: w.gate.wrap(w.site), ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	w.base = "http://" + ln.Addr().String()
	t.Cleanup(func() {
		w.gate.releaseAll()
		w.site.Close() // releases requests held by faults
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if hs.Shutdown(ctx) != nil {
			hs.Close()
		}
	})

	// The demo adapter, still named demo, at this demosite.
	settle := o.settle
	if settle == "" {
		settle = "2s"
	}
	demo, err := fs.ReadFile(bundled.Sites, "sites/demo.yaml")
	require.NoError(t, err)
	y := string(demo)
	require.Equal(t, 1, strings.Count(y, "http://127.0.0.1:8787"), "the bundled adapter's origin")
	y = strings.Replace(y, "http://127.0.0.1:8787", w.base, 1)
	require.Equal(t, 1, strings.Count(y, "settle: 15s"), "the bundled adapter's settle")
	y = strings.Replace(y, "settle: 15s", "settle: "+settle, 1)
	sitesDir := filepath.Join(w.dir, "sites")
	require.NoError(t, os.MkdirAll(sitesDir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(sitesDir, "demo.yaml"), []byte(y), 0o600))

	if (o.browser || o.attach) && !o.noSignIn {
		w.signIn()
	}
	w.writeConfig()
	if !o.noCleanup {
		code, out, errs := w.run(nil, "config", "cleanup", "submitted_and_probe_blockers")
		require.Equal(t, 0, code, "the person chooses the cleanup preference: %s%s", out, errs)
	}
	return w
}

func (w *world) writeConfig() {
	w.t.Helper()
	o := w.o
	var b strings.Builder
	b.WriteString("browser:\n")
	fmt.Fprintf(&b, "  exec_path: %q\n", w.exe)
	fmt.Fprintf(&b, "  profile_dir: %q\n", w.profile)
	b.WriteString("  headless: true\n")
	fmt.Fprintf(&b, "  no_sandbox: %t\n", os.Geteuid() == 0)
	b.WriteString("  action_timeout: \"15s\"\n")
	if o.attach {
		fmt.Fprintf(&b, "  devtools_active_port_file: %q\n", filepath.Join(w.profile, browser.ActivePortFileName))
	}
	fmt.Fprintf(&b, "sites:\n  dir: %q\n", filepath.Join(w.dir, "sites"))
	if o.leaseTTL != "" || o.heartbeat != "" {
		b.WriteString("operator:\n")
		if o.leaseTTL != "" {
			fmt.Fprintf(&b, "  lease_ttl: %q\n", o.leaseTTL)
		}
		if o.heartbeat != "" {
			fmt.Fprintf(&b, "  heartbeat: %q\n", o.heartbeat)
		}
	}
	if o.schedule != "" {
		fmt.Fprintf(&b, "schedule: %q\n", o.schedule)
	}
	fmt.Fprintf(&b, "calendar:\n  dir: %q\n  publish_late: %t\n", w.calDir, o.publishLate)
	b.WriteString("log:\n  format: json\n  level: info\n")
	b.WriteString("api:\n  addr: \"127.0.0.1:0\"\n")
	w.cfgPath = filepath.Join(w.dir, "config", "browserop", "config.yaml")
	require.NoError(w.t, os.MkdirAll(filepath.Dir(w.cfgPath), 0o700))
	require.NoError(w.t, os.WriteFile(w.cfgPath, []byte(b.String()), 0o600))
}

// signIn signs the profile in to the demosite as alice through the login
// form. In launch mode the browser is closed again (browserop then launches
// the profile itself); in attach mode it stays open for browserop to attach.
func (w *world) signIn() {
	w.t.Helper()
	cfg := browsertest.Config(w.profile)
	cfg.ExecPath = w.exe
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b, err := browser.Launch(ctx, cfg)
	require.NoError(w.t, err, "launch the browser to sign in")
	if err := demoLogin(ctx, b, w.base, "alice"); err != nil {
		b.Close()
		w.t.Fatalf("sign in as alice: %v", err)
	}
	if w.o.attach {
		w.chrome = b
		return
	}
	// demosite's session cookie persists: the sign-in survives the restart.
	require.NoError(w.t, b.Close(), "close the browser after signing in")
}

// cleanup kills whatever the test's processes left behind, first the
// browserop processes (by pid), then any browser still running on the
// world's profile (by pid, found by its --user-data-dir).
func (w *world) cleanup() {
	w.mu.Lock()
	procs := w.procs
	w.mu.Unlock()
	for _, p := range procs {
		select {
		case <-p.Done():
		default:
			p.Cmd.Process.Signal(syscall.SIGCONT)
			p.Cmd.Process.Kill()
			<-p.Done()
			w.t.Logf("e2e: killed %s at the end of the test\nstdout:\n%s\nstderr:\n%s", p.Name, p.Stdout, p.Stderr)
		}
	}
	if w.chrome != nil {
		w.chrome.Close()
	}
	if w.profile != "" {
		killBrowsersOn(w.profile)
		if err := browsertest.RemoveAll(w.profile); err != nil {
			w.t.Logf("e2e: %v", err)
		}
	}
}

// browsersOn returns the pids of the processes on the profile.
func browsersOn(dir string) []int { return browser.ProcessesOn(dir) }

// browserGone reports whether no browser runs on the world's profile any
// more: no helper process, and the pid in its SingletonLock has exited.
func (w *world) browserGone() bool {
	if len(browsersOn(w.profile)) > 0 {
		return false
	}
	target, err := os.Readlink(filepath.Join(w.profile, "SingletonLock"))
	if err != nil {
		return true
	}
	pid := target[strings.LastIndexByte(target, '-')+1:]
	_, err = os.Stat("/proc/" + pid)
	return err != nil
}

func killBrowsersOn(dir string) { browser.KillProcessesOn(dir) }

// start starts browserop with args and extra environment variables.
func (w *world) start(extraEnv []string, args ...string) *proc {
	w.t.Helper()
	cmd := exec.Command(w.bin, args...)
	cmd.Env = append(append([]string{}, w.env...), extraEnv...)
	cmd.Dir = w.dir
	name := "browserop " + strings.Join(args, " ")
	if len(extraEnv) > 0 {
		name += " [" + strings.Join(extraEnv, " ") + "]"
	}
	cp, err := child.Start(cmd, name)
	require.NoError(w.t, err, "start %s", name)
	p := &proc{t: w.t, Proc: cp}
	w.mu.Lock()
	w.procs = append(w.procs, p)
	w.mu.Unlock()
	return p
}

// run runs a short browserop command to its end (at most 90s) and returns
// its exit code and output.
func (w *world) run(extraEnv []string, args ...string) (code int, stdout, stderr string) {
	w.t.Helper()
	p := w.start(extraEnv, args...)
	code = p.code(90 * time.Second)
	return code, p.Stdout.String(), p.Stderr.String()
}

// summary is the JSON summary `browserop run --json` prints.
type summary struct {
	RunID      string         `json:"run_id"`
	Generation int64          `json:"generation"`
	Outcome    string         `json:"outcome"`
	HardStop   string         `json:"hard_stop"`
	Counts     map[string]int `json:"counts"`
	Actions    []struct {
		ActionID string `json:"action_id"`
		Entry    string `json:"entry"`
		Type     string `json:"type"`
		Status   string `json:"status"`
		Result   string `json:"result"`
		Reason   string `json:"reason"`
		Note     string `json:"note"`
	} `json:"actions"`
	NeedsPerson []string `json:"needs_person"`
	Problems    []string `json:"problems"`
}

func parseSummary(t *testing.T, p string) summary {
	t.Helper()
	var s summary
	require.NoError(t, json.Unmarshal([]byte(p), &s), "run --json output:\n%s", p)
	return s
}

// pass runs `browserop run --json` and returns its exit code and summary.
func (w *world) pass(extraEnv ...string) (int, summary, string) {
	w.t.Helper()
	code, out, errs := w.run(extraEnv, "run", "--json")
	if strings.TrimSpace(out) == "" {
		w.t.Fatalf("run printed no summary (exit %d)\nstderr:\n%s", code, errs)
	}
	return code, parseSummary(w.t, out), errs
}

// ledgerAction is an action as `actions list/show --json` print it.
type ledgerAction struct {
	ID              string `json:"id"`
	Type            string `json:"type"`
	Status          string `json:"status"`
	Attempt         int    `json:"attempt"`
	CanonicalResult string `json:"canonical_result"`
	FailureReason   string `json:"failure_reason"`
	FailureClass    string `json:"failure_class"`
	Generation      int64  `json:"generation"`
	Payload         struct {
		Text string `json:"text"`
	} `json:"payload"`
	History []struct {
		From       string `json:"from"`
		To         string `json:"to"`
		Generation int64  `json:"generation"`
		By         string `json:"by"`
		Reason     string `json:"reason"`
	} `json:"history"`
}

func (w *world) actions() []ledgerAction {
	w.t.Helper()
	code, out, errs := w.run(nil, "actions", "list", "--json")
	require.Equal(w.t, 0, code, errs)
	var as []ledgerAction
	require.NoError(w.t, json.Unmarshal([]byte(out), &as), out)
	return as
}

func (w *world) show(id string) ledgerAction {
	w.t.Helper()
	code, out, errs := w.run(nil, "actions", "show", id, "--json")
	require.Equal(w.t, 0, code, errs)
	var a ledgerAction
	require.NoError(w.t, json.Unmarshal([]byte(out), &a), out)
	return a
}

// statusReport is `status --json`.
type statusReport struct {
	Lease *struct {
		Holder     string    `json:"holder"`
		Generation int64     `json:"generation"`
		Held       bool      `json:"held"`
		ExpiresAt  time.Time `json:"expires_at"`
	} `json:"lease"`
	Counts    map[string]int `json:"counts"`
	Ambiguous []struct {
		ID string `json:"id"`
	} `json:"ambiguous"`
}

func (w *world) status() (int, statusReport) {
	w.t.Helper()
	code, out, errs := w.run(nil, "status", "--json")
	var s statusReport
	require.NoError(w.t, json.Unmarshal([]byte(out), &s), "status --json (exit %d): %s %s", code, out, errs)
	return code, s
}

// tryStatus is status, but reports false while there is no ledger yet
// (inspection commands never create one).
func (w *world) tryStatus() (statusReport, bool) {
	w.t.Helper()
	code, out, errs := w.run(nil, "status", "--json")
	if code == 2 && strings.Contains(errs, "no ledger at") {
		return statusReport{}, false
	}
	var s statusReport
	require.NoError(w.t, json.Unmarshal([]byte(out), &s), "status --json (exit %d): %s %s", code, out, errs)
	return s, true
}

func (w *world) lease() (held bool, generation int64) {
	w.t.Helper()
	code, out, errs := w.run(nil, "lease", "--json")
	require.Equal(w.t, 0, code, errs)
	var l struct {
		Lease *struct {
			Held       bool  `json:"held"`
			Generation int64 `json:"generation"`
		} `json:"lease"`
	}
	require.NoError(w.t, json.Unmarshal([]byte(out), &l), out)
	if l.Lease == nil {
		return false, 0
	}
	return l.Lease.Held, l.Lease.Generation
}

// entry is one calendar entry the tests write.
type entry struct {
	ID, Type, Text, Target string
	At                     time.Time
	Parts                  []string
	// Image, when set, names a PNG the entry attaches (with alt text
	// "alt of NAME"), written to the calendar directory, the media
	// directory by default.
	Image string
}

// writeCalendar replaces the calendar with entries (file cal.yaml).
func (w *world) writeCalendar(es ...entry) {
	w.t.Helper()
	var b strings.Builder
	b.WriteString("entries:\n")
	for _, e := range es {
		fmt.Fprintf(&b, "  - id: %s\n    site: demo\n    actor: alice\n    type: %s\n    at: %s\n",
			e.ID, e.Type, e.At.UTC().Format(time.RFC3339))
		if e.Text != "" {
			fmt.Fprintf(&b, "    text: %q\n", e.Text)
		}
		if e.Target != "" {
			fmt.Fprintf(&b, "    target: %q\n", e.Target)
		}
		if len(e.Parts) > 0 {
			b.WriteString("    parts:\n")
			for _, p := range e.Parts {
				fmt.Fprintf(&b, "      - %q\n", p)
			}
		}
		if e.Image != "" {
			img := image.NewRGBA(image.Rect(0, 0, 5, 5))
			img.Set(2, 2, color.RGBA{B: 255, A: 255})
			var data bytes.Buffer
			require.NoError(w.t, png.Encode(&data, img))
			require.NoError(w.t, os.WriteFile(filepath.Join(w.calDir, e.Image), data.Bytes(), 0o600))
			fmt.Fprintf(&b, "    media:\n      - file: %q\n        alt: %q\n", e.Image, "alt of "+e.Image)
		}
	}
	require.NoError(w.t, os.WriteFile(filepath.Join(w.calDir, "cal.yaml"), []byte(b.String()), 0o600))
}

// effects returns the demosite's committed effects (the oracle).
func (w *world) effects() []demosite.Effect { return w.site.Effects() }

// postsWithText counts the committed posts and replies with exactly text.
func (w *world) postsWithText(text string) []demosite.Effect {
	var out []demosite.Effect
	for _, e := range w.site.Effects() {
		if (e.Kind == "post" || e.Kind == "reply") && e.Text == text {
			out = append(out, e)
		}
	}
	return out
}

func (w *world) permalink(e demosite.Effect) string {
	return fmt.Sprintf("%s/p/%d", w.base, e.PostID)
}

// eventually polls cond every 100ms until it holds or d passes.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("e2e: %s: not within %s", what, d)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// postGate sits in front of the demosite. When armed it holds each
// mutation POST before the site sees it, reports it on arrived, and lets it
// through when the test releases it.
type postGate struct {
	mu      sync.Mutex
	armed   bool
	arrived chan string
	release chan struct{}
}

// arm makes the gate hold mutation POSTs from now on.
func (g *postGate) arm() (arrived <-chan string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.armed = true
	g.arrived = make(chan string, 16)
	g.release = make(chan struct{})
	return g.arrived
}

// releaseAll lets every held and later POST through.
func (g *postGate) releaseAll() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.armed {
		g.armed = false
		close(g.release)
	}
}

func (g *postGate) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && !strings.HasPrefix(r.URL.Path, "/_oracle/") && r.URL.Path != "/login" {
			g.mu.Lock()
			armed, arrived, release := g.armed, g.arrived, g.release
			g.mu.Unlock()
			if armed {
				select {
				case arrived <- r.URL.Path:
				default:
				}
				select {
				case <-release:
				case <-r.Context().Done():
					return // the client went away: nothing reaches the site
				}
			}
		}
		h.ServeHTTP(rw, r)
	})
}
