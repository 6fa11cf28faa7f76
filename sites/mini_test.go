package sites_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/demosite"
	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/sites"
)

// mini is a tiny loopback site for what demosite does not do: pages the
// test writes, served as given, and a JSON or form endpoint whose answers
// the test sets. posts counts the submissions that reached it.
type mini struct {
	*httptest.Server
	posts atomic.Int64
}

// newMini serves pages (path → HTML, GET), and POST /post and /api/post,
// which count a submission and answer status (with body).
func newMini(t *testing.T, pages map[string]string, status int, body string) *mini {
	t.Helper()
	m := &mini{}
	mux := http.NewServeMux()
	for path, html := range pages {
		mux.HandleFunc("GET "+path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, html)
		})
	}
	answer := func(w http.ResponseWriter, r *http.Request) {
		m.posts.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
	mux.HandleFunc("POST /post", answer)
	mux.HandleFunc("POST /api/post", answer)
	m.Server = httptest.NewServer(mux)
	t.Cleanup(m.Close)
	return m
}

// miniYAML is an adapter for a mini site: a post composed at open, with
// the given extra keys of the post action (indented four spaces) and of
// the site (refusals and such, at the top level).
func miniYAML(origin, open, action, site string) string {
	return `origins: ["` + origin + `"]
identity: {url: "{origin}/home", selector: "#whoami", attribute: data-handle}
actions:
  post:
    open: "{origin}` + open + `"
    fill: {selector: "textarea#t"}
    submit: {selector: "button#go"}
    result:
      item: "#toast"
      link: {selector: "a", attribute: href}
` + action + `
search:
  url: "{origin}/u/{actor}"
  item: "article.post"
  text: {selector: ".text"}
  author: {attribute: data-author}
  link: {selector: "a.permalink", attribute: href}
  complete_marker: "#end"
  max_pages: 2
  lookback: 72h
  settle: 1s
` + site
}

func miniSite(t *testing.T, y string) *sites.Declarative {
	t.Helper()
	d, err := sites.Parse("mini.yaml", []byte(y))
	require.NoError(t, err, y)
	return d
}

// miniTab opens a tab on the shared browser for a mini site.
func miniTab(t *testing.T) (context.Context, *browser.Tab) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	b := shared.Browser(t)
	tab, err := b.NewTab(ctx, "")
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = b.CloseTab(context.Background(), tab) })
	tab.SetActionTimeout(5 * time.Second)
	return ctx, tab
}

// submitOnce opens, fills and submits a post on d, as the operator does
// after preflight, and returns Submit's error.
func submitOnce(t *testing.T, ctx context.Context, tab *browser.Tab, d *sites.Declarative, text string) error {
	t.Helper()
	in := sites.Intent{Kind: kind.Post, Actor: "alice", Text: text}
	_, err := d.Open(ctx, tab, in)
	require.NoError(t, err)
	_, err = d.Fill(ctx, tab, in)
	require.NoError(t, err)
	return d.Submit(ctx, tab, in)
}

// composeJS is a composer that publishes by fetch (POST /api/post) and
// shows the answer: a toast with a link for a 2xx, p.error otherwise.
// extra runs after each answer, with the response r.
const composeJS = `<script>
const go = document.getElementById('go');
const send = () => fetch('/api/post', {method: 'POST', body: document.getElementById('t').value});
const show = r => {
	const d = document.createElement(r.ok ? 'div' : 'p');
	if (r.ok) { d.id = 'toast'; d.innerHTML = '<a href="/p/1">posted</a>'; } else { d.className = 'error'; d.textContent = 'refused ' + r.status; }
	document.body.appendChild(d);
};
`

func composePage(before, onclick string) string {
	return `<!doctype html><body><span id="whoami" data-handle="alice">@alice</span>` + before +
		`<textarea id="t"></textarea><button id="go">Post</button>` + composeJS + `go.addEventListener('click', () => {` + onclick + `});
</script></body>`
}

const landResponse = `    landed: {response: {method: POST, url: '/api/post$'}}`

