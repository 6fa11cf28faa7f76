package main

// Process-level end-to-end tests: real browserop processes (built once by
// binary()), a demosite in the test process whose oracle (Effects) is the
// truth about what was published, and headless Chromium. Every assertion on
// effects comes from the oracle; the ledger, read through `browserop
// actions`/`status`/`lease --json`, must say the same. They need Chromium
// (skipped without one, failed under CI=1) and run sequentially.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/browser/browsertest"
	"github.com/browserop/browserop/demosite"
	"github.com/browserop/browserop/operator"
	"github.com/stretchr/testify/require"
)

// TestE2ECrashRecovery: a `browserop run` that SIGKILLs itself at a crash
// point (BROWSEROP_CRASH_AT) leaves its action where the crash caught it; the
// next run, once the dead run's lease expired, reconciles it against the live
// site (never redoing it blindly), and the post exists exactly once.
func TestE2ECrashRecovery(t *testing.T) {
	found := []string{"planned@1", "executing@1", "ambiguous@2", "verified@2"}
	absent := []string{"planned@1", "executing@1", "ambiguous@2", "failed@2", "planned@2", "executing@2", "verified@2"}
	for _, tc := range []struct {
		point string
		// image: the entry attaches an image (the only way to reach
		// after-upload).
		image bool
		// effects the crashed run may have committed when it died: at
		// after-click-sent the click may or may not have reached the page
		// (and Chrome, which outlives the run, may commit it later).
		effects []int
		// status the crash leaves the action in.
		crashed string
		// history (to@generation) after the second run, by effects
		// committed before it.
		history map[int][]string
	}{
		{"after-reserve", false, []int{0}, "planned", map[int][]string{0: {"planned@1", "executing@2", "verified@2"}}},
		// Uploaded, not clicked: the next run prepares it again (the
		// site keeps a second upload, publishes one post).
		{"after-upload", true, []int{0}, "planned", map[int][]string{0: {"planned@1", "executing@2", "verified@2"}}},
		{"after-executing", false, []int{0}, "executing", map[int][]string{0: absent}},
		{"after-click-sent", false, []int{0, 1}, "executing", map[int][]string{0: absent, 1: found}},
		{"after-click-returned", false, []int{1}, "executing", map[int][]string{1: found}},
		{"after-verification", false, []int{1}, "executing", map[int][]string{1: found}},
		{"after-verified", false, []int{1}, "verified", map[int][]string{1: {"planned@1", "executing@1", "verified@1"}}},
	} {
		t.Run(tc.point, func(t *testing.T) {
			w := newWorld(t, opts{browser: true, leaseTTL: "2s", heartbeat: "500ms"})
			text := "crash recovery at " + tc.point
			e := entry{ID: "crash", Type: "post", Text: text, At: time.Now().Add(-time.Second)}
			if tc.image {
				e.Image = "crash.png"
			}
			w.writeCalendar(e)

			// 1. The crash.
			p := w.start([]string{"BROWSEROP_CRASH_AT=" + tc.point}, "run", "--json")
			_, sig := p.exit(90 * time.Second)
			require.Equal(t, syscall.SIGKILL, sig, "the run must die by its own SIGKILL: %s", p)
			require.Contains(t, p.Stderr.String(), "crash point "+tc.point)
			committed := len(w.postsWithText(text))
			require.Contains(t, tc.effects, committed, "effects after the crash: %+v", w.effects())
			require.Len(t, w.effects(), committed, "nothing else was committed")

			as := w.actions()
			require.Len(t, as, 1)
			id := as[0].ID
			require.Equal(t, tc.crashed, as[0].Status)
			require.Equal(t, int64(1), as[0].Generation)
			code, st := w.status()
			require.Equal(t, 0, code)
			require.Equal(t, 1, st.Counts[tc.crashed])
			require.True(t, st.Lease.Held, "the dead run still holds its lease until it expires")

			// 2. The next run, once the dead run's lease expired,
			// reconciles. The Chrome the dead run launched outlived it
			// (a launched Chrome is persistent): the run attaches to it,
			// and stops it at its end, as it holds only browserop's tabs.
			eventually(t, 15*time.Second, "the crashed run's lease expires", func() bool { h, _ := w.lease(); return !h })
			if tc.crashed != "planned" { // the run had launched Chrome
				require.False(t, w.browserGone(), "the crashed run's Chrome outlives it")
			}
			// A click that left browserop before the crash may commit
			// after it: Chrome lives on and finishes the submission.
			committed = len(w.postsWithText(text))
			code, sum, errs := w.pass()
			require.Equal(t, 0, code, "second run: %+v\n%s", sum, errs)
			require.Equal(t, "ok", sum.Outcome)
			require.Equal(t, int64(2), sum.Generation)
			if tc.crashed == "executing" {
				require.Equal(t, 1, sum.Counts["reconciled"], "%+v", sum)
			}
			posts := w.postsWithText(text)
			require.Len(t, posts, 1, "exactly one post after recovery: %+v", w.effects())
			require.Len(t, w.effects(), 1)

			a := w.show(id)
			require.Equal(t, "verified", a.Status)
			require.Equal(t, w.permalink(posts[0]), a.CanonicalResult, "the ledger's permalink is the oracle's post")
			if tc.image {
				require.Len(t, posts[0].Media, 1, "the post carries its image")
				require.Equal(t, "alt of crash.png", posts[0].Media[0].Alt)
			}
			var path []string
			for _, h := range a.History {
				path = append(path, h.To+"@"+strconv.FormatInt(h.Generation, 10))
			}
			require.Equal(t, tc.history[committed], path)
			eventually(t, 15*time.Second, "the run stopped the Chrome it attached to", w.browserGone)
			if len(path) == len(absent) {
				// Definitively absent (complete view, settle passed): failed
				// definitive, then replanned and published once, in that pass.
				require.Contains(t, a.History[3].Reason, "absent")
				require.Equal(t, 2, a.Attempt)
			}

			// 3. A third run has nothing left to do.
			code, sum, errs = w.pass()
			require.Equal(t, 0, code, "third run: %+v\n%s", sum, errs)
			require.Empty(t, sum.Actions, "the settled entry is not revisited: %+v", sum)
			require.Len(t, w.effects(), 1, "no duplicate: %+v", w.effects())
			code, st = w.status()
			require.Equal(t, 0, code)
			require.Equal(t, 1, st.Counts["verified"])
			require.Equal(t, 0, st.Counts["executing"]+st.Counts["ambiguous"])
		})
	}
}

