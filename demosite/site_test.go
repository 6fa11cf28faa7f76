package demosite_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/browserop/browserop/demosite"
	"github.com/stretchr/testify/require"
)

func TestLogin(t *testing.T) {
	t.Parallel()
	st := newSite(t, demosite.Faults{})
	c := st.client(t)

	t.Run("LoginWall", func(t *testing.T) {
		res := c.get("/home")
		require.Equal(t, http.StatusSeeOther, res.Status)
		require.Equal(t, "/login?next=%2Fhome", res.Location())

		res = c.get("/login?next=/compose")
		require.Equal(t, http.StatusOK, res.Status)
		for _, want := range []string{`<form id="login-form" method="post" action="/login">`, `id="login-handle" name="handle"`, `id="login-password" name="password"`, `id="login-submit"`, `name="next" value="/compose"`} {
			require.Contains(t, res.Body, want)
		}
		require.Empty(t, whoami(t, res.Body))
	})

	t.Run("ErrWrongPassword", func(t *testing.T) {
		res := c.post("/login", url.Values{"handle": {"alice"}, "password": {"nope"}})
		require.Equal(t, http.StatusUnauthorized, res.Status)
		require.Contains(t, res.Body, `id="form-error"`)
		require.Empty(t, res.Header.Values("Set-Cookie"))
	})

	t.Run("OK", func(t *testing.T) {
		res := c.post("/login", url.Values{"handle": {"alice"}, "password": {demosite.Password}})
		require.Equal(t, http.StatusSeeOther, res.Status)
		require.Equal(t, "/home", res.Location())
		cookies := (&http.Response{Header: res.Header}).Cookies()
		require.Len(t, cookies, 1)
		ck := cookies[0]
		require.Equal(t, "demosite_session", ck.Name)
		require.True(t, ck.HttpOnly)
		require.Equal(t, http.SameSiteLaxMode, ck.SameSite)
		require.NotEmpty(t, ck.Value)

		signed := st.client(t)
		signed.cookie = ck
		res = signed.get("/home")
		require.Equal(t, http.StatusOK, res.Status)
		require.Equal(t, "alice", whoami(t, res.Body))
		require.Contains(t, res.Body, `<a id="compose-link" href="/compose">`)

		res = signed.post("/logout", nil)
		require.Equal(t, http.StatusSeeOther, res.Status)
		require.Equal(t, "/login", res.Location())
		require.Contains(t, res.Header.Get("Set-Cookie"), "Max-Age=0")

		// The old cookie no longer opens a session.
		res = signed.get("/home")
		require.Equal(t, http.StatusSeeOther, res.Status)
		require.True(t, strings.HasPrefix(res.Location(), "/login"), "got %v", res.Location())
	})

	t.Run("Next", func(t *testing.T) {
		res := c.post("/login", url.Values{"handle": {"@bob"}, "password": {demosite.Password}, "next": {"/compose"}})
		require.Equal(t, http.StatusSeeOther, res.Status)
		require.Equal(t, "/compose", res.Location())

		res = c.post("/login", url.Values{"handle": {"bob"}, "password": {demosite.Password}, "next": {"//evil.example/x"}})
		require.Equal(t, "/home", res.Location())
	})

	t.Run("Root", func(t *testing.T) {
		require.Equal(t, "/login", c.get("/").Location())
		require.Equal(t, "/home", st.as(t, "carol").get("/").Location())
	})
}