// TestRefusalAnswersOneSubmission: a refusal proves nothing was created
// only when it is the site's answer to the one request the click sent.
// The same answer to a page that sent the submission twice, at once or
// again once answered, proves nothing: Submit wraps it in
// ErrOutcomeUnknown with the *Refusal in the chain.
func TestRefusalAnswersOneSubmission(t *testing.T) {
	pages := map[string]string{
		"/once":   composePage("", `send().then(show);`),
		"/twice":  composePage("", `send().then(show); send();`),
		"/resend": composePage("", `send().then(r => { send(); show(r); });`),
	}
	refusals := "refusals:\n  - kind: validation\n    status: 409\n    message: \"p.error\"\n"
	for _, tc := range []struct {
		page      string
		posts     int64
		definite  bool
		doubtLike string
	}{
		{"/once", 1, true, ""},
		{"/twice", 2, false, "2 requests of the submission were seen"},
		{"/resend", 2, false, "2 requests of the submission were seen"},
	} {
		t.Run(strings.TrimPrefix(tc.page, "/"), func(t *testing.T) {
			m := newMini(t, pages, http.StatusConflict, `{"error": "conflict"}`)
			d := miniSite(t, miniYAML(m.URL, tc.page, landResponse, refusals))
			ctx, tab := miniTab(t)
			err := submitOnce(t, ctx, tab, d, "a text")
			ref := sites.AsRefusal(err)
			require.NotNil(t, ref, "the refusal is in the chain: %v", err)
			require.Equal(t, sites.RefusedValidation, ref.Kind)
			require.Equal(t, 409, ref.Status)
			require.Eventually(t, func() bool { return m.posts.Load() == tc.posts }, 5*time.Second, 20*time.Millisecond)
			if tc.definite {
				require.NotErrorIs(t, err, sites.ErrOutcomeUnknown, "the one answer to the one request: definitive")
				require.Empty(t, ref.Doubt)
				require.Equal(t, "refused 409", ref.Message)
				return
			}
			require.ErrorIs(t, err, sites.ErrOutcomeUnknown, "an answer to one of two requests proves nothing about the other")
			require.Equal(t, tc.doubtLike, ref.Doubt)
		})
	}
}

// TestRefusalSelectorMustBeNew: a refusal rule's selector matches only what
// the page shows after the click. An error message left on the page from
// before is no answer to this submission, which the site accepted.
func TestRefusalSelectorMustBeNew(t *testing.T) {
	pages := map[string]string{
		"/stale":  composePage(`<p class="error">an earlier attempt was refused</p>`, `send().then(show);`),
		"/hidden": composePage(`<p class="error" hidden>refused</p>`, `send().then(show);`),
	}
	refusals := "refusals:\n  - kind: validation\n    selector: \"p.error\"\n"
	for _, page := range []string{"/stale", "/hidden"} {
		t.Run(strings.TrimPrefix(page, "/"), func(t *testing.T) {
			m := newMini(t, pages, http.StatusCreated, `{"id": 1}`)
			d := miniSite(t, miniYAML(m.URL, page, landResponse, refusals))
			ctx, tab := miniTab(t)
			err := submitOnce(t, ctx, tab, d, "accepted")
			require.NoError(t, err, "the site took it: no refusal")
			require.EqualValues(t, 1, m.posts.Load())
		})
	}
	t.Run("new", func(t *testing.T) {
		// The same rule on a refusal the page draws after the click.
		m := newMini(t, pages, http.StatusUnprocessableEntity, `{}`)
		d := miniSite(t, miniYAML(m.URL, "/stale", landResponse, refusals))
		ctx, tab := miniTab(t)
		err := submitOnce(t, ctx, tab, d, "refused")
		ref := sites.AsRefusal(err)
		require.NotNil(t, ref, "%v", err)
		require.NotErrorIs(t, err, sites.ErrOutcomeUnknown)
	})
}