// TestE2EExitCodes: the exit code table on real runs: 3 for a hard stop
// (CAPTCHA before any click), 5 while an ambiguous action cannot be
// reconciled (a crash after the click, then a CAPTCHA over the search), 0
// once it is; status says 5 too while the action waits.
func TestE2EExitCodes(t *testing.T) {
	w := newWorld(t, opts{browser: true, leaseTTL: "2s", heartbeat: "500ms"})
	text := "exit codes"
	w.writeCalendar(entry{ID: "codes", Type: "post", Text: text, At: time.Now().Add(-time.Second)})

	require.NoError(t, w.site.SetFaults(demosite.Faults{Captcha: true}))
	code, sum, errs := w.pass()
	require.Equal(t, 3, code, "%+v\n%s", sum, errs)
	require.Equal(t, "hard_stop", sum.Outcome)
	require.Equal(t, "captcha", sum.HardStop)
	require.Empty(t, w.effects())
	as := w.actions()
	require.Len(t, as, 1)
	require.Equal(t, "planned", as[0].Status, "nothing was performed")

	require.NoError(t, w.site.SetFaults(demosite.Faults{}))
	p := w.start([]string{"BROWSEROP_CRASH_AT=after-click-returned"}, "run", "--json")
	_, sig := p.exit(90 * time.Second)
	require.Equal(t, syscall.SIGKILL, sig, "%s", p)
	require.Len(t, w.postsWithText(text), 1)
	eventually(t, 15*time.Second, "the crashed run's lease expires", func() bool { h, _ := w.lease(); return !h })
	require.False(t, w.browserGone(), "the crashed run's Chrome outlives it; the next run attaches to it")

	require.NoError(t, w.site.SetFaults(demosite.Faults{Captcha: true}))
	code, sum, errs = w.pass()
	require.Equal(t, 5, code, "%+v\n%s", sum, errs)
	require.Equal(t, "needs_person", sum.Outcome)
	require.Equal(t, []string{as[0].ID}, sum.NeedsPerson)
	code, st := w.status()
	require.Equal(t, 5, code)
	require.Len(t, st.Ambiguous, 1)
	require.Equal(t, as[0].ID, st.Ambiguous[0].ID)

	require.NoError(t, w.site.SetFaults(demosite.Faults{}))
	code, sum, errs = w.pass()
	require.Equal(t, 0, code, "%+v\n%s", sum, errs)
	posts := w.postsWithText(text)
	require.Len(t, posts, 1)
	require.Len(t, w.effects(), 1)
	a := w.show(as[0].ID)
	require.Equal(t, "verified", a.Status)
	require.Equal(t, w.permalink(posts[0]), a.CanonicalResult)
	code, _ = w.status()
	require.Equal(t, 0, code)
}

