package sites_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/browser/browsertest"
	"github.com/browserop/browserop/demosite"
	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/sites"
)

// One browser and one demosite for the package: the tests reset the site and
// its faults, and sign in through the login form when the session is gone.
var (
	shared *browsertest.Shared
	demo   *demosite.Server
	base   string
)

func TestMain(m *testing.M) {
	shared = browsertest.Start()
	demo = demosite.New(demosite.Options{Oracle: true})
	var err error
	base, err = demo.Start("127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "start demosite:", err)
		os.Exit(1)
	}
	code := m.Run()
	demo.Close()
	if err := wp.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "close the WordPress site:", err)
	}
	if err := mw.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "close the MediaWiki site:", err)
	}
	if err := shared.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "close shared browser:", err)
	}
	os.Exit(code)
}

type env struct {
	t    testing.TB
	ctx  context.Context
	b    *browser.Browser
	tab  *browser.Tab
	site *sites.Declarative
}

// setup resets the demosite, sets faults (after signing in), and opens an
// owned tab signed in as alice.
func setup(t testing.TB, faults demosite.Faults) *env {
	t.Helper()
	demo.Reset()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	d, err := sites.Load(demoPath)
	require.NoError(t, err)
	d, err = d.WithOrigins(base)
	require.NoError(t, err)
	b := shared.Browser(t)
	tab, err := b.NewTab(ctx, "")
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = b.CloseTab(context.Background(), tab) })
	tab.SetActionTimeout(5 * time.Second)
	e := &env{t: t, ctx: ctx, b: b, tab: tab, site: d}
	e.signIn("alice")
	require.NoError(t, demo.SetFaults(faults))
	return e
}

// signIn signs in through the login form unless the tab is signed in as
// handle already.
func (e *env) signIn(handle string) {
	e.t.Helper()
	_, err := e.site.OpenHome(e.ctx, e.tab)
	require.NoError(e.t, err)
	if who, err := e.site.Identity(e.ctx, e.tab); err == nil && who == handle {
		return
	}
	_, err = e.tab.Navigate(e.ctx, base+"/login")
	require.NoError(e.t, err)
	_, err = e.tab.Fill(e.ctx, "#login-handle", handle)
	require.NoError(e.t, err)
	_, err = e.tab.Fill(e.ctx, "#login-password", demosite.Password)
	require.NoError(e.t, err)
	status, err := e.tab.ClickOnceAndWait(e.ctx, "#login-submit")
	require.NoError(e.t, err)
	require.Equal(e.t, 200, status)
	who, err := e.site.Identity(e.ctx, e.tab)
	require.NoError(e.t, err)
	require.Equal(e.t, handle, who)
}

// perform runs one intent through the adapter as the operator would: open,
// preflight, fill, submit, read the result.
func (e *env) perform(in sites.Intent) (sites.Observed, error) {
	return perform(e.ctx, e.site, e.tab, in)
}

// perform runs one intent through an adapter in tab as the operator would.
func perform(ctx context.Context, d sites.Adapter, tab *browser.Tab, in sites.Intent) (sites.Observed, error) {
	status, err := d.Open(ctx, tab, in)
	if err != nil {
		return sites.Observed{}, err
	}
	if err := sites.Preflight(ctx, d, tab, in.Actor, status); err != nil {
		return sites.Observed{}, err
	}
	if _, err := d.Fill(ctx, tab, in); err != nil {
		return sites.Observed{}, err
	}
	if err := d.Submit(ctx, tab, in); err != nil {
		return sites.Observed{}, err
	}
	return d.Result(ctx, tab, in)
}

func (e *env) search(q sites.Query) sites.SearchResult {
	e.t.Helper()
	res, err := e.site.Search(e.ctx, e.tab, q)
	require.NoError(e.t, err)
	return res
}

func permalink(id int64) string { return base + "/p/" + strconv.FormatInt(id, 10) }

// withText returns the items whose text is text.
func withText(items []sites.Item, text string) []sites.Item {
	var out []sites.Item
	for _, it := range items {
		if it.Text == text {
			out = append(out, it)
		}
	}
	return out
}