func TestCompose(t *testing.T) {
	t.Parallel()
	st := newSite(t, demosite.Faults{})
	alice := st.as(t, "alice")

	res := alice.get("/compose")
	require.Equal(t, http.StatusOK, res.Status)
	require.Contains(t, res.Body, `<form id="compose-form" method="post" action="/posts">`)
	require.Contains(t, res.Body, `<textarea id="compose-text" name="text"`)
	require.Contains(t, res.Body, `<span id="compose-count">0</span>`)
	require.Contains(t, res.Body, `id="compose-submit"`)

	text := "hello <b>world</b> & \"friends\"\r\nsecond line "
	stored := "hello <b>world</b> & \"friends\"\nsecond line "
	res = alice.compose(text)
	require.Equal(t, http.StatusSeeOther, res.Status)
	require.Equal(t, "/p/1", res.Location())

	want := demosite.Effect{Seq: 1, Kind: demosite.EffectPost, Author: "alice", PostID: 1, Text: stored, At: t0.Truncate(time.Millisecond)}
	require.Equal(t, []demosite.Effect{want}, st.Effects())

	res = alice.get("/p/1")
	require.Equal(t, http.StatusOK, res.Status)
	as := articles(res.Body)
	require.Len(t, as, 1)
	require.Equal(t, article{ID: "1", Author: "alice", Parent: "", IsMain: true, Text: stored, Datetime: "2026-11-30T10:00:00.123Z", Raw: as[0].Raw}, as[0])
	require.Contains(t, as[0].Raw, `<a class="author" href="/u/alice">@alice</a>`)
	require.Contains(t, as[0].Raw, `<a class="permalink" href="/p/1">`)
	require.NotContains(t, res.Body, "<b>world</b>", "text must be escaped")

	for _, path := range []string{"/u/alice", "/home"} {
		res = alice.get(path)
		require.Equal(t, http.StatusOK, res.Status, path)
		as = articles(res.Body)
		require.Len(t, as, 1, path)
		require.False(t, as[0].IsMain)
		require.Equal(t, stored, as[0].Text, path)
	}
	// Public pages show no identity to a visitor who is not signed in.
	res = st.client(t).get("/u/alice")
	require.Equal(t, http.StatusOK, res.Status)
	require.Empty(t, whoami(t, res.Body))
	require.Len(t, articles(res.Body), 1)
}

func TestComposeErrors(t *testing.T) {
	t.Parallel()
	st := newSite(t, demosite.Faults{})
	alice := st.as(t, "alice")

	for name, text := range map[string]string{
		"Empty":       "",
		"Whitespace":  " \r\n\t ",
		"TooLong":     strings.Repeat("é", demosite.MaxTextRunes+1),
		"InvalidUTF8": "bad \xff byte",
	} {
		res := alice.compose(text)
		require.Equal(t, http.StatusBadRequest, res.Status, name)
		require.Contains(t, res.Body, `<div id="form-error" class="error" role="alert">`, name)
		require.Contains(t, res.Body, `id="compose-form"`, name)
	}
	res := alice.post("/p/1/reply", url.Values{"text": {"x"}})
	require.Equal(t, http.StatusNotFound, res.Status)
	require.Empty(t, st.Effects())

	res = alice.compose(strings.Repeat("é", demosite.MaxTextRunes))
	require.Equal(t, http.StatusSeeOther, res.Status)
	require.Len(t, st.Effects(), 1)

	// Signed out: a mutation sends to login and commits nothing.
	res = st.client(t).compose("anonymous")
	require.Equal(t, http.StatusSeeOther, res.Status)
	require.Equal(t, "/login?next=%2Fcompose", res.Location())
	require.Len(t, st.Effects(), 1)

	require.Equal(t, http.StatusNotFound, alice.get("/p/999").Status)
	require.Equal(t, http.StatusNotFound, alice.get("/p/abc").Status)
	require.Equal(t, http.StatusNotFound, alice.get("/u/nobody").Status)
	require.Contains(t, alice.get("/p/999").Body, `<h1 id="not-found">`)
}

