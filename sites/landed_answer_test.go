package sites_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/sites"
)

// TestLandedResponseAnswer: an editor that autosaves and publishes with
// the same request (same method, URL and body) on the click. Only the
// site's answers tell them apart, and landed.response.answer names the
// publish's: its answer is the landing, the autosave's is not. Both are
// requests of the submission all the same: a refusal that answers one of
// them proves nothing.
func TestLandedResponseAnswer(t *testing.T) {
	put := func(kind string) string {
		return `fetch('/api/post', {method: 'POST', headers: {'X-Kind': '` + kind + `'}, body: document.getElementById('t').value})`
	}
	page := composePage("", put("autosave")+`.then(() => `+put("publish")+`).then(show);`)
	serve := func(t *testing.T, autosave, publish int, publishAnswer string) (*httptest.Server, *atomic.Int64) {
		var posts atomic.Int64
		mux := http.NewServeMux()
		mux.HandleFunc("GET /editor", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, page) })
		mux.HandleFunc("POST /api/post", func(w http.ResponseWriter, r *http.Request) {
			posts.Add(1)
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			if r.Header.Get("X-Kind") == "autosave" {
				w.WriteHeader(autosave)
				io.WriteString(w, `{"id":7,"status":"draft"}`)
				return
			}
			w.WriteHeader(publish)
			io.WriteString(w, publishAnswer)
		})
		srv := httptest.NewServer(mux)
		t.Cleanup(srv.Close)
		return srv, &posts
	}
	withAnswer := "    landed: {response: {method: POST, url: '/api/post$', answer: '\"status\":\"publish\"'}}"
	refusals := "refusals:\n  - kind: validation\n    status: 409\n    message: \"p.error\"\n"

	t.Run("the publish answers", func(t *testing.T) {
		srv, posts := serve(t, http.StatusInternalServerError, http.StatusCreated, `{"id":7,"status":"publish"}`)
		for _, tc := range []struct {
			landed string
			ok     bool
		}{{withAnswer, true}, {landResponse, false}} {
			d := miniSite(t, miniYAML(srv.URL, "/editor", tc.landed, ""))
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
	t.Run("a draft's answer is no landing", func(t *testing.T) {
		// The site saved a draft, and answered the publish with another
		// draft: nothing says it published.
		srv, _ := serve(t, http.StatusOK, http.StatusOK, `{"id":7,"status":"draft"}`)
		d := miniSite(t, miniYAML(srv.URL, "/editor", withAnswer, ""))
		ctx, tab := miniTab(t)
		tab.SetActionTimeout(2 * time.Second)
		err := submitOnce(t, ctx, tab, d, "publish this")
		require.ErrorIs(t, err, sites.ErrOutcomeUnknown)
	})
	t.Run("a refusal answers one of two", func(t *testing.T) {
		srv, posts := serve(t, http.StatusOK, http.StatusConflict, `{"status":"publish","code":"duplicate"}`)
		d := miniSite(t, miniYAML(srv.URL, "/editor", withAnswer, refusals))
		ctx, tab := miniTab(t)
		err := submitOnce(t, ctx, tab, d, "publish this")
		require.Eventually(t, func() bool { return posts.Load() == 2 }, 5*time.Second, 20*time.Millisecond)
		ref := sites.AsRefusal(err)
		require.NotNil(t, ref, "%v", err)
		require.ErrorIs(t, err, sites.ErrOutcomeUnknown, "the answer pattern does not make the autosave no request")
		require.Equal(t, "2 requests of the submission were seen", ref.Doubt)
	})
}

// landed.response.answer is a regular expression, checked at load.
func TestLandedResponseAnswerAtLoad(t *testing.T) {
	_, err := sites.Parse("mini.yaml", []byte(miniYAML("http://127.0.0.1:8787", "/editor",
		"    landed: {response: {method: PUT, url: '/posts/\\d+$', answer: '('}}", "")))
	require.ErrorIs(t, err, sites.ErrInvalid)
	require.ErrorContains(t, err, "mini.yaml: actions.post.landed.response.answer: not a regular expression")
}