// TestE2ERunInterrupted: SIGINT to `browserop run` while its post is in
// flight. Whatever the interrupted run recorded, the next run settles it
// from the site and nothing is published twice. (The interrupted run's own
// exit code is only logged: see the report on `run` and signals.)
func TestE2ERunInterrupted(t *testing.T) {
	w := newWorld(t, opts{browser: true, leaseTTL: "2s", heartbeat: "500ms"})
	at := time.Now().Add(-2 * time.Second)
	w.writeCalendar(
		entry{ID: "a", Type: "post", Text: "interrupted: a", At: at},
		entry{ID: "b", Type: "post", Text: "interrupted: b", At: at.Add(time.Second)},
	)
	arrived := w.gate.arm()
	p := w.start(nil, "run", "--json")
	select {
	case <-arrived:
	case <-p.Done():
		t.Fatalf("run ended before posting: %s", p)
	case <-time.After(60 * time.Second):
		t.Fatalf("run never posted: %s", p)
	}
	p.signal(syscall.SIGINT)
	code := p.code(60 * time.Second)
	t.Logf("the interrupted run exited %d:\n%s", code, p)
	require.NotEqual(t, 0, code, "an interrupted run is not ok")
	w.gate.releaseAll() // the site commits the post the run gave up on
	eventually(t, 10*time.Second, "the held post commits", func() bool { return len(w.effects()) == 1 })
	for _, a := range w.actions() {
		require.Contains(t, []string{"ambiguous", "executing", "verified"}, a.Status, "%+v", a)
	}

	eventually(t, 15*time.Second, "the lease is free", func() bool { h, _ := w.lease(); return !h })
	eventually(t, 15*time.Second, "the run's browser is gone", w.browserGone)
	code, sum, errs := w.pass()
	require.Equal(t, 0, code, "%+v\n%s", sum, errs)
	require.Len(t, w.effects(), 2, "%+v", w.effects())
	for _, text := range []string{"interrupted: a", "interrupted: b"} {
		posts := w.postsWithText(text)
		require.Len(t, posts, 1, text)
		for _, a := range w.actions() {
			if a.Payload.Text == text {
				require.Equal(t, "verified", a.Status)
				require.Equal(t, w.permalink(posts[0]), a.CanonicalResult)
			}
		}
	}
}

// TestE2ETwoOperators: two `browserop run` processes started together on a
// fresh ledger: one acts, the other exits 4 (locked_skip), and each post is
// on the site exactly once.
func TestE2ETwoOperators(t *testing.T) {
	w := newWorld(t, opts{browser: true})
	require.NoError(t, w.site.SetFaults(demosite.Faults{Slow: 300 * time.Millisecond}))
	at := time.Now().Add(-time.Second)
	texts := []string{"two operators: one", "two operators: two", "two operators: three"}
	w.writeCalendar(
		entry{ID: "one", Type: "post", Text: texts[0], At: at},
		entry{ID: "two", Type: "post", Text: texts[1], At: at.Add(time.Millisecond)},
		entry{ID: "three", Type: "post", Text: texts[2], At: at.Add(2 * time.Millisecond)},
	)
	a := w.start(nil, "run", "--json")
	b := w.start(nil, "run", "--json")
	ca, cb := a.code(120*time.Second), b.code(120*time.Second)
	winner, loser := a, b
	if ca == 4 {
		winner, loser = b, a
	}
	require.ElementsMatch(t, []int{0, 4}, []int{ca, cb}, "one acts (0), the other is locked out (4)\n%s\n%s", a, b)
	require.Equal(t, "locked_skip", parseSummary(t, loser.Stdout.String()).Outcome)
	sum := parseSummary(t, winner.Stdout.String())
	require.Equal(t, "ok", sum.Outcome)
	require.Equal(t, 3, sum.Counts["verified"], "%+v", sum)

	require.Len(t, w.effects(), 3, "%+v", w.effects())
	links := map[string]string{}
	for _, text := range texts {
		posts := w.postsWithText(text)
		require.Len(t, posts, 1, "%q exactly once", text)
		links[text] = w.permalink(posts[0])
	}
	as := w.actions()
	require.Len(t, as, 3)
	for _, act := range as {
		require.Equal(t, "verified", act.Status)
		require.Equal(t, links[act.Payload.Text], act.CanonicalResult)
	}
	code, st := w.status()
	require.Equal(t, 0, code)
	require.Equal(t, 3, st.Counts["verified"])
	require.False(t, st.Lease.Held)
	// The winner took the lease once: its pass stopped the Chrome it
	// launched at its end, while holding it, so its exit had nothing left
	// to decide. The loser never took it.
	require.Equal(t, int64(1), st.Lease.Generation, "the loser never acquired the lease")
}