// TestRefusalTextPattern: a rule with a text pattern holds only when a
// message the page drew after the click says what the pattern says. A
// message of the same class saying something else, or the pattern's words
// in a warning left from before the click, is no such refusal: the 409
// then proves nothing.
func TestRefusalTextPattern(t *testing.T) {
	pages := map[string]string{
		"/fresh": composePage("", `send().then(show);`),
		"/stale": composePage(`<p class="error">session data lost</p>`, `send().then(show);`),
	}
	rule := func(text string) string {
		return "refusals:\n  - kind: login\n    selector: \"p.error\"\n    message: \"p.error\"\n    text: '" + text + "'\n"
	}
	for _, tc := range []struct {
		name, page, text string
		refused          bool
	}{
		{"matches", "/fresh", `^refused 4\d\d$`, true},
		{"says something else", "/fresh", "session", false},
		{"only the old message says it", "/stale", "session", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMini(t, pages, http.StatusConflict, `{}`)
			d := miniSite(t, miniYAML(m.URL, tc.page, landResponse, rule(tc.text)))
			ctx, tab := miniTab(t)
			err := submitOnce(t, ctx, tab, d, "a text")
			require.EqualValues(t, 1, m.posts.Load())
			ref := sites.AsRefusal(err)
			if !tc.refused {
				require.Nil(t, ref, "%v", err)
				require.ErrorIs(t, err, sites.ErrOutcomeUnknown, "an undeclared 409 proves nothing")
				return
			}
			require.NotNil(t, ref, "%v", err)
			require.NotErrorIs(t, err, sites.ErrOutcomeUnknown)
			require.Equal(t, sites.RefusedLogin, ref.Kind)
			require.Equal(t, "refused 409", ref.Message)
			require.Contains(t, ref.Detail, "its message matching")
		})
	}
}

// TestActionRefusalsReplaceTheSites: an action that declares its own
// refusals, even none, is judged by those alone. The site's rate_limit
// (429) would match; the post action declares `refusals: []` (as the
// WordPress editor does: its own resend makes a status prove nothing), so
// a 429 is an unknown outcome, never a refusal.
func TestActionRefusalsReplaceTheSites(t *testing.T) {
	e := setup(t, demosite.Faults{})
	y := demoWith(t, "    submit:\n      selector: \"button#compose-submit\"\n",
		"    submit:\n      selector: \"button#compose-submit\"\n    refusals: []\n")
	d, err := sites.Parse("demo.yaml", y)
	require.NoError(t, err)
	d, err = d.WithOrigins(base)
	require.NoError(t, err)
	require.NotNil(t, d.Spec().Actions.Post.Refusals, "declared, and empty")
	require.Empty(t, d.Spec().Actions.Post.Refusals)

	in := sites.Intent{Kind: kind.Post, Actor: "alice", Text: "answered 429"}
	_, err = d.Open(e.ctx, e.tab, in)
	require.NoError(t, err)
	_, err = d.Fill(e.ctx, e.tab, in)
	require.NoError(t, err)
	require.NoError(t, demo.SetFaults(demosite.Faults{RateLimit: true}))
	err = d.Submit(e.ctx, e.tab, in)
	require.Nil(t, sites.AsRefusal(err), "the site's refusals are not the action's: %v", err)
	require.ErrorIs(t, err, sites.ErrOutcomeUnknown)

	// The bundled adapter, which declares none for the post, refuses the
	// same answer: the rule above is the only difference.
	e = setup(t, demosite.Faults{})
	in.Text = "answered 429 again"
	_, err = e.site.Open(e.ctx, e.tab, in)
	require.NoError(t, err)
	_, err = e.site.Fill(e.ctx, e.tab, in)
	require.NoError(t, err)
	require.NoError(t, demo.SetFaults(demosite.Faults{RateLimit: true}))
	err = e.site.Submit(e.ctx, e.tab, in)
	ref := sites.AsRefusal(err)
	require.NotNil(t, ref, "%v", err)
	require.Equal(t, sites.RefusedRateLimit, ref.Kind)
	require.NotErrorIs(t, err, sites.ErrOutcomeUnknown)
}

// stepPage is a composer whose optional panel opener (#open-panel) and
// its sign of absence (#no-panel) the page's script draws after the
// given delays in milliseconds (-1: never).
func stepPage(openAfter, noneAfter int) string {
	return fmt.Sprintf(`<!doctype html><body><textarea id="t"></textarea><button id="go">Post</button>
<div id="panel" hidden>categories</div>
<script>
const draw = (ms, html) => { if (ms >= 0) setTimeout(() => document.body.insertAdjacentHTML('beforeend', html), ms); };
draw(%d, '<button id="open-panel" onclick="document.getElementById(\'panel\').hidden = false">Categories</button>');
draw(%d, '<p id="no-panel">no categories here</p>');
</script></body>`, openAfter, noneAfter)
}