func TestPagination(t *testing.T) {
	t.Parallel()
	st := newSite(t, demosite.Faults{})
	alice := st.as(t, "alice")
	for i := 1; i <= 25; i++ {
		require.Equal(t, http.StatusSeeOther, alice.compose(fmt.Sprintf("post %d", i)).Status)
		st.Clock.Advance(time.Second)
	}
	require.Len(t, st.Effects(), 25)

	page1 := alice.get("/u/alice")
	require.Equal(t, http.StatusOK, page1.Status)
	as := articles(page1.Body)
	require.Len(t, as, 20)
	require.Equal(t, "25", as[0].ID, "newest first")
	require.Equal(t, "post 6", as[19].Text)
	require.Equal(t, []string{`<section id="timeline" data-complete="false"`, "false"}, completeRE.FindStringSubmatch(page1.Body))
	next := nextPageRE.FindStringSubmatch(page1.Body)
	require.NotNil(t, next)
	require.Equal(t, "/u/alice?page=2", next[1])
	require.NotContains(t, page1.Body, `id="prev-page"`)

	page2 := alice.get(next[1])
	as = articles(page2.Body)
	require.Len(t, as, 5)
	require.Equal(t, "post 5", as[0].Text)
	require.Equal(t, "post 1", as[4].Text)
	require.Equal(t, "true", completeRE.FindStringSubmatch(page2.Body)[1])
	require.NotContains(t, page2.Body, `id="next-page"`)
	require.Contains(t, page2.Body, `<a id="prev-page" href="/u/alice?page=1">`)

	page3 := alice.get("/u/alice?page=3")
	require.Equal(t, http.StatusOK, page3.Status)
	require.Empty(t, articles(page3.Body))
	require.Equal(t, "true", completeRE.FindStringSubmatch(page3.Body)[1])

	require.Equal(t, http.StatusBadRequest, alice.get("/u/alice?page=0").Status)
	require.Equal(t, http.StatusBadRequest, alice.get("/home?page=x").Status)

	// The home timeline pages the same way.
	home := alice.get("/home?page=2")
	require.Len(t, articles(home.Body), 5)
	require.Equal(t, "true", completeRE.FindStringSubmatch(home.Body)[1])

	// Another account's timeline is empty and complete.
	bob := alice.get("/u/bob")
	require.Empty(t, articles(bob.Body))
	require.Equal(t, "true", completeRE.FindStringSubmatch(bob.Body)[1])
}

func TestReply(t *testing.T) {
	t.Parallel()
	st := newSite(t, demosite.Faults{})
	alice, bob := st.as(t, "alice"), st.as(t, "bob")
	require.Equal(t, "/p/1", alice.compose("root").Location())

	res := alice.get("/p/1")
	require.Contains(t, res.Body, `<form id="reply-form" method="post" action="/p/1/reply">`)
	require.Contains(t, res.Body, `<textarea id="reply-text" name="text"`)
	require.Contains(t, res.Body, `id="reply-submit"`)
	require.NotContains(t, st.client(t).get("/p/1").Body, `id="reply-form"`, "no reply form when signed out")

	st.Clock.Advance(time.Second)
	res = bob.post("/p/1/reply", url.Values{"text": {"first reply"}})
	require.Equal(t, http.StatusSeeOther, res.Status)
	require.Equal(t, "/p/2", res.Location())
	st.Clock.Advance(time.Second)
	require.Equal(t, "/p/3", alice.post("/p/1/reply", url.Values{"text": {"thread part 2"}}).Location())
	st.Clock.Advance(time.Second)
	require.Equal(t, "/p/4", alice.post("/p/3/reply", url.Values{"text": {"thread part 3"}}).Location())

	effects := st.Effects()
	require.Len(t, effects, 4)
	require.Equal(t, demosite.Effect{Seq: 2, Kind: demosite.EffectReply, Author: "bob", PostID: 2, ParentID: 1, Text: "first reply", At: t0.Add(time.Second).Truncate(time.Millisecond)}, effects[1])
	require.Equal(t, int64(3), effects[3].ParentID)

	replies := articles(section(t, alice.get("/p/1").Body, `<section id="replies">`, `</section>`))
	require.Len(t, replies, 2)
	require.Equal(t, []string{"2", "bob", "1", "first reply"}, []string{replies[0].ID, replies[0].Author, replies[0].Parent, replies[0].Text})
	require.Equal(t, []string{"3", "alice", "1"}, []string{replies[1].ID, replies[1].Author, replies[1].Parent}, "oldest first")

	res = alice.get("/p/4")
	as := articles(res.Body)
	require.True(t, as[0].IsMain)
	require.Equal(t, "3", as[0].Parent)
	require.Contains(t, res.Body, `<a id="parent-link" href="/p/3">`)

	// Replies are on the author's profile timeline too.
	profile := articles(alice.get("/u/alice").Body)
	require.Len(t, profile, 3)
	require.Equal(t, "3", profile[0].Parent)

	require.Equal(t, http.StatusBadRequest, bob.post("/p/1/reply", url.Values{"text": {""}}).Status)
	require.Equal(t, http.StatusNotFound, bob.post("/p/99/reply", url.Values{"text": {"x"}}).Status)
	res = st.client(t).post("/p/1/reply", url.Values{"text": {"x"}})
	require.Equal(t, "/login?next=%2Fp%2F1", res.Location())
	require.Len(t, st.Effects(), 4)
}

