package demosite_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/browserop/browserop/demosite"
	"github.com/stretchr/testify/require"
)

// publishReq is POST /api/posts as the rich composer sends it.
func (c *client) publishReq(ctx context.Context, contentType, body string) *http.Request {
	c.tb.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/api/posts", strings.NewReader(body))
	require.NoError(c.tb, err)
	req.Header.Set("Content-Type", contentType)
	return req
}

func (c *client) publish(title, body string) response {
	c.tb.Helper()
	b, err := json.Marshal(map[string]string{"title": title, "body": body})
	require.NoError(c.tb, err)
	res, err := c.do(c.publishReq(context.Background(), "application/json", string(b)))
	require.NoError(c.tb, err)
	return res
}

// apiAnswer decodes an answer of the API.
func apiAnswer(tb testing.TB, res response) (id int64, link, problem string) {
	tb.Helper()
	require.Equal(tb, "application/json", res.Header.Get("Content-Type"))
	var v struct {
		ID    int64  `json:"id"`
		URL   string `json:"url"`
		Error string `json:"error"`
	}
	require.NoError(tb, json.Unmarshal([]byte(res.Body), &v))
	return v.ID, v.URL, v.Error
}

// TestAPIPost: the JSON API commits title + "\n" + body as a post like any
// other (timeline, permalink, effect), and answers JSON.
func TestAPIPost(t *testing.T) {
	t.Parallel()
	st := newSite(t, demosite.Faults{})
	alice := st.as(t, "alice")

	res := alice.publish("Hello", "line one\r\nline two")
	require.Equal(t, http.StatusCreated, res.Status)
	id, link, _ := apiAnswer(t, res)
	require.EqualValues(t, 1, id)
	require.Equal(t, "/p/1", link)
	require.Equal(t, "/p/1", res.Location())

	stored := "Hello\nline one\nline two"
	want := demosite.Effect{Seq: 1, Kind: demosite.EffectPost, Author: "alice", PostID: 1, Text: stored, At: t0.Truncate(time.Millisecond)}
	require.Equal(t, []demosite.Effect{want}, st.Effects())
	for _, path := range []string{"/p/1", "/u/alice", "/home"} {
		as := articles(alice.get(path).Body)
		require.Len(t, as, 1, path)
		require.Equal(t, stored, as[0].Text, path)
		require.Equal(t, "alice", as[0].Author, path)
	}

	t.Run("Refused", func(t *testing.T) {
		for name, c := range map[string]struct {
			client      *client
			contentType string
			body        string
			status      int
		}{
			"SignedOut":    {st.client(t), "application/json", `{"title":"a","body":"b"}`, http.StatusUnauthorized},
			"Form":         {alice, "application/x-www-form-urlencoded", url.Values{"title": {"a"}}.Encode(), http.StatusUnsupportedMediaType},
			"Blank":        {alice, "application/json", `{"title":" ","body":"\n"}`, http.StatusBadRequest},
			"TooLong":      {alice, "application/json", `{"title":"a","body":"` + strings.Repeat("é", demosite.MaxTextRunes) + `"}`, http.StatusBadRequest},
			"UnknownField": {alice, "application/json", `{"title":"a","body":"b","draft":true}`, http.StatusBadRequest},
			"NotJSON":      {alice, "application/json", `title=a`, http.StatusBadRequest},
		} {
			res, err := c.client.do(c.client.publishReq(context.Background(), c.contentType, c.body))
			require.NoError(t, err, name)
			require.Equal(t, c.status, res.Status, name)
			_, _, problem := apiAnswer(t, res)
			require.NotEmpty(t, problem, name)
		}
		require.Len(t, st.Effects(), 1, "nothing more committed")
	})
}

// TestAPIDuplicates: with refuse_duplicates the same text by the same
// account within DuplicateWindow is 409 and commits nothing; without it,
// or later, or by another account, it is a new post.
func TestAPIDuplicates(t *testing.T) {
	t.Parallel()
	st := newSite(t, demosite.Faults{})
	alice, bob := st.as(t, "alice"), st.as(t, "bob")

	require.Equal(t, http.StatusCreated, alice.publish("same", "text").Status)
	require.Equal(t, http.StatusCreated, alice.publish("same", "text").Status, "the switch is off")

	require.NoError(t, st.SetFaults(demosite.Faults{RefuseDuplicates: true}))
	res := alice.publish("same", "text")
	require.Equal(t, http.StatusConflict, res.Status)
	_, _, problem := apiAnswer(t, res)
	require.Contains(t, problem, "already posted")
	require.Len(t, st.Effects(), 2)

	require.Equal(t, http.StatusCreated, bob.publish("same", "text").Status, "another account")
	require.Equal(t, http.StatusCreated, alice.publish("same", "text!").Status, "another text")

	// A seeded post counts, within the window only.
	st.SeedPost("alice", "seeded\ntext", t0.Add(-demosite.DuplicateWindow))
	require.Equal(t, http.StatusConflict, alice.publish("seeded", "text").Status)
	st.Clock.Advance(demosite.DuplicateWindow)
	require.Equal(t, http.StatusCreated, alice.publish("seeded", "text").Status)
	require.Equal(t, http.StatusConflict, alice.publish("seeded", "text").Status, "the one just posted")
	require.Len(t, st.Effects(), 5)

	// Forms are not affected.
	require.Equal(t, http.StatusSeeOther, alice.compose("seeded\ntext").Status)
}