// TestStepIfWaits: a step's if waits for the page like any other step. An
// element the page draws late is not read as "skip": the step runs once
// it shows. With unless, the sign that the step is not needed, the step
// is skipped as soon as that shows; both at once, or neither of them
// within the step's timeout, and the step fails before anything is
// clicked.
func TestStepIfWaits(t *testing.T) {
	m := newMini(t, map[string]string{
		"/late":    stepPage(800, -1),
		"/none":    stepPage(-1, 500),
		"/both":    stepPage(0, 0),
		"/neither": stepPage(-1, -1),
	}, http.StatusCreated, `{}`)
	step := func(unless, timeout string) string {
		s := "    before:\n      - if: \"#open-panel\"\n        click: \"#open-panel\"\n        wait: \"#panel\"\n"
		if unless != "" {
			s += "        unless: \"" + unless + "\"\n"
		}
		if timeout != "" {
			s += "        timeout: " + timeout + "\n"
		}
		return s
	}
	fill := func(t *testing.T, page, action string) (time.Duration, int, error) {
		t.Helper()
		d := miniSite(t, miniYAML(m.URL, page, action, ""))
		ctx, tab := miniTab(t)
		in := sites.Intent{Kind: kind.Post, Actor: "alice", Text: "with its category"}
		_, err := d.Open(ctx, tab, in)
		require.NoError(t, err)
		start := time.Now()
		_, err = d.Fill(ctx, tab, in)
		took := time.Since(start)
		n, cerr := tab.Count(ctx, "#panel:not([hidden])")
		require.NoError(t, cerr)
		return took, n, err
	}

	t.Run("DrawnLateRuns", func(t *testing.T) {
		for _, unless := range []string{"", "#no-panel"} {
			_, open, err := fill(t, "/late", step(unless, ""))
			require.NoError(t, err)
			require.Equal(t, 1, open, "the step ran once the page drew its element (unless %q)", unless)
		}
	})
	t.Run("UnlessSkipsAtOnce", func(t *testing.T) {
		took, open, err := fill(t, "/none", step("#no-panel", ""))
		require.NoError(t, err)
		require.Zero(t, open)
		require.Less(t, took, 5*time.Second, "decided when #no-panel showed, not at the 15s timeout")
	})
	t.Run("NeverShownIsSkippedAfterTheTimeout", func(t *testing.T) {
		took, open, err := fill(t, "/neither", step("", "1500ms"))
		require.NoError(t, err)
		require.Zero(t, open)
		require.GreaterOrEqual(t, took, 1500*time.Millisecond, "absence is read only once the step's timeout passed")
	})
	t.Run("BothFail", func(t *testing.T) {
		_, _, err := fill(t, "/both", step("#no-panel", ""))
		require.ErrorIs(t, err, sites.ErrStepFailed)
		require.Contains(t, err.Error(), "both if and unless match")
	})
	t.Run("NeitherWithUnlessFails", func(t *testing.T) {
		_, _, err := fill(t, "/neither", step("#no-panel", "1s"))
		require.ErrorIs(t, err, sites.ErrStepFailed)
		require.Contains(t, err.Error(), "neither if nor unless")
	})
	require.Zero(t, m.posts.Load(), "nothing was submitted")
}

// listPage is a list of posts, each by its author, with the site's count
// of them (countText; "" shows no count) and a link to page next (""
// for the last page, which is marked #end).
func listPage(countText string, next string, authors ...string) string {
	var b strings.Builder
	b.WriteString(`<!doctype html><body><span id="whoami" data-handle="alice">@alice</span>`)
	if countText != "" {
		fmt.Fprintf(&b, `<p id="count">%s</p>`, countText)
	}
	for i, a := range authors {
		fmt.Fprintf(&b, `<article class="post" data-author="%s"><a class="permalink" href="/p/%s-%d">#</a><div class="text">post %d by %s</div></article>`, a, a, i, i, a)
	}
	if next != "" {
		fmt.Fprintf(&b, `<a id="next" href="%s">Older</a>`, next)
	} else {
		b.WriteString(`<p id="end">the end</p>`)
	}
	b.WriteString(`</body>`)
	return b.String()
}