func TestLike(t *testing.T) {
	t.Parallel()
	st := newSite(t, demosite.Faults{})
	alice, bob := st.as(t, "alice"), st.as(t, "bob")
	alice.compose("like me")

	res := bob.get("/p/1")
	require.Contains(t, res.Body, `<form id="like-form" method="post" action="/p/1/like"><button id="like-button" type="submit" data-state="like">Like</button></form>`)
	require.Contains(t, res.Body, `<span id="like-count">0</span>`)

	res = bob.post("/p/1/like", nil)
	require.Equal(t, http.StatusSeeOther, res.Status)
	require.Equal(t, "/p/1", res.Location())
	res = bob.get("/p/1")
	require.Contains(t, res.Body, `<form id="like-form" method="post" action="/p/1/unlike"><button id="like-button" type="submit" data-state="liked">Liked</button></form>`)
	require.Contains(t, res.Body, `<span id="like-count">1</span>`)
	require.Contains(t, alice.get("/p/1").Body, `data-state="like"`, "alice has not liked it")

	require.Equal(t, http.StatusSeeOther, bob.post("/p/1/like", nil).Status)
	require.Contains(t, bob.get("/p/1").Body, `<span id="like-count">1</span>`)
	require.Len(t, st.Effects(), 2, "a second like changes nothing and records nothing")

	require.Equal(t, http.StatusSeeOther, bob.post("/p/1/unlike", nil).Status)
	require.Equal(t, http.StatusSeeOther, bob.post("/p/1/unlike", nil).Status)
	effects := st.Effects()
	require.Len(t, effects, 3)
	require.Equal(t, demosite.Effect{Seq: 2, Kind: demosite.EffectLike, Author: "bob", PostID: 1, Target: "1", At: t0.Truncate(time.Millisecond)}, effects[1])
	require.Equal(t, demosite.EffectUnlike, effects[2].Kind)
	require.Contains(t, bob.get("/p/1").Body, `<span id="like-count">0</span>`)

	require.Equal(t, http.StatusNotFound, bob.post("/p/42/like", nil).Status)
	require.Equal(t, "/login?next=%2Fp%2F1", st.client(t).post("/p/1/like", nil).Location())
	require.Len(t, st.Effects(), 3)
}

func TestFollow(t *testing.T) {
	t.Parallel()
	st := newSite(t, demosite.Faults{})
	alice := st.as(t, "alice")
	st.SeedPost("carol", "carol was here", t0.Add(-time.Hour))

	res := alice.get("/u/carol")
	require.Contains(t, res.Body, `<form id="follow-form" method="post" action="/u/carol/follow"><button id="follow-button" type="submit" data-state="follow">Follow</button></form>`)
	require.NotContains(t, alice.get("/u/alice").Body, `id="follow-button"`, "no follow button on your own profile")
	require.NotContains(t, st.client(t).get("/u/carol").Body, `id="follow-button"`, "no follow button when signed out")
	require.Empty(t, articles(alice.get("/home").Body), "home shows only followed accounts")

	res = alice.post("/u/carol/follow", nil)
	require.Equal(t, http.StatusSeeOther, res.Status)
	require.Equal(t, "/u/carol", res.Location())
	require.Contains(t, alice.get("/u/carol").Body, `<form id="follow-form" method="post" action="/u/carol/unfollow"><button id="follow-button" type="submit" data-state="following">Following</button></form>`)
	home := articles(alice.get("/home").Body)
	require.Len(t, home, 1)
	require.Equal(t, "carol", home[0].Author)

	alice.post("/u/carol/follow", nil)
	require.Len(t, st.Effects(), 1, "following twice records one effect")
	alice.post("/u/carol/unfollow", nil)
	alice.post("/u/carol/unfollow", nil)
	effects := st.Effects()
	require.Len(t, effects, 2)
	require.Equal(t, demosite.Effect{Seq: 1, Kind: demosite.EffectFollow, Author: "alice", Target: "carol", At: t0.Truncate(time.Millisecond)}, effects[0])
	require.Equal(t, demosite.Effect{Seq: 2, Kind: demosite.EffectUnfollow, Author: "alice", Target: "carol", At: t0.Truncate(time.Millisecond)}, effects[1])

	require.Equal(t, http.StatusBadRequest, alice.post("/u/alice/follow", nil).Status)
	require.Equal(t, http.StatusNotFound, alice.post("/u/zed/follow", nil).Status)
	require.Equal(t, "/login?next=%2Fu%2Fcarol", st.client(t).post("/u/carol/follow", nil).Location())
	require.Len(t, st.Effects(), 2)
}

