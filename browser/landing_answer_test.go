package browser_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/browser"
)

// editorHTML is an editor that autosaves and publishes with the same
// request: PUT /wp/posts/7 with the same body. Only the site's answers
// tell them apart: a draft's says "status":"draft", the publish's
// "status":"publish".
const editorHTML = `<!doctype html><body>
<button id="publish">Publish</button>
<button id="autosave">Autosave only</button>
<button id="publish-huge">Publish, answered at length</button>
<script>
const put = kind => fetch('/wp/posts/7', {method: 'PUT', headers: {'Content-Type': 'application/json', 'X-Kind': kind}, body: '{"title":"t","content":"c"}'});
const on = (id, f) => document.getElementById(id).addEventListener('click', f);
on('publish', () => put('autosave').then(() => put('publish')));
on('autosave', () => put('autosave'));
on('publish-huge', () => put('autosave').then(() => put('huge')));
</script></body>`

// editorSite serves editorHTML and answers its PUTs; puts counts them.
func editorSite(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var puts atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("GET /editor", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, editorHTML) })
	mux.HandleFunc("PUT /wp/posts/7", func(w http.ResponseWriter, r *http.Request) {
		puts.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		switch r.Header.Get("X-Kind") {
		case "publish":
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, `{"id":7,"status":"publish","link":"/p/7"}`)
		case "huge":
			// More than the answer bound: never read, never a match.
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, `{"id":7,"status":"publish","content":"`+strings.Repeat("x", 1<<20+1)+`"}`)
		default:
			io.WriteString(w, `{"id":7,"status":"draft"}`)
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, &puts
}

// TestLandingByAnswer: publishing and autosaving send the same request;
// ResponseMatch.Answer takes only the answer whose body matches for the
// landing. An autosave's answer is not the landing (the wait goes on),
// nor is an answer too long to read; and every request of the method and
// URL still counts as one of the submission's.
func TestLandingByAnswer(t *testing.T) {
	srv, puts := editorSite(t)
	_, tab := newTab(t, "")
	ctx := ctxT(t)
	url := regexp.MustCompile(`/wp/posts/7$`)
	published := &browser.ResponseMatch{Method: "PUT", URL: url, Answer: regexp.MustCompile(`"status":"publish"`)}
	open := func(t *testing.T) {
		t.Helper()
		_, err := tab.Navigate(ctx, srv.URL+"/editor")
		require.NoError(t, err)
		puts.Store(0)
	}

	t.Run("ThePublishAnswerLands", func(t *testing.T) {
		open(t)
		got, err := tab.ClickOnceAndLand(ctx, "#publish", browser.LandingSigns{Response: published})
		require.NoError(t, err)
		require.Equal(t, browser.LandedResponse, got.By)
		require.Equal(t, http.StatusCreated, got.Status, "the publish's answer, not the autosave's")
		require.Equal(t, srv.URL+"/wp/posts/7", got.ResponseURL)
		require.True(t, got.Answer.Counted)
		require.Equal(t, 2, got.Requests, "the autosave is a request of the submission too")
		require.Equal(t, "2 requests of the submission were seen", got.Doubt(tab.SubmissionRequests()))
		require.EqualValues(t, 2, puts.Load())
	})
	t.Run("WithoutAnswerTheAutosaveLands", func(t *testing.T) {
		// The same page without the answer's pattern: the first answer,
		// the autosave's, ends the wait.
		open(t)
		got, err := tab.ClickOnceAndLand(ctx, "#publish", browser.LandingSigns{Response: &browser.ResponseMatch{Method: "PUT", URL: url}})
		require.NoError(t, err)
		require.Equal(t, browser.LandedResponse, got.By)
		require.Equal(t, http.StatusOK, got.Status, "the draft's answer")
		require.Eventually(t, func() bool { return puts.Load() == 2 }, 5*time.Second, 20*time.Millisecond)
	})
	t.Run("AnAutosaveIsNoLanding", func(t *testing.T) {
		open(t)
		tab.SetActionTimeout(1500 * time.Millisecond)
		_, err := tab.ClickOnceAndLand(ctx, "#autosave", browser.LandingSigns{Response: published})
		tab.SetActionTimeout(0)
		require.ErrorIs(t, err, browser.ErrOutcomeUnknown)
		require.ErrorIs(t, err, browser.ErrTimeout, "the draft's answer did not end the wait")
		require.Equal(t, 1, tab.SubmissionRequests(), "counted all the same")
		require.EqualValues(t, 1, puts.Load())
	})
	t.Run("AnUnreadAnswerIsNoMatch", func(t *testing.T) {
		// The publish's answer says "status":"publish", but is longer
		// than any answer browserop reads.
		open(t)
		tab.SetActionTimeout(2 * time.Second)
		_, err := tab.ClickOnceAndLand(ctx, "#publish-huge", browser.LandingSigns{Response: published})
		tab.SetActionTimeout(0)
		require.ErrorIs(t, err, browser.ErrOutcomeUnknown)
		require.ErrorIs(t, err, browser.ErrTimeout)
		require.Equal(t, 2, tab.SubmissionRequests())
	})
}
