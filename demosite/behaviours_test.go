package demosite_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/browserop/browserop/demosite"
	"github.com/stretchr/testify/require"
)

// The site behaviours an adapter may get wrong (docs/demosite.md, "Site
// behaviours"): each switch, over HTTP; the ones a page's script draws
// are driven in Chromium below.

func TestRewrite(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ how, in, want string }{
		{"", "as it is", "as it is"},
		{"signature", "hello", "hello" + demosite.Signature},
		{"shorten_links", "see https://example.com/a?b=c and http://x.test", "see https://dmo.st/"},
		{"curly_quotes", `it's "quoted" (and "again")`, "it’s “quoted” (and “again”)"},
		{"collapse_whitespace", "  two  spaces\nand\ta line  ", "two spaces and a line"},
		{"prefix", "page", demosite.CreatedPrefix + "“page”"},
	} {
		got := demosite.Rewrite(tc.how, tc.in)
		if tc.how == "shorten_links" {
			require.Regexp(t, `^see https://dmo\.st/[0-9a-f]{8} and https://dmo\.st/[0-9a-f]{8}$`, got)
			continue
		}
		require.Equal(t, tc.want, got, tc.how)
	}
	require.Len(t, demosite.Rewrites, 5)
}

// rewrite_text: the page shows the rewrite, for good; the effect keeps
// the text as submitted, with the rewrite in Shown.
func TestFaultRewriteText(t *testing.T) {
	t.Parallel()
	for _, how := range demosite.Rewrites {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			st := newSite(t, demosite.Faults{RewriteText: how})
			alice := st.as(t, "alice")
			text := `it's  "rewritten" https://example.com/x` + "\nline two"
			shown := demosite.Rewrite(how, text)
			require.NotEqual(t, text, shown)
			loc := alice.compose(text).Location()
			require.Equal(t, "/p/1", loc)
			require.Equal(t, "/p/2", alice.post("/p/1/reply", url.Values{"text": {text + " reply"}}).Location())

			effects := st.Effects()
			require.Len(t, effects, 2)
			require.Equal(t, text, effects[0].Text, "the effect is what was submitted")
			require.Equal(t, shown, effects[0].Shown)
			require.Equal(t, demosite.Rewrite(how, text+" reply"), effects[1].Shown)

			require.NoError(t, st.SetFaults(demosite.Faults{}))
			main := articles(alice.get("/p/1").Body)[0]
			require.Equal(t, shown, main.Text, "rewritten on save: shown so after the switch is off")
			listed := articles(alice.get("/u/alice").Body)
			require.Equal(t, shown, listed[1].Text)
			require.Equal(t, "/p/3", alice.compose(text).Location())
			require.Empty(t, st.Effects()[2].Shown, "a post made with the switch off is shown as written")
		})
	}
}

// timeline_newest: a list that silently stops at the newest N: no next
// link, and data-complete="false" on its one page.
func TestFaultTimelineNewest(t *testing.T) {
	t.Parallel()
	st := newSite(t, demosite.Faults{TimelineNewest: 2})
	alice := st.as(t, "alice")
	for _, txt := range []string{"one", "two", "three"} {
		alice.compose(txt)
		st.Clock.Advance(time.Second)
	}
	for _, path := range []string{"/u/alice", "/home"} {
		body := alice.get(path).Body
		var texts []string
		for _, a := range articles(body) {
			texts = append(texts, a.Text)
		}
		require.Equal(t, []string{"three", "two"}, texts, path)
		require.NotRegexp(t, nextPageRE, body, path)
		require.Equal(t, "false", completeRE.FindStringSubmatch(body)[1], path)
	}
	page2 := alice.get("/u/alice?page=2").Body
	require.Empty(t, articles(page2))
	require.Equal(t, "false", completeRE.FindStringSubmatch(page2)[1])

	require.NoError(t, st.SetFaults(demosite.Faults{}))
	body := alice.get("/u/alice").Body
	require.Len(t, articles(body), 3)
	require.Equal(t, "true", completeRE.FindStringSubmatch(body)[1])
}