// countedYAML is a mini site whose search declares the site's count.
func countedYAML(origin string) string {
	y := miniYAML(origin, "/compose", "", "")
	y = strings.Replace(y, "  complete_marker: \"#end\"\n", "  complete_marker: \"#end\"\n  next: \"a#next\"\n  count: \"#count\"\n", 1)
	return y
}

// TestSearchCount: a search that declares the site's count of the items
// it lists is Counted only when, on every page read, the count equals the
// items read there; where they differ, or the count cannot be read, it is
// not Counted and not Complete.
func TestSearchCount(t *testing.T) {
	for _, tc := range []struct {
		name              string
		page1, page2      string
		counted, complete bool
		items             int
	}{
		{"Agrees", listPage("3 posts", "", "alice", "bob", "alice"), "", true, true, 3},
		{"EmptyAndSaysSo", listPage("Showing 0 items", ""), "", true, true, 0},
		{"SaysMore", listPage("4 posts", "", "alice", "bob", "alice"), "", false, false, 3},
		{"SaysNoneSeesSome", listPage("0 posts", "", "alice"), "", false, false, 1},
		{"NoCount", listPage("", "", "alice"), "", false, false, 1},
		{"NoNumber", listPage("some posts", "", "alice"), "", false, false, 1},
		{"EveryPage", listPage("2 posts", "/u/alice/2", "alice", "alice"), listPage("1 post", "", "alice"), true, true, 3},
		{"SecondPageDisagrees", listPage("2 posts", "/u/alice/2", "alice", "alice"), listPage("2 posts", "", "alice"), false, false, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pages := map[string]string{"/u/alice": tc.page1}
			if tc.page2 != "" {
				pages["/u/alice/2"] = tc.page2
			}
			m := newMini(t, pages, http.StatusCreated, `{}`)
			d := miniSite(t, countedYAML(m.URL))
			ctx, tab := miniTab(t)
			res, err := d.Search(ctx, tab, sites.Query{Kind: kind.Post, Actor: "alice"})
			require.NoError(t, err)
			require.Len(t, res.Items, tc.items)
			require.Equal(t, tc.counted, res.Counted, "counted")
			require.Equal(t, tc.complete, res.Complete, "complete")
			v := res.View(time.Now())
			require.Equal(t, tc.counted, v.Counted, "verify sees the count's agreement")
			require.Equal(t, tc.complete, v.Complete)
		})
	}
	t.Run("Undeclared", func(t *testing.T) {
		m := newMini(t, map[string]string{"/u/alice": listPage("3 posts", "", "alice")}, http.StatusCreated, `{}`)
		d := miniSite(t, miniYAML(m.URL, "/compose", "", ""))
		ctx, tab := miniTab(t)
		res, err := d.Search(ctx, tab, sites.Query{Kind: kind.Post, Actor: "alice"})
		require.NoError(t, err)
		require.False(t, res.Counted, "without search.count nothing is counted")
		require.True(t, res.Complete)
	})
}

// TestFieldPattern: a field's pattern reads the part of the text it
// captures ("By alice" is alice); an item whose text it does not match
// carries the problem, and is never read as anyone's.
func TestFieldPattern(t *testing.T) {
	list := `<!doctype html><body>
<article class="post"><a class="permalink" href="/p/1">1</a><p class="text">one</p><span class="by">By alice</span></article>
<article class="post"><a class="permalink" href="/p/2">2</a><p class="text">two</p><span class="by">alice</span></article>
<p id="end">end</p></body>`
	m := newMini(t, map[string]string{"/u/alice": list}, http.StatusOK, "")
	y := strings.Replace(miniYAML(m.URL, "/compose", "", ""), "author: {attribute: data-author}",
		`author: {selector: ".by", pattern: '^By (\w+)$'}`, 1)
	d := miniSite(t, y)
	ctx, tab := miniTab(t)
	res, err := d.Search(ctx, tab, sites.Query{Kind: kind.Post, Actor: "alice"})
	require.NoError(t, err)
	require.Len(t, res.Items, 2)
	require.Equal(t, "alice", res.Items[0].Author)
	require.Empty(t, res.Items[0].Problems)
	require.Empty(t, res.Items[1].Author, "not matched: no author")
	require.Equal(t, []string{`author "alice" does not match its pattern`}, res.Items[1].Problems)

	_, err = sites.Parse("mini.yaml", []byte(strings.Replace(y, `pattern: '^By (\w+)$'`, `pattern: 'By \w+'`, 1)))
	require.ErrorContains(t, err, "search.author.pattern: \"By \\\\w+\" has 0 capture groups: give exactly one")
}