// TestE2EStaleOperator: an operator frozen (SIGSTOP) with its post in
// flight loses its lease; a second operator takes over with a new generation
// and reconciles the post; the first, resumed (SIGCONT), records nothing
// under its old generation. The post reaches the site while the first
// operator is frozen: the test's gate holds the POST until the process is
// stopped, so the order is fixed, not timed.
func TestE2EStaleOperator(t *testing.T) {
	// Attach mode: both operators drive the one Chrome the test keeps
	// running, as with a person's browser. (Launching would not do: the
	// frozen operator's Chrome keeps the profile locked.)
	w := newWorld(t, opts{attach: true, leaseTTL: "2s", heartbeat: "500ms"})
	text := "stale operator: published once"
	w.writeCalendar(entry{ID: "stale", Type: "post", Text: text, At: time.Now().Add(-time.Second)})
	arrived := w.gate.arm()
	first := w.start(nil, "run", "--json")
	select {
	case path := <-arrived:
		require.Equal(t, "/posts", path)
	case <-first.Done():
		t.Fatalf("the first operator ended before posting: %s", first)
	case <-time.After(60 * time.Second):
		t.Fatalf("the first operator never posted: %s", first)
	}
	first.signal(syscall.SIGSTOP)
	as := w.actions()
	require.Len(t, as, 1)
	id := as[0].ID
	require.Equal(t, "executing", as[0].Status)

	w.gate.releaseAll() // the post commits while its operator is frozen
	eventually(t, 15*time.Second, "the post commits", func() bool { return len(w.effects()) == 1 })
	eventually(t, 15*time.Second, "the frozen operator's lease expires", func() bool { h, _ := w.lease(); return !h })

	code, sum, errs := w.pass()
	require.Equal(t, 0, code, "%+v\n%s", sum, errs)
	require.Equal(t, int64(2), sum.Generation, "the second operator takes over with a new generation")
	require.Equal(t, 1, sum.Counts["reconciled"])
	link := w.permalink(w.postsWithText(text)[0])
	a := w.show(id)
	require.Equal(t, "verified", a.Status)
	require.Equal(t, link, a.CanonicalResult)
	before := len(a.History)

	first.signal(syscall.SIGCONT)
	fcode := first.code(60 * time.Second)
	require.Equal(t, 4, fcode, "a stale generation ends the run with exit 4: %s", first)
	require.Contains(t, first.Stderr.String(), "stale lease generation")

	a = w.show(id)
	require.Equal(t, "verified", a.Status, "the stale operator changed nothing")
	require.Equal(t, link, a.CanonicalResult)
	require.Len(t, a.History, before, "no event after the takeover: %+v", a.History)
	seen2 := false
	for _, h := range a.History {
		if h.Generation == 2 {
			seen2 = true
		}
		require.False(t, seen2 && h.Generation == 1, "an event of generation 1 after generation 2: %+v", a.History)
	}
	require.Len(t, w.effects(), 1, "no duplicate: %+v", w.effects())
	held, gen := w.lease()
	require.False(t, held)
	require.Equal(t, int64(2), gen)
	code, st := w.status()
	require.Equal(t, 0, code)
	require.Equal(t, 1, st.Counts["verified"])
	require.Equal(t, 0, st.Counts["executing"]+st.Counts["ambiguous"])
}