var submissionRE = regexp.MustCompile(`<input type="hidden" name="submission" value="([0-9a-f]{16})">`)

// Every compose and reply form carries a submission id of its own.
func TestSubmissionIDs(t *testing.T) {
	t.Parallel()
	st := newSite(t, demosite.Faults{})
	alice := st.as(t, "alice")
	seen := map[string]bool{}
	for _, path := range []string{"/compose", "/compose", "/compose/frame"} {
		m := submissionRE.FindStringSubmatch(alice.get(path).Body)
		require.NotNil(t, m, path)
		require.False(t, seen[m[1]], "a new id each time the form is shown")
		seen[m[1]] = true
	}
	alice.compose("root")
	form := section(t, alice.get("/p/1").Body, `<form id="reply-form"`, `</form>`)
	require.Regexp(t, submissionRE, form)

	// Without the switch the site takes a submission twice, as before.
	form2 := url.Values{"text": {"twice"}, "submission": {"00000000000000aa"}}
	require.Equal(t, http.StatusSeeOther, alice.post("/posts", form2).Status)
	require.Equal(t, http.StatusSeeOther, alice.post("/posts", form2).Status)
	require.Len(t, st.Effects(), 3)
}

// resend_after_commit: the submission commits and is answered 307 to its
// own URL; the same submission again is answered 409 with an edit
// conflict, committing nothing.
func TestFaultResendAfterCommit(t *testing.T) {
	t.Parallel()
	st := newSite(t, demosite.Faults{ResendAfterCommit: true})
	alice := st.as(t, "alice")
	post := url.Values{"text": {"sent once"}, "submission": {"0123456789abcdef"}}
	res := alice.post("/posts", post)
	require.Equal(t, http.StatusTemporaryRedirect, res.Status)
	require.Equal(t, "/posts", res.Location())
	require.Len(t, st.Effects(), 1)
	res = alice.post("/posts", post)
	require.Equal(t, http.StatusConflict, res.Status)
	require.Contains(t, res.Body, `<div id="form-error" class="error" role="alert" data-kind="conflict">Edit conflict: this submission was already saved (#1).`)
	require.Contains(t, res.Body, `<form id="compose-form"`)
	require.Len(t, st.Effects(), 1, "the resend commits nothing")

	reply := url.Values{"text": {"a reply"}, "submission": {"fedcba9876543210"}}
	res = alice.post("/p/1/reply", reply)
	require.Equal(t, http.StatusTemporaryRedirect, res.Status)
	require.Equal(t, "/p/1/reply", res.Location())
	res = alice.post("/p/1/reply", reply)
	require.Equal(t, http.StatusConflict, res.Status)
	require.Contains(t, res.Body, `data-kind="conflict">Edit conflict: this submission was already saved (#2).`)
	require.Len(t, st.Effects(), 2)

	// A form without a submission id (a like) is answered as always.
	res = alice.post("/p/1/like", nil)
	require.Equal(t, http.StatusSeeOther, res.Status)
	require.Len(t, st.Effects(), 3)
	// After-commit failures come first.
	require.NoError(t, st.SetFaults(demosite.Faults{ResendAfterCommit: true, Error500AfterCommit: true}))
	require.Equal(t, http.StatusInternalServerError, alice.post("/posts", url.Values{"text": {"x"}, "submission": {"1111111111111111"}}).Status)
}

// theme: list items are article.card; the permalink's own post is still
// article.post#post.
func TestFaultTheme(t *testing.T) {
	t.Parallel()
	st := newSite(t, demosite.Faults{Theme: "cards"})
	alice := st.as(t, "alice")
	alice.compose("root")
	alice.post("/p/1/reply", url.Values{"text": {"reply"}})
	profile := alice.get("/u/alice").Body
	require.Empty(t, articles(profile), "no article.post in the list")
	require.Equal(t, 2, strings.Count(section(t, profile, `<section id="timeline"`, `</section>`), `<article class="card" data-id=`))
	require.NotContains(t, profile, `id="timeline-empty"`, "the list has items")
	page := alice.get("/p/1").Body
	as := articles(page)
	require.Len(t, as, 1)
	require.True(t, as[0].IsMain)
	require.Contains(t, section(t, page, `<section id="replies">`, `</section>`), `<article class="card" data-id="2" data-author="alice" data-parent="1">`)
}