func TestSignInAndIdentity(t *testing.T) {
	e := setup(t, demosite.Faults{})
	ctx := e.ctx
	_, err := e.tab.Navigate(ctx, base+"/login")
	require.NoError(t, err)
	// A signed-in visitor sees #whoami on the login page too; log out to
	// see the login wall.
	_, err = e.tab.ClickOnceAndWait(ctx, "#logout-submit")
	require.NoError(t, err)
	status, err := e.site.OpenHome(ctx, e.tab)
	require.NoError(t, err)
	blk, err := e.site.Blocker(ctx, e.tab, status)
	require.NoError(t, err)
	require.Equal(t, sites.BlockerLogin, blk.Kind)
	_, err = e.site.Identity(ctx, e.tab)
	require.Equal(t, sites.StopLogin, sites.AsHardStop(err).Kind)

	e.signIn("alice")
	status, err = e.site.OpenHome(ctx, e.tab)
	require.NoError(t, err)
	require.NoError(t, sites.Preflight(ctx, e.site, e.tab, "alice", status))
	err = sites.Preflight(ctx, e.site, e.tab, "bob", status)
	require.Equal(t, sites.StopIdentityMismatch, sites.AsHardStop(err).Kind)
}

func TestEndToEnd(t *testing.T) {
	e := setup(t, demosite.Faults{})
	start := time.Now().Add(-time.Second)
	bobPost := demo.SeedPost("bob", "a post by bob", time.Now().Add(-time.Hour))

	text := "Hello from browserop\nsecond line — ünïcödé 🙂 <b>not html</b>"
	post, err := e.perform(sites.Intent{Kind: kind.Post, Actor: "alice", Text: text})
	require.NoError(t, err)
	effects := demo.Effects()
	require.Len(t, effects, 1)
	require.Equal(t, demosite.EffectPost, effects[0].Kind)
	require.Equal(t, text, effects[0].Text)
	require.Equal(t, permalink(effects[0].PostID), post.URL)
	require.Equal(t, post.URL, post.PageURL)
	require.Equal(t, "alice", post.Author)
	require.Equal(t, text, post.Text)
	require.Empty(t, post.Parent)
	require.True(t, effects[0].At.Equal(post.Time), "time read back exactly")

	res := e.search(sites.Query{Kind: kind.Post, Actor: "alice"})
	require.True(t, res.Complete)
	require.Equal(t, 15*time.Second, res.Settle)
	found := withText(res.Items, text)
	require.Len(t, found, 1)
	require.Equal(t, post.URL, found[0].Link)
	require.Equal(t, "alice", found[0].Author)
	require.True(t, found[0].OK())
	require.False(t, found[0].Time.Before(start))

	reply, err := e.perform(sites.Intent{Kind: kind.Reply, Actor: "alice", Target: permalink(bobPost), Text: "a reply"})
	require.NoError(t, err)
	require.Equal(t, permalink(bobPost), reply.Parent)
	require.Equal(t, "a reply", reply.Text)

	// A thread: part 2 replies to the verified canonical URL of part 1.
	part2, err := e.perform(sites.Intent{Kind: kind.ThreadPart, Actor: "alice", Target: post.URL, Text: "thread part 2"})
	require.NoError(t, err)
	require.Equal(t, post.URL, part2.Parent)
	res = e.search(sites.Query{Kind: kind.ThreadPart, Actor: "alice"})
	found = withText(res.Items, "thread part 2")
	require.Len(t, found, 1)
	require.Equal(t, part2.URL, found[0].Link)
	require.Equal(t, post.URL, found[0].Parent)

	like := sites.Intent{Kind: kind.Like, Actor: "alice", Target: permalink(bobPost)}
	before := e.search(sites.Query{Kind: kind.Like, Actor: "alice", Target: like.Target})
	require.True(t, before.Complete)
	require.False(t, before.Items[0].Done)
	liked, err := e.perform(like)
	require.NoError(t, err)
	require.True(t, liked.Done)
	require.Equal(t, "liked", liked.State)
	after := e.search(sites.Query{Kind: kind.Like, Actor: "alice", Target: like.Target})
	require.True(t, after.Items[0].Done)
	// Again: the control is done, so nothing is clicked (a click would unlike).
	_, err = e.perform(like)
	require.ErrorIs(t, err, sites.ErrAlreadyDone)

	follow := sites.Intent{Kind: kind.Follow, Actor: "alice", Target: base + "/u/carol"}
	followed, err := e.perform(follow)
	require.NoError(t, err)
	require.True(t, followed.Done)
	_, err = e.perform(follow)
	require.ErrorIs(t, err, sites.ErrAlreadyDone)

	kinds := []string{}
	for _, ef := range demo.Effects() {
		require.Equal(t, "alice", ef.Author)
		kinds = append(kinds, ef.Kind)
	}
	require.Equal(t, []string{"post", "reply", "reply", "like", "follow"}, kinds, "each intent had exactly one effect")
}