// TestStepThatLoadsADocumentWaitsForReady: a step whose click loads a
// document (a preview, as a wiki's editor has) leaves a page whose scripts
// have not run yet. The steps after it, and the committing click, wait
// until that page is ready: here its save button publishes only once its
// script, which runs late, has hooked it.
func TestStepThatLoadsADocumentWaitsForReady(t *testing.T) {
	var posts atomic.Int64
	editor := func(text, preview string) string {
		return `<!doctype html><body><span id="whoami" data-handle="alice">@alice</span>` + preview +
			`<form method="post" action="/preview"><textarea id="t" name="text">` + text + `</textarea>` +
			`<button id="preview" type="submit">Preview</button></form><button id="go">Save</button>
<script>
setTimeout(() => {
	document.getElementById('go').addEventListener('click', () => fetch('/api/post', {method: 'POST', body: document.getElementById('t').value}).then(r => {
		const d = document.createElement('div'); d.id = 'toast'; d.innerHTML = '<a href="/p/1">posted</a>'; document.body.appendChild(d);
	}));
	const r = document.createElement('i'); r.id = 'ready'; r.textContent = 'ready'; document.body.appendChild(r);
}, 700);
</script></body>`
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /edit", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, editor("", "")) })
	mux.HandleFunc("POST /preview", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, editor(r.FormValue("text"), `<div id="previewed">`+r.FormValue("text")+`</div>`))
	})
	mux.HandleFunc("POST /api/post", func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		w.WriteHeader(http.StatusCreated)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	d := miniSite(t, miniYAML(srv.URL, "/edit",
		"    ready: {selector: \"#ready\"}\n    steps:\n      - {click: \"button#preview\", wait: \"#previewed\"}\n"+landResponse, ""))
	ctx, tab := miniTab(t)
	require.NoError(t, submitOnce(t, ctx, tab, d, "previewed first"), "saved once the previewed page was ready")
	require.EqualValues(t, 1, posts.Load())
}