// compact_replies: a reply in a list leaves out the named fields; a
// top-level post and the permalink's own post keep every one.
func TestFaultCompactReplies(t *testing.T) {
	t.Parallel()
	st := newSite(t, demosite.Faults{CompactReplies: "author,time,text"})
	alice := st.as(t, "alice")
	alice.compose("root")
	alice.post("/p/1/reply", url.Values{"text": {"a & b"}})
	profile := alice.get("/u/alice").Body
	as := articles(profile)
	require.Len(t, as, 1, "only the top-level post is a full item")
	require.Equal(t, "root", as[0].Text)
	require.NotEmpty(t, as[0].Datetime)
	item := section(t, profile, `<article class="post compact" data-id="2" data-parent="1">`, `</article>`)
	require.Contains(t, item, `<span class="author">@alice</span>`)
	require.Contains(t, item, `<span class="when">`)
	require.Contains(t, item, `<p class="post-summary">a &amp; b</p>`)
	require.NotContains(t, item, `<time`)
	require.NotContains(t, item, `post-text`)

	require.NoError(t, st.SetFaults(demosite.Faults{CompactReplies: "time"}))
	item = section(t, alice.get("/u/alice").Body, `<article class="post compact" data-id="2" data-author="alice" data-parent="1">`, `</article>`)
	require.Contains(t, item, `<a class="author" href="/u/alice">@alice</a>`)
	require.Contains(t, item, `<div class="post-text">a &amp; b</div>`)
	require.NotContains(t, item, `<time`)
	main := articles(alice.get("/p/2").Body)[0]
	require.True(t, main.IsMain)
	require.NotEmpty(t, main.Datetime, "the permalink's own post is whole")
}

// time_zone: a <time>'s text is in the zone, without naming it; its
// datetime stays UTC.
func TestFaultTimeZone(t *testing.T) {
	t.Parallel()
	st := newSite(t, demosite.Faults{TimeZone: "America/New_York"})
	alice := st.as(t, "alice")
	alice.compose("zoned")
	body := alice.get("/u/alice").Body
	require.Contains(t, body, `<time datetime="2026-11-30T10:00:00.123Z">2026-11-30 05:00:00.123</time>`)
	require.NoError(t, st.SetFaults(demosite.Faults{TimeZone: "Asia/Tokyo"}))
	require.Contains(t, alice.get("/p/1").Body, `<time datetime="2026-11-30T10:00:00.123Z">2026-11-30 19:00:00.123</time>`)
	require.NoError(t, st.SetFaults(demosite.Faults{}))
	require.Contains(t, alice.get("/p/1").Body, `<time datetime="2026-11-30T10:00:00.123Z">Nov 30, 2026 10:00 UTC</time>`)
}

// permalink_shape query: links and redirects name /post?id=N, which is
// served as /p/N is.
func TestFaultPermalinkShape(t *testing.T) {
	t.Parallel()
	st := newSite(t, demosite.Faults{PermalinkShape: "query"})
	alice := st.as(t, "alice")
	require.Equal(t, "/post?id=1", alice.compose("root").Location())
	require.Equal(t, "/post?id=2", alice.post("/p/1/reply", url.Values{"text": {"reply"}}).Location())
	page := alice.get("/post?id=2")
	require.Equal(t, http.StatusOK, page.Status)
	as := articles(page.Body)
	require.True(t, as[0].IsMain)
	require.Equal(t, "reply", as[0].Text)
	require.Contains(t, page.Body, `<a class="permalink" href="/post?id=2">#2</a>`)
	require.Contains(t, page.Body, `<a id="parent-link" href="/post?id=1">in reply to #1</a>`)
	require.Contains(t, alice.get("/u/alice").Body, `<a class="permalink" href="/post?id=1">#1</a>`)
	require.Equal(t, http.StatusOK, alice.get("/p/2").Status, "/p/N is still served")
	for _, bad := range []string{"/post", "/post?id=x", "/post?id=99"} {
		require.Equal(t, http.StatusNotFound, alice.get(bad).Status, bad)
	}
	require.NoError(t, st.SetFaults(demosite.Faults{}))
	require.Contains(t, alice.get("/u/alice").Body, `<a class="permalink" href="/p/1">#1</a>`)
}