// TestE2EPausedBeforeClick: an operator frozen (SIGSTOP, at the pause
// point after-executing) between recording the action executing and the
// click loses its lease; a second operator takes over, reconciles the
// action (absent: nothing was clicked) and publishes it; the first, resumed
// (SIGCONT), must not click: it reads the lease again right before the
// click, finds it gone, and exits 4. A click by the first would reach the
// site's Submit, and the crash point after-click-returned armed in it
// would kill it there: the test does not depend on whether that late click
// could still land.
func TestE2EPausedBeforeClick(t *testing.T) {
	// Launch mode: the first operator's Chrome runs on while it is frozen,
	// and the second attaches to it. Attach mode: the person's Chrome.
	for _, tc := range []struct {
		name   string
		attach bool
	}{{"launch", false}, {"attach", true}} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, opts{browser: !tc.attach, attach: tc.attach, leaseTTL: "2s", heartbeat: "500ms"})
			text := "paused before the click: published once"
			w.writeCalendar(entry{ID: "paused", Type: "post", Text: text, At: time.Now().Add(-time.Second)})

			first := w.start([]string{operator.PauseEnv + "=after-executing", operator.CrashEnv + "=after-click-returned"}, "run", "--json")
			eventually(t, 60*time.Second, "the first operator stops at after-executing", func() bool {
				select {
				case <-first.Done():
					t.Fatalf("the first operator ended before its pause point: %s", first)
				default:
				}
				return processState(first.Cmd.Process.Pid) == 'T'
			})
			require.Contains(t, first.Stderr.String(), "pause point after-executing")
			as := w.actions()
			require.Len(t, as, 1)
			id := as[0].ID
			require.Equal(t, "executing", as[0].Status)
			require.Equal(t, int64(1), as[0].Generation)
			require.Empty(t, w.effects(), "nothing was clicked before the pause")

			// The frozen operator's heartbeat is frozen with it: its lease runs out.
			eventually(t, 15*time.Second, "the frozen operator's lease expires", func() bool { h, _ := w.lease(); return !h })
			code, sum, errs := w.pass()
			require.Equal(t, 0, code, "the second operator: %+v\n%s", sum, errs)
			require.Equal(t, int64(2), sum.Generation, "the second operator takes over with a new generation")
			require.Equal(t, 1, sum.Counts["reconciled"], "%+v", sum)
			posts := w.postsWithText(text)
			require.Len(t, posts, 1, "the second operator published it: %+v", w.effects())
			a := w.show(id)
			require.Equal(t, "verified", a.Status)
			require.Equal(t, w.permalink(posts[0]), a.CanonicalResult)
			before := len(a.History)

			first.signal(syscall.SIGCONT)
			fcode, sig := first.exit(60 * time.Second)
			require.Zero(t, sig, "the resumed operator went on to the click and died at the crash point armed after it (%v): %s", sig, first)
			require.Equal(t, 4, fcode, "a lease lost before the click ends the run with exit 4: %s", first)
			require.NotContains(t, first.Stderr.String(), "crash point after-click-returned", "the resumed operator clicked")
			fsum := parseSummary(t, first.Stdout.String())
			require.Equal(t, "the lease was lost before the click", fsum.HardStop, "%s", first)
			require.Len(t, fsum.Actions, 1, "%+v", fsum)
			require.Equal(t, id, fsum.Actions[0].ActionID)
			require.Equal(t, "executing", fsum.Actions[0].Status, "as the first operator last recorded it")
			require.Equal(t, "held", fsum.Actions[0].Note)

			require.Len(t, w.effects(), 1, "exactly one effect: %+v", w.effects())
			require.Len(t, w.postsWithText(text), 1)
			a = w.show(id)
			require.Equal(t, "verified", a.Status, "the resumed operator changed nothing")
			require.Equal(t, w.permalink(posts[0]), a.CanonicalResult)
			require.Len(t, a.History, before, "no event after the takeover: %+v", a.History)
			code, st := w.status()
			require.Equal(t, 0, code)
			require.Equal(t, 1, st.Counts["verified"])
			require.Equal(t, 0, st.Counts["executing"]+st.Counts["ambiguous"])
		})
	}
}

// processState returns the state letter of /proc/PID/stat ('T' for a
// stopped process), or 0 when it cannot be read.
func processState(pid int) byte {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// pid (comm) state ...: comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return 0
	}
	return b[i+2]
}