// TestSearchThenOpen: a list that shows a summary, not the text (a wiki's
// history), reads each item's text on its own page (open_each), at most
// max items a walk: those past it, and an item whose page is another
// address, are read with a problem and never match.
func TestSearchThenOpen(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /history", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `<!doctype html><body><ul id="history">
<li data-author="alice"><a class="rev" href="/rev?id=3">3</a> <span class="comment">summary three</span></li>
<li data-author="bob"><a class="rev" href="/rev?id=2">2</a> <span class="comment">summary two</span></li>
<li data-author="alice"><a class="rev" href="/moved?id=1">1</a> <span class="comment">summary one</span></li>
<li data-author="alice"><a class="rev" href="/rev?id=0">0</a> <span class="comment">summary zero</span></li>
</ul><p id="end">end</p></body>`)
	})
	mux.HandleFunc("GET /rev", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `<!doctype html><body><article id="rev"><h1>Page `+r.FormValue("id")+`</h1><div class="text">text of `+r.FormValue("id")+`</div></article></body>`)
	})
	mux.HandleFunc("GET /moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/rev?id=9", http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	y := miniYAML(srv.URL, "/compose", "", "")
	y = strings.Replace(y, `search:
  url: "{origin}/u/{actor}"
  item: "article.post"
  text: {selector: ".text"}
  author: {attribute: data-author}
  link: {selector: "a.permalink", attribute: href}`, `search:
  url: "{origin}/history"
  item: "#history li"
  author: {attribute: data-author}
  link: {selector: "a.rev", attribute: href}
  open_each:
    item: "article#rev"
    title: {selector: "h1"}
    text: {selector: ".text"}
    max: 3`, 1)
	d := miniSite(t, y)
	ctx, tab := miniTab(t)
	res, err := d.Search(ctx, tab, sites.Query{Kind: kind.Post, Actor: "alice"})
	require.NoError(t, err)
	require.Len(t, res.Items, 4)
	require.Equal(t, "Page 3\ntext of 3", res.Items[0].Text, "read on its page, with its title")
	require.Empty(t, res.Items[0].Problems)
	require.Equal(t, "Page 2\ntext of 2", res.Items[1].Text)
	require.Equal(t, []string{"text not read: its page opened at another address"}, res.Items[2].Problems)
	require.Equal(t, []string{"text not read: the walk opens at most open_each.max items"}, res.Items[3].Problems)
	require.False(t, res.Complete, "an item not opened leaves the view incomplete")
	require.True(t, d.Compares(kind.Post).Text, "the text is compared, read on the item's page")

	_, err = sites.Parse("mini.yaml", []byte(strings.Replace(y, "    max: 3", "    max: 0", 1)))
	require.ErrorContains(t, err, "search.open_each.max: required")
	_, err = sites.Parse("mini.yaml", []byte(strings.Replace(y, "    text: {selector: \".text\"}\n    max: 3", "    max: 3", 1)))
	require.ErrorContains(t, err, "search.text: required")
}

// TestIdentityOnASinglePageApp: an app that draws the signed-in account
// late, inside an account menu, is read once its menu is opened (the
// identity's steps) and the element shows (identity.wait); an app that
// says who is signed in only through its JSON API is read from there,
// with the page's cookies; a 401 there is nobody.
func TestIdentityOnASinglePageApp(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /home", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `<!doctype html><body><div id="app"></div><script>
setTimeout(() => {
	document.getElementById('app').innerHTML = '<b id="late">@alice</b><button id="avatar">A</button><div id="menu" hidden><span id="who">@alice</span></div>';
	document.getElementById('avatar').onclick = () => { setTimeout(() => { document.getElementById('menu').hidden = false; }, 300); };
}, 600);
</script></body>`)
	})
	mux.HandleFunc("GET /app", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `<!doctype html><body>app</body>`)
	})
	mux.HandleFunc("GET /api/me", func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie("session"); err != nil || c.Value != "alice-session" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"data": [{"user": {"handle": "alice"}}]}`)
	})
	mux.HandleFunc("GET /signin", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "alice-session", Path: "/"})
		io.WriteString(w, `<!doctype html><body>signed in</body>`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	ctx, tab := miniTab(t)

	menu := strings.Replace(miniYAML(srv.URL, "/compose", "", ""),
		`identity: {url: "{origin}/home", selector: "#whoami", attribute: data-handle}`,
		`identity: {url: "{origin}/home", selector: "#who", wait: 3s, steps: [{click: "#avatar", wait: "#who"}]}`, 1)
	d := miniSite(t, menu)
	_, err := d.OpenHome(ctx, tab)
	require.NoError(t, err)
	who, err := d.Identity(ctx, tab)
	require.NoError(t, err, "the menu opened, the account read")
	require.Equal(t, "alice", who)

	for _, tc := range []struct {
		wait string
		ok   bool
	}{{", wait: 3s", true}, {"", false}} {
		late := strings.Replace(miniYAML(srv.URL, "/compose", "", ""),
			`identity: {url: "{origin}/home", selector: "#whoami", attribute: data-handle}`,
			`identity: {url: "{origin}/home", selector: "#late"`+tc.wait+`}`, 1)
		d = miniSite(t, late)
		_, err = d.OpenHome(ctx, tab)
		require.NoError(t, err)
		who, err = d.Identity(ctx, tab)
		if tc.ok {
			require.NoError(t, err, "waited for: drawn after load")
			require.Equal(t, "alice", who)
		} else {
			require.Equal(t, sites.StopLogin, sites.AsHardStop(err).Kind, "read at once: not drawn yet")
			require.ErrorContains(t, err, `identity.selector "#late" matched nothing`)
		}
	}

	api := strings.Replace(miniYAML(srv.URL, "/compose", "", ""),
		`identity: {url: "{origin}/home", selector: "#whoami", attribute: data-handle}`,
		`identity: {url: "{origin}/app", json: {url: "{origin}/api/me", path: data.0.user.handle}}`, 1)
	d = miniSite(t, api)
	_, err = d.OpenHome(ctx, tab)
	require.NoError(t, err)
	_, err = d.Identity(ctx, tab)
	require.Equal(t, sites.StopLogin, sites.AsHardStop(err).Kind, "401: nobody signed in")
	require.ErrorContains(t, err, "identity.json answered 401")
	_, err = tab.Navigate(ctx, srv.URL+"/signin")
	require.NoError(t, err)
	_, err = d.OpenHome(ctx, tab)
	require.NoError(t, err)
	who, err = d.Identity(ctx, tab)
	require.NoError(t, err)
	require.Equal(t, "alice", who, "read from the API with the page's cookie")
}