func TestSeedPost(t *testing.T) {
	t.Parallel()
	st := newSite(t, demosite.Faults{})
	alice := st.as(t, "alice")
	older := t0.Add(-24 * time.Hour)
	seeded := st.SeedPost("alice", "same words", older)
	require.Equal(t, int64(1), seeded)
	require.Empty(t, st.Effects(), "seeded posts are not effects")

	alice.compose("same words")
	effects := st.Effects()
	require.Len(t, effects, 1)
	require.Equal(t, int64(2), effects[0].PostID)

	as := articles(alice.get("/u/alice").Body)
	require.Len(t, as, 2)
	require.Equal(t, []string{"2", "1"}, []string{as[0].ID, as[1].ID})
	require.Equal(t, "2026-11-29T10:00:00.123Z", as[1].Datetime)
	require.Equal(t, as[0].Text, as[1].Text)

	reply := st.SeedReply("bob", seeded, "seeded reply", time.Time{})
	require.Len(t, articles(section(t, alice.get("/p/1").Body, `<section id="replies">`, `</section>`)), 1)
	require.Equal(t, int64(3), reply)
	require.Len(t, st.Effects(), 1)

	require.Panics(t, func() { st.SeedPost("zed", "x", time.Time{}) })
	require.Panics(t, func() { st.SeedReply("bob", 99, "x", time.Time{}) })
	require.Panics(t, func() { st.Login("zed") })
}

func TestReset(t *testing.T) {
	t.Parallel()
	st := newSite(t, demosite.Faults{Injection: true})
	alice := st.as(t, "alice")
	alice.compose("before")
	alice.post("/u/bob/follow", nil)
	require.NoError(t, st.SetFaults(demosite.Faults{Captcha: true}))

	st.Reset()
	require.Empty(t, st.Effects())
	require.Equal(t, demosite.Faults{Injection: true}, st.Faults(), "faults return to Options")
	require.Equal(t, http.StatusNotFound, alice.get("/p/1").Status)

	res := alice.get("/u/bob")
	require.Equal(t, "alice", whoami(t, res.Body), "sessions survive reset")
	require.Contains(t, res.Body, `data-state="follow"`)

	require.Equal(t, "/p/2", alice.compose("after").Location(), "ids are never reused")
	require.Equal(t, 1, st.Effects()[0].Seq)
}

func TestConcurrentPosts(t *testing.T) {
	t.Parallel()
	st := newSite(t, demosite.Faults{})
	const n = 20
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		c := st.as(t, demosite.Accounts()[i%3])
		req := c.postReq(t.Context(), "/posts", url.Values{"text": {"post " + strconv.Itoa(i)}})
		wg.Go(func() {
			res, err := c.do(req)
			if err == nil && res.Status != http.StatusSeeOther {
				err = fmt.Errorf("status %d", res.Status)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	effects := st.Effects()
	require.Len(t, effects, n)
	ids := map[int64]bool{}
	for i, e := range effects {
		require.Equal(t, i+1, e.Seq)
		ids[e.PostID] = true
	}
	require.Len(t, ids, n)
}

func TestStartClose(t *testing.T) {
	t.Parallel()
	s := demosite.New(demosite.Options{})
	base, err := s.Start("127.0.0.1:0")
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(base, "http://127.0.0.1:"), "got %v", base)

	res, err := http.Get(base + "/login")
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.NoError(t, res.Body.Close())

	// Without Options.Oracle the oracle is not there.
	res, err = http.Get(base + "/_oracle/effects")
	require.NoError(t, err)
	require.Equal(t, http.StatusNotFound, res.StatusCode)
	require.NoError(t, res.Body.Close())

	_, err = s.Start("127.0.0.1:0")
	require.ErrorIs(t, err, demosite.ErrStarted)
	require.NoError(t, s.Close())
	require.NoError(t, s.Close())
	_, err = s.Start("127.0.0.1:0")
	require.ErrorIs(t, err, demosite.ErrClosed)
	_, err = http.Get(base + "/login")
	require.Error(t, err)

	require.NoError(t, demosite.New(demosite.Options{}).Close(), "Close without Start")
}