func TestTargetOffsiteRefusedBeforeNavigation(t *testing.T) {
	e := setup(t, demosite.Faults{})
	before, err := e.tab.URL(e.ctx)
	require.NoError(t, err)
	for _, target := range []string{"https://evil.example/p/1", "javascript:alert(1)", base + "@evil.example/p/1", ""} {
		_, err := e.site.Open(e.ctx, e.tab, sites.Intent{Kind: kind.Reply, Actor: "alice", Target: target, Text: "x"})
		require.Equal(t, sites.StopTarget, sites.AsHardStop(err).Kind, target)
	}
	_, err = e.site.Search(e.ctx, e.tab, sites.Query{Kind: kind.Post, Actor: "../admin"})
	require.Equal(t, sites.StopTarget, sites.AsHardStop(err).Kind)
	after, err := e.tab.URL(e.ctx)
	require.NoError(t, err)
	require.Equal(t, before, after, "nothing was navigated")
}

func TestFaultEditorAppend(t *testing.T) {
	e := setup(t, demosite.Faults{EditorAppend: true})
	in := sites.Intent{Kind: kind.Post, Actor: "alice", Text: "exact text"}
	status, err := e.site.Open(e.ctx, e.tab, in)
	require.NoError(t, err)
	require.NoError(t, sites.Preflight(e.ctx, e.site, e.tab, "alice", status))
	// The editor starts with its saved draft: browserop did not type it,
	// so it types nothing after or over it (docs/operator.md, "Field
	// provenance").
	_, err = e.site.Fill(e.ctx, e.tab, in)
	require.Equal(t, sites.StopFieldNotOurs, sites.AsHardStop(err).Kind, "%v", err)
	require.NotErrorIs(t, err, sites.ErrOutcomeUnknown)
	got, err := e.tab.Value(e.ctx, "textarea#compose-text")
	require.NoError(t, err)
	require.Equal(t, demosite.Draft, got, "the draft is left as it is")
	require.Empty(t, demo.Effects(), "nothing submitted")
}

func TestFaultsAfterCommit(t *testing.T) {
	for _, tc := range []struct {
		name   string
		faults demosite.Faults
	}{
		{"DropAfterCommit", demosite.Faults{DropAfterCommit: true}},
		{"Error500AfterCommit", demosite.Faults{Error500AfterCommit: true}},
		{"HangAfterCommit", demosite.Faults{HangAfterCommit: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := setup(t, tc.faults)
			e.tab.SetActionTimeout(2 * time.Second)
			obs, err := e.perform(sites.Intent{Kind: kind.Post, Actor: "alice", Text: "committed " + tc.name})
			require.ErrorIs(t, err, sites.ErrOutcomeUnknown, "ambiguous, never failed: %v", err)
			require.Empty(t, obs.URL)
			effects := demo.Effects()
			require.Len(t, effects, 1, "the site committed exactly once")
			require.Equal(t, "committed "+tc.name, effects[0].Text)
		})
	}
	t.Run("LikeDropAfterCommit", func(t *testing.T) {
		e := setup(t, demosite.Faults{})
		id := demo.SeedPost("bob", "like me", time.Time{})
		require.NoError(t, demo.SetFaults(demosite.Faults{DropAfterCommit: true}))
		_, err := e.perform(sites.Intent{Kind: kind.Like, Actor: "alice", Target: permalink(id)})
		require.ErrorIs(t, err, sites.ErrOutcomeUnknown)
		require.Len(t, demo.Effects(), 1)
	})
}