// TestLandedResponseBody: an editor that autosaves to the same URL it
// publishes to sends two requests on the click. landed.response.body
// names the publishing one: its answer is the landing, not the
// autosave's. Both are requests of the submission all the same (the
// adapter's pattern may be wrong): a refusal that answers one of them
// proves nothing.
func TestLandedResponseBody(t *testing.T) {
	page := composePage("", `fetch('/api/post', {method: 'POST', body: 'autosave: ' + document.getElementById('t').value}).then(() => send().then(show));`)
	serve := func(t *testing.T, autosave, publish int) (*httptest.Server, *atomic.Int64) {
		var posts atomic.Int64
		mux := http.NewServeMux()
		mux.HandleFunc("GET /autosaving", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, page) })
		mux.HandleFunc("POST /api/post", func(w http.ResponseWriter, r *http.Request) {
			posts.Add(1)
			b, _ := io.ReadAll(r.Body)
			if strings.HasPrefix(string(b), "autosave") {
				w.WriteHeader(autosave)
				return
			}
			w.WriteHeader(publish)
		})
		srv := httptest.NewServer(mux)
		t.Cleanup(srv.Close)
		return srv, &posts
	}
	withBody := "    landed: {response: {method: POST, url: '/api/post$', body: '^publish'}}"
	refusals := "refusals:\n  - kind: validation\n    status: 409\n    message: \"p.error\"\n"

	t.Run("the publish answers", func(t *testing.T) {
		srv, posts := serve(t, http.StatusInternalServerError, http.StatusCreated)
		for _, tc := range []struct {
			landed string
			ok     bool
		}{{withBody, true}, {landResponse, false}} {
			d := miniSite(t, miniYAML(srv.URL, "/autosaving", tc.landed, ""))
			ctx, tab := miniTab(t)
			err := submitOnce(t, ctx, tab, d, "publish this")
			if tc.ok {
				require.NoError(t, err, "landed on the publish's 201, not the autosave's 500")
			} else {
				require.ErrorIs(t, err, sites.ErrOutcomeUnknown, "the autosave's 500 answered first")
				require.ErrorContains(t, err, "answered 500")
			}
		}
		require.GreaterOrEqual(t, posts.Load(), int64(3), "each click sent its autosave, and the first its publish")
	})
	t.Run("a refusal answers one of two", func(t *testing.T) {
		srv, posts := serve(t, http.StatusConflict, http.StatusConflict)
		d := miniSite(t, miniYAML(srv.URL, "/autosaving", withBody, refusals))
		ctx, tab := miniTab(t)
		err := submitOnce(t, ctx, tab, d, "publish this")
		require.Eventually(t, func() bool { return posts.Load() == 2 }, 5*time.Second, 20*time.Millisecond)
		ref := sites.AsRefusal(err)
		require.NotNil(t, ref, "%v", err)
		require.ErrorIs(t, err, sites.ErrOutcomeUnknown, "the body pattern does not make the autosave no request")
		require.Equal(t, "2 requests of the submission were seen", ref.Doubt)
	})
}