// TestE2EServe: `browserop serve --once-now` runs its first pass at once
// and stops cleanly on SIGTERM, between passes and in the middle of one.
func TestE2EServe(t *testing.T) {
	t.Run("between passes", func(t *testing.T) {
		w := newWorld(t, opts{browser: true, schedule: "@every 1h"})
		text := "served once"
		w.writeCalendar(entry{ID: "served", Type: "post", Text: text, At: time.Now().Add(-time.Second)})
		p := w.start(nil, "serve", "--once-now")
		eventually(t, 60*time.Second, "the first pass ends", func() bool {
			select {
			case <-p.Done():
				t.Fatalf("serve ended: %s", p)
			default:
			}
			st, ok := w.tryStatus()
			return ok && st.Counts["verified"] == 1 && st.Lease != nil && !st.Lease.Held
		})
		// The loopback API runs beside the schedule, behind its token.
		m := regexp.MustCompile(`api (http://127\.0\.0\.1:\d+) `).FindStringSubmatch(p.Stdout.String())
		require.NotNil(t, m, "serve prints its API address: %s", p)
		code, tok, errs := w.run(nil, "token")
		require.Equal(t, 0, code, errs)
		req, _ := http.NewRequest("GET", m[1]+"/v1/status", nil)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(tok))
		resp, err = http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
		require.Contains(t, string(body), `"verified":1`)
		fi, err := os.Stat(filepath.Join(w.dir, "state", "browserop", "token"))
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "the token file is 0600")

		p.signal(syscall.SIGTERM)
		require.Equal(t, 0, p.code(30*time.Second), "%s", p)
		require.Contains(t, p.Stderr.String(), `"msg":"stopped"`)
		held, _ := w.lease()
		require.False(t, held, "the lease is released")
		code, st := w.status()
		require.Equal(t, 0, code)
		require.Zero(t, st.Counts["executing"])
		require.Len(t, w.postsWithText(text), 1)
		require.Len(t, w.effects(), 1)
		eventually(t, 10*time.Second, "serve's browser is gone", func() bool { return len(browsersOn(w.profile)) == 0 })
	})

	t.Run("during a pass", func(t *testing.T) {
		// SIGTERM while the first post is in flight: it is finished and
		// recorded, the second is not started, and serve exits 0.
		w := newWorld(t, opts{browser: true, schedule: "@every 1h"})
		at := time.Now().Add(-2 * time.Second)
		w.writeCalendar(
			entry{ID: "first", Type: "post", Text: "drain: finished", At: at},
			entry{ID: "second", Type: "post", Text: "drain: not started", At: at.Add(time.Second)},
		)
		arrived := w.gate.arm()
		p := w.start(nil, "serve", "--once-now")
		select {
		case <-arrived:
		case <-p.Done():
			t.Fatalf("serve ended: %s", p)
		case <-time.After(60 * time.Second):
			t.Fatalf("serve never posted: %s", p)
		}
		p.signal(syscall.SIGTERM)
		// The signal must reach serve's drain before the post completes;
		// nothing outside the process shows when it has, so hold the post
		// for a generous second (ordering, not speed: a slower machine only
		// makes the drain come earlier relative to the release).
		time.Sleep(time.Second)
		w.gate.releaseAll()
		require.Equal(t, 0, p.code(60*time.Second), "%s", p)
		require.Len(t, w.postsWithText("drain: finished"), 1)
		require.Empty(t, w.postsWithText("drain: not started"))
		require.Len(t, w.effects(), 1)
		as := w.actions()
		require.Len(t, as, 1, "the second entry was never reserved: %+v", as)
		require.Equal(t, "verified", as[0].Status)
		require.Equal(t, w.permalink(w.postsWithText("drain: finished")[0]), as[0].CanonicalResult)
		held, _ := w.lease()
		require.False(t, held)
	})
}