// flat_replies: a reply to a reply goes to the thread's root.
func TestFaultFlatReplies(t *testing.T) {
	t.Parallel()
	st := newSite(t, demosite.Faults{FlatReplies: true})
	alice := st.as(t, "alice")
	alice.compose("root")
	alice.post("/p/1/reply", url.Values{"text": {"part 1"}})
	alice.post("/p/2/reply", url.Values{"text": {"part 2"}})
	effects := st.Effects()
	require.Equal(t, int64(1), effects[1].ParentID)
	require.Equal(t, int64(1), effects[2].ParentID, "attached to the root, not to #2")
	require.NoError(t, st.SetFaults(demosite.Faults{}))
	alice.post("/p/3/reply", url.Values{"text": {"part 3"}})
	require.Equal(t, int64(3), st.Effects()[3].ParentID)
}

// late_list and late_panel in markup: the page is not ready until the
// list is drawn; a form carries the category panel's script and field; a
// category sent is on the effect.
func TestFaultLateMarkup(t *testing.T) {
	t.Parallel()
	st := newSite(t, demosite.Faults{LateList: 1500 * time.Millisecond})
	alice := st.as(t, "alice")
	alice.compose("root")
	profile := alice.get("/u/alice").Body
	require.Contains(t, profile, `<body data-ready="false">`)
	require.Contains(t, profile, `<div id="timeline-box"><section id="timeline" data-complete="true" data-page="1"><p id="timeline-empty">`)
	require.Contains(t, profile, `<template data-late="timeline-box">`)
	require.Regexp(t, `\},\s*1500\s*\);`, profile)
	require.Contains(t, alice.get("/p/1").Body, `<template data-late="replies-box">`)
	require.Contains(t, alice.get("/compose").Body, `<body data-ready="true">`, "a page without a list is ready at once")

	require.NoError(t, st.SetFaults(demosite.Faults{}))
	require.Contains(t, alice.get("/u/alice").Body, `<body data-ready="true">`)
	require.NotContains(t, alice.get("/u/alice").Body, `data-late`)
	require.NotContains(t, alice.get("/compose").Body, `category`)

	require.NoError(t, st.SetFaults(demosite.Faults{LatePanel: time.Second}))
	compose := alice.get("/compose").Body
	require.Contains(t, compose, `<input type="hidden" name="category" value="">`)
	require.Regexp(t, `\},\s*1000\s*\);`, compose)
	require.Contains(t, section(t, alice.get("/p/1").Body, `<form id="reply-form"`, `</form>`), `name="category"`)
	alice.post("/posts", url.Values{"text": {"filed"}, "category": {"news"}})
	alice.post("/posts", url.Values{"text": {"unfiled"}, "category": {"nonsense"}})
	effects := st.Effects()
	require.Equal(t, "news", effects[1].Category)
	require.Empty(t, effects[2].Category, "an unknown category is none")
}

// The oracle's effects carry shown and category only when set.
func TestEffectJSONExtras(t *testing.T) {
	t.Parallel()
	st := newSite(t, demosite.Faults{RewriteText: "signature"})
	alice := st.as(t, "alice")
	alice.post("/posts", url.Values{"text": {"x"}, "category": {"notes"}})
	require.NoError(t, st.SetFaults(demosite.Faults{}))
	alice.compose("y")
	body := st.client(t).get("/_oracle/effects").Body
	var effects []demosite.Effect
	require.NoError(t, json.Unmarshal([]byte(body), &effects))
	require.Equal(t, "x"+demosite.Signature, effects[0].Shown)
	require.Equal(t, "notes", effects[0].Category)
	require.Equal(t, 1, strings.Count(body, `"shown"`))
	require.Equal(t, 1, strings.Count(body, `"category"`))
}