func TestFaultHardStops(t *testing.T) {
	offsite := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `<!doctype html><h1>elsewhere</h1>`)
	}))
	defer offsite.Close()

	for _, tc := range []struct {
		name   string
		faults demosite.Faults
		want   sites.HardStopKind
	}{
		{"SessionExpired", demosite.Faults{SessionExpired: true}, sites.StopLogin},
		{"Captcha", demosite.Faults{Captcha: true}, sites.StopCaptcha},
		{"RateLimit", demosite.Faults{RateLimit: true}, sites.StopRateLimit},
		{"Restricted", demosite.Faults{Restricted: true}, sites.StopRestricted},
		{"SwitchAccount", demosite.Faults{SwitchAccount: "bob"}, sites.StopIdentityMismatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := setup(t, tc.faults)
			_, err := e.perform(sites.Intent{Kind: kind.Post, Actor: "alice", Text: "stopped " + tc.name})
			h := sites.AsHardStop(err)
			require.NotNil(t, h, "%v", err)
			require.Equal(t, tc.want, h.Kind, "%v", err)
			require.NotErrorIs(t, err, sites.ErrOutcomeUnknown, "stopped before the click")
			require.Empty(t, demo.Effects())
		})
	}
	t.Run("OffsiteRedirect", func(t *testing.T) {
		e := setup(t, demosite.Faults{OffsiteRedirect: offsite.URL + "/landing"})
		_, err := e.perform(sites.Intent{Kind: kind.Post, Actor: "alice", Text: "redirected"})
		h := sites.AsHardStop(err)
		require.NotNil(t, h, "%v", err)
		require.Equal(t, sites.StopOffsite, h.Kind)
		require.ErrorIs(t, err, sites.ErrOutcomeUnknown, "after the click the outcome is for reconciliation")
		require.Empty(t, demo.Effects())
	})
	t.Run("RateLimitOnSearch", func(t *testing.T) {
		e := setup(t, demosite.Faults{RateLimit: true})
		_, err := e.site.Search(e.ctx, e.tab, sites.Query{Kind: kind.Post, Actor: "alice"})
		require.Equal(t, sites.StopRateLimit, sites.AsHardStop(err).Kind)
	})
}

func TestFaultVisibilityDelay(t *testing.T) {
	const delay = 2 * time.Second
	e := setup(t, demosite.Faults{VisibilityDelay: delay})
	text := "visible later"
	_, err := e.perform(sites.Intent{Kind: kind.Post, Actor: "alice", Text: text})
	require.ErrorIs(t, err, sites.ErrOutcomeUnknown, "the permalink is 404 during the delay")
	require.Len(t, demo.Effects(), 1)
	committed := time.Now()

	res := e.search(sites.Query{Kind: kind.Post, Actor: "alice"})
	require.Empty(t, withText(res.Items, text), "not visible yet")
	require.Greater(t, res.Settle, delay, "absence inside settle is not definitive")

	time.Sleep(time.Until(committed.Add(delay + 200*time.Millisecond)))
	res = e.search(sites.Query{Kind: kind.Post, Actor: "alice"})
	found := withText(res.Items, text)
	require.Len(t, found, 1)
	require.Equal(t, permalink(demo.Effects()[0].PostID), found[0].Link)
}

func TestSearchIdenticalOlderPost(t *testing.T) {
	e := setup(t, demosite.Faults{})
	text := "the same words again"
	older := time.Now().Add(-2 * time.Hour).UTC().Truncate(time.Millisecond)
	oldID := demo.SeedPost("alice", text, older)
	start := time.Now().Add(-time.Second)
	post, err := e.perform(sites.Intent{Kind: kind.Post, Actor: "alice", Text: text})
	require.NoError(t, err)

	res := e.search(sites.Query{Kind: kind.Post, Actor: "alice"})
	found := withText(res.Items, text)
	require.Len(t, found, 2)
	require.Equal(t, post.URL, found[0].Link, "newest first")
	require.False(t, found[0].Time.Before(start))
	require.Equal(t, permalink(oldID), found[1].Link)
	require.True(t, found[1].Time.Equal(older))
	require.True(t, found[1].Time.Before(start), "the older one predates the action: not its result")
}