// TestE2ECalendarEditAndMissed: an entry edited after it was published is
// a conflict and is not published again; an entry past its grace is missed
// unless calendar.publish_late.
func TestE2ECalendarEditAndMissed(t *testing.T) {
	w := newWorld(t, opts{browser: true})
	now := time.Now()
	orig := entry{ID: "edit-me", Type: "post", Text: "calendar: the original", At: now.Add(-time.Second)}
	w.writeCalendar(orig)
	code, sum, errs := w.pass()
	require.Equal(t, 0, code, "%+v\n%s", sum, errs)
	require.Len(t, w.postsWithText(orig.Text), 1)

	// Edited after publishing: a conflict, nothing new.
	edited := orig
	edited.Text = "calendar: the edited version"
	w.writeCalendar(edited)
	code, sum, errs = w.pass()
	require.Equal(t, 0, code, "%+v\n%s", sum, errs)
	require.Equal(t, 1, sum.Counts["conflicts"], "%+v", sum)
	require.Len(t, sum.Actions, 1)
	require.Equal(t, "conflict", sum.Actions[0].Status)
	require.Equal(t, "edit-me", sum.Actions[0].Entry)
	require.True(t, containsAny(sum.Problems, "changed after an action of it was performed"), "%v", sum.Problems)
	require.Empty(t, w.postsWithText(edited.Text), "the edited text is never published")
	require.Len(t, w.effects(), 1)
	as := w.actions()
	require.Len(t, as, 1)
	require.Equal(t, orig.Text, as[0].Payload.Text)
	require.Equal(t, "verified", as[0].Status)

	// Due two hours ago, default grace (15m): missed, not published.
	missed := entry{ID: "missed", Type: "post", Text: "calendar: two hours late", At: now.Add(-2 * time.Hour)}
	w.writeCalendar(orig, missed)
	code, sum, errs = w.pass()
	require.Equal(t, 0, code, "%+v\n%s", sum, errs)
	require.Equal(t, 1, sum.Counts["missed"], "%+v", sum)
	require.Zero(t, sum.Counts["already_verified"], "the restored entry is done and not revisited: %+v", sum)
	require.Empty(t, w.postsWithText(missed.Text))
	require.Len(t, w.effects(), 1)
	for _, a := range w.actions() {
		if a.Payload.Text == missed.Text {
			require.Equal(t, "failed", a.Status)
			require.Equal(t, "abandoned", a.FailureClass)
			require.Contains(t, a.FailureReason, "missed")
		}
	}

	// With calendar.publish_late, a late entry is published.
	late := entry{ID: "late", Type: "post", Text: "calendar: published late", At: now.Add(-2 * time.Hour)}
	w.writeCalendar(orig, missed, late)
	code, sum, errs = w.pass("BROWSEROP_CALENDAR_PUBLISH_LATE=true")
	require.Equal(t, 0, code, "%+v\n%s", sum, errs)
	require.Len(t, w.postsWithText(late.Text), 1)
	require.Empty(t, w.postsWithText(missed.Text), "an entry once reported missed stays missed")
	require.Len(t, w.effects(), 2)
	for _, a := range w.actions() {
		if a.Payload.Text == late.Text {
			require.Equal(t, "verified", a.Status)
			require.Equal(t, w.permalink(w.postsWithText(late.Text)[0]), a.CanonicalResult)
		}
	}
}