// TestAPIFaults: blockers answer the API in JSON with the page's status and
// commit nothing; the after-commit faults commit and then fail the answer.
func TestAPIFaults(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		faults demosite.Faults
		status int
	}{
		"SessionExpired": {demosite.Faults{SessionExpired: true}, http.StatusUnauthorized},
		"Captcha":        {demosite.Faults{Captcha: true}, http.StatusForbidden},
		"Restricted":     {demosite.Faults{Restricted: true}, http.StatusForbidden},
		"RateLimit":      {demosite.Faults{RateLimit: true}, http.StatusTooManyRequests},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st := newSite(t, c.faults)
			res := st.as(t, "alice").publish("a", "b")
			require.Equal(t, c.status, res.Status)
			_, _, problem := apiAnswer(t, res)
			require.NotEmpty(t, problem)
			if c.status == http.StatusTooManyRequests {
				require.Equal(t, "60", res.Header.Get("Retry-After"))
			}
			require.Empty(t, st.Effects())
		})
	}
	t.Run("Error500AfterCommit", func(t *testing.T) {
		t.Parallel()
		st := newSite(t, demosite.Faults{Error500AfterCommit: true})
		res := st.as(t, "alice").publish("a", "b")
		require.Equal(t, http.StatusInternalServerError, res.Status)
		_, _, problem := apiAnswer(t, res)
		require.Contains(t, problem, "may or may not")
		require.Len(t, st.Effects(), 1, "committed")
	})
	t.Run("DropAfterCommit", func(t *testing.T) {
		t.Parallel()
		st := newSite(t, demosite.Faults{DropAfterCommit: true})
		alice := st.as(t, "alice")
		_, err := alice.do(alice.publishReq(context.Background(), "application/json", `{"title":"a","body":"b"}`))
		require.Error(t, err, "no response")
		require.Len(t, st.Effects(), 1, "committed")
	})
	t.Run("HangAfterCommit", func(t *testing.T) {
		t.Parallel()
		st := newSite(t, demosite.Faults{HangAfterCommit: true})
		alice := st.as(t, "alice")
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, err := alice.do(alice.publishReq(ctx, "application/json", `{"title":"a","body":"b"}`))
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.Len(t, st.Effects(), 1, "committed")
	})
	t.Run("OffsiteRedirect", func(t *testing.T) {
		t.Parallel()
		st := newSite(t, demosite.Faults{OffsiteRedirect: "https://evil.example/landing"})
		res := st.as(t, "alice").publish("a", "b")
		require.Equal(t, http.StatusSeeOther, res.Status)
		require.Equal(t, "https://evil.example/landing", res.Location())
		require.Empty(t, st.Effects(), "nothing committed")
	})
}

// TestComposerPages: the rich and frame composers' markup, behind the login
// wall; the frame composer's form posts like /posts, and a refused text
// comes back on its own page.
func TestComposerPages(t *testing.T) {
	t.Parallel()
	st := newSite(t, demosite.Faults{})
	alice := st.as(t, "alice")

	res := st.client(t).get("/compose/rich?panel=off")
	require.Equal(t, http.StatusSeeOther, res.Status)
	require.Equal(t, "/login?next=%2Fcompose%2Frich%3Fpanel%3Doff", res.Location())
	res = st.client(t).get("/compose/frame")
	require.Equal(t, "/login?next=%2Fcompose%2Fframe", res.Location())

	res = alice.get("/compose/rich")
	require.Equal(t, http.StatusOK, res.Status)
	for _, want := range []string{`<h1 id="rich-title" contenteditable="true"`, `<div id="rich-body"`, `<button id="rich-add-block"`,
		`<button id="rich-publish-toggle" type="button" data-panel="on">`, `<div id="rich-panel" role="dialog" aria-label="Publish" hidden>`,
		`<button id="rich-publish"`, `<div id="rich-notices"></div>`} {
		require.Contains(t, res.Body, want)
	}
	require.Equal(t, "alice", whoami(t, res.Body))
	require.Contains(t, alice.get("/compose/rich?panel=off").Body, `data-panel="off"`)

	res = alice.get("/compose/frame")
	require.Equal(t, http.StatusOK, res.Status)
	for _, want := range []string{`<form id="frame-form" method="post" action="/compose/frame">`, `<iframe id="frame-editor"`,
		`<textarea id="frame-text" name="text" hidden>`, `<button id="frame-submit" type="submit">`} {
		require.Contains(t, res.Body, want)
	}
	res = alice.post("/compose/frame", url.Values{"text": {"framed"}})
	require.Equal(t, http.StatusSeeOther, res.Status)
	require.Equal(t, "/p/1", res.Location())
	res = alice.post("/compose/frame", url.Values{"text": {" \n "}})
	require.Equal(t, http.StatusBadRequest, res.Status)
	require.Contains(t, res.Body, `<div id="form-error"`)
	require.Contains(t, res.Body, `id="frame-form"`)
	require.Len(t, st.Effects(), 1)
}