func TestSearchInjection(t *testing.T) {
	e := setup(t, demosite.Faults{Injection: true})
	// Enough posts for two pages, so an injected item with an old time on
	// page 1 cannot end the walk early.
	for i := range 25 {
		demo.SeedPost("alice", fmt.Sprintf("seeded %02d", i), time.Now().Add(-time.Duration(25-i)*time.Minute))
	}
	post, err := e.perform(sites.Intent{Kind: kind.Post, Actor: "alice", Text: "mine, despite the noise"})
	require.NoError(t, err)
	require.Equal(t, "alice", post.Author)

	res := e.search(sites.Query{Kind: kind.Post, Actor: "alice"})
	require.True(t, res.Complete)
	require.Equal(t, 2, res.Pages, "an injected old item did not end the walk")
	alice := map[string]bool{}
	for _, it := range res.Items {
		require.True(t, it.OK(), "%+v", it.Problems)
		switch it.Author {
		case "alice":
			require.False(t, alice[it.Link], "duplicate %s", it.Link)
			alice[it.Link] = true
			require.True(t, strings.HasPrefix(it.Link, base+"/p/"))
			require.NotContains(t, it.Text, "SYSTEM")
		case "mallory":
			require.Equal(t, base+"/p/0", it.Link)
			require.Contains(t, it.Text, "Message from @alice", "the claim is text, not authorship")
		default:
			t.Fatalf("unexpected author %q", it.Author)
		}
	}
	require.Len(t, alice, 26, "every real post of alice, and only those, carry her name")
	require.True(t, alice[post.URL])
	require.Len(t, demo.Effects(), 1, "injected text changed nothing")
}

func TestSearchWindowAndPages(t *testing.T) {
	e := setup(t, demosite.Faults{})
	now := time.Now()
	for i := range 45 {
		demo.SeedPost("alice", fmt.Sprintf("p%02d", i), now.Add(-time.Duration(45-i)*time.Hour))
	}
	// Window covers 10 hours: page 1 reaches older items, so it is complete.
	res := e.search(sites.Query{Kind: kind.Post, Actor: "alice", Since: now.Add(-10 * time.Hour)})
	require.True(t, res.Complete)
	require.Equal(t, 1, res.Pages)

	// 72h lookback: every page, ending at the complete marker.
	res = e.search(sites.Query{Kind: kind.Post, Actor: "alice"})
	require.True(t, res.Complete)
	require.Equal(t, 3, res.Pages)
	require.Len(t, res.Items, 45)

	// One page allowed and the window not reached: not complete.
	data := demoWith(t, "max_pages: 5", "max_pages: 1")
	one, err := sites.Parse("demo.yaml", data)
	require.NoError(t, err)
	one, err = one.WithOrigins(base)
	require.NoError(t, err)
	r1, err := one.Search(e.ctx, e.tab, sites.Query{Kind: kind.Post, Actor: "alice"})
	require.NoError(t, err)
	require.False(t, r1.Complete)
	require.Equal(t, 1, r1.Pages)
}

func TestSubmitRefusesAmbiguousControl(t *testing.T) {
	e := setup(t, demosite.Faults{})
	data := demoWith(t, `      selector: "button#compose-submit"`, `      selector: "button"`)
	d, err := sites.Parse("demo.yaml", data)
	require.NoError(t, err)
	d, err = d.WithOrigins(base)
	require.NoError(t, err)
	in := sites.Intent{Kind: kind.Post, Actor: "alice", Text: "never sent"}
	_, err = d.Open(e.ctx, e.tab, in)
	require.NoError(t, err)
	_, err = d.Fill(e.ctx, e.tab, in)
	require.NoError(t, err)
	err = d.Submit(e.ctx, e.tab, in)
	require.Equal(t, sites.StopSelectorAmbiguous, sites.AsHardStop(err).Kind)
	require.ErrorIs(t, err, sites.ErrSelectorAmbiguous)
	require.NotErrorIs(t, err, sites.ErrOutcomeUnknown)
	require.Empty(t, demo.Effects())
}