func containsAny(ss []string, sub string) bool {
	for _, s := range ss {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// TestE2EDemositeCommand: `browserop demosite` serves the site and its
// oracle with the faults given, and ends on SIGTERM.
func TestE2EDemositeCommand(t *testing.T) {
	w := newWorld(t, opts{})
	p := w.start(nil, "demosite", "--addr", "127.0.0.1:0", "--fault", "captcha")
	re := regexp.MustCompile(`demosite listening on (http://127\.0\.0\.1:\d+) `)
	var base string
	eventually(t, 30*time.Second, "demosite prints its URL", func() bool {
		select {
		case <-p.Done():
			t.Fatalf("demosite ended: %s", p)
		default:
		}
		if m := re.FindStringSubmatch(p.Stdout.String()); m != nil {
			base = m[1]
		}
		return base != ""
	})
	get := func(c *http.Client, path string) (int, string) {
		resp, err := c.Get(base + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}
	code, body := get(http.DefaultClient, "/_oracle/effects")
	require.Equal(t, 200, code)
	require.JSONEq(t, "[]", body)
	code, body = get(http.DefaultClient, "/_oracle/faults")
	require.Equal(t, 200, code)
	var faults map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &faults))
	require.Equal(t, true, faults["captcha"])
	code, body = get(http.DefaultClient, "/login")
	require.Equal(t, 200, code, "signed out, the login page is served")
	require.Contains(t, body, `id="login-form"`)

	// Signed in, every page is the CAPTCHA.
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	resp, err := c.PostForm(base+"/login", url.Values{"handle": {"alice"}, "password": {demosite.Password}})
	require.NoError(t, err)
	resp.Body.Close()
	code, body = get(c, "/home")
	require.Equal(t, 403, code)
	require.Contains(t, body, `id="captcha-challenge"`)

	p.signal(syscall.SIGTERM)
	require.Equal(t, 0, p.code(10*time.Second), "%s", p)

	code, _, errs := w.run(nil, "demosite", "--addr", "127.0.0.1:0", "--fault", "nope")
	require.Equal(t, 2, code, errs)
	require.Contains(t, errs, "nope")
}

// TestE2ELogin: `browserop login --headless` waits for a sign-in made by
// another DevTools client (the test), reports who signed in, and exits 0.
func TestE2ELogin(t *testing.T) {
	w := newWorld(t, opts{browser: true, noSignIn: true, leaseTTL: "2s", heartbeat: "500ms"})
	p := w.start(nil, "login", "--site", "demo", "--headless", "--timeout", "60s")
	sock := filepath.Join(w.profile, browser.SocketFileName)
	eventually(t, 30*time.Second, "the login browser's relay takes clients", func() bool {
		select {
		case <-p.Done():
			t.Fatalf("login ended: %s", p)
		default:
		}
		_, err := os.Stat(sock)
		return err == nil
	})
	eventually(t, 30*time.Second, "login waits for a sign-in", func() bool {
		return strings.Contains(p.Stdout.String(), "browserop waits until you are signed in")
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b, err := browser.Attach(ctx, browser.Config{ProfileDir: w.profile})
	require.NoError(t, err)
	// The login process may see the session and close its browser while
	// demoLogin still reads the page: the login's own report is the proof.
	loginErr := demoLogin(ctx, b, w.base, "alice")
	code := p.code(60 * time.Second)
	b.Close()
	require.Equal(t, 0, code, "sign-in error: %v\n%s", loginErr, p)
	require.Contains(t, p.Stdout.String(), "signed in to demo as @alice")

	t.Run("unknown site", func(t *testing.T) {
		code, _, errs := w.run(nil, "login", "--site", "nope", "--headless", "--timeout", "5s")
		require.Equal(t, 2, code, errs)
		require.Contains(t, errs, `--site "nope" is not configured (sites: demo)`)
	})

	t.Run("the session survives the browser", func(t *testing.T) {
		// What `browserop login` is for: a later run acts as the person who
		// signed in, in a browser browserop launches again.
		w.writeCalendar(entry{ID: "after-login", Type: "post", Text: "after login", At: time.Now().Add(-time.Second)})
		code, sum, errs := w.pass()
		require.Equal(t, 0, code, "%+v\n%s", sum, errs)
		posts := w.postsWithText("after login")
		require.Len(t, posts, 1)
		require.Equal(t, "alice", posts[0].Author)
	})

	t.Run("a Chrome a crashed run left", func(t *testing.T) {
		// The crashed run's Chrome lives on with its tab: login uses it
		// rather than failing on a profile in use, closes only its own
		// tabs, and leaves it running; the next run stops it.
		w.writeCalendar(entry{ID: "left", Type: "post", Text: "left running", At: time.Now().Add(-time.Second)})
		p := w.start([]string{"BROWSEROP_CRASH_AT=after-verified"}, "run", "--json")
		_, sig := p.exit(90 * time.Second)
		require.Equal(t, syscall.SIGKILL, sig, "%s", p)
		require.False(t, w.browserGone())
		code, out, errs := w.run(nil, "login", "--site", "demo", "--headless", "--timeout", "30s")
		require.Equal(t, 0, code, "%s\n%s", out, errs)
		require.Contains(t, out, "signed in to demo as @alice")
		require.False(t, w.browserGone(), "login leaves the Chrome it did not launch running")
		eventually(t, 15*time.Second, "the crashed run's lease expires", func() bool { h, _ := w.lease(); return !h })
		code, sum, errs := w.pass()
		require.Equal(t, 0, code, "%+v\n%s", sum, errs)
		require.Equal(t, 1, sum.Counts["tabs_closed_verified"], "the crashed run's tab: %+v", sum.Counts)
		eventually(t, 15*time.Second, "the run stopped the Chrome", w.browserGone)
		require.Len(t, w.postsWithText("left running"), 1)
	})
}

// TestE2EDemo: `browserop demo` runs the main job end to end, its image post
// with alt text included (the demo itself checks what the site stored).
func TestE2EDemo(t *testing.T) {
	exe := browsertest.Executable(t)
	w := newWorld(t, opts{})
	// The whole demo: a browser started, signed in, and a calendar of
	// eight effects published and verified, which takes minutes on a
	// loaded 2-core machine under the race detector (90s was not enough).
	p := w.start(nil, "demo", "--browser", exe)
	code := p.code(5 * time.Minute)
	out, errs := p.Stdout.String(), p.Stderr.String()
	require.Equal(t, 0, code, "%s\n%s", out, errs)
	require.Contains(t, out, "nothing was published twice")
	require.Contains(t, out, "demosite committed 8 effects")
}
