package sites_test

import (
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/sites"
)

// TestStepThatSendsIsSeen: while an action is prepared, before its
// committing click, a step the adapter declares may itself send the
// submission (a key pressed in a box that sends on Enter, a click on a
// sending control). What could carry it is watched from the first step:
// Fill returns ErrSentBeforeClick (never a definitive failure, even when a
// step failed after the send), and Submit, when something was sent after
// Fill returned, sends no click and returns an unknown outcome. A form a
// step posts on a site whose submission is a named request (a preview) is
// no such sign.
func TestStepThatSendsIsSeen(t *testing.T) {
	page := func(extra string) string {
		return composePage(`<input id="tag"><button id="next">Next</button>
<form method="post" action="/post"><button id="formgo" type="submit">Send form</button></form>
<form method="post" action="/preview-form" onsubmit="this.text.value = document.getElementById('t').value"><input type="hidden" name="text"><button id="preview" type="submit">Preview</button></form>`,
			`send().then(show);`) + `<script>` + extra + `</script>`
	}
	pages := map[string]string{
		"/enter":   page(`document.getElementById('tag').addEventListener('keydown', e => { if (e.key === 'Enter') send(); });`),
		"/next":    page(`document.getElementById('next').addEventListener('click', () => send().then(show));`),
		"/late":    page(`document.getElementById('next').addEventListener('click', () => setTimeout(() => send(), 600));`),
		"/quiet":   page(`document.getElementById('next').addEventListener('click', () => { const i = document.createElement('i'); i.id = 'shown'; i.textContent = 'shown'; document.body.appendChild(i); });`),
		"/preview": page(``),
	}
	for _, tc := range []struct {
		name, page, action string
		// fillSent: Fill returns ErrSentBeforeClick; submitSent: Submit
		// sends no click and says why; else Submit clicks.
		fillSent, submitSent bool
		posts                int64
		why                  string
	}{
		{name: "EnterInABox", page: "/enter", action: landResponse + "\n    steps:\n      - {type: \"input#tag\", value: \"news\", key: Enter}",
			fillSent: true, posts: 1, why: "1 request(s) the landing's response names were sent (the first to " + "%s/api/post)"},
		{name: "ClickThatSendsThenAFailedWait", page: "/next", action: "    landed: {selector: \"#toast\"}\n    steps:\n      - {click: \"button#next\", wait: \"#never\", timeout: 1s}",
			fillSent: true, posts: 1, why: "1 new element(s) matching the landing's \"#toast\" appeared; then: "},
		{name: "FormPostedOnANavigationSite", page: "/next", action: "    steps:\n      - {click: \"button#formgo\", wait: \"#never\", timeout: 1s}",
			fillSent: true, posts: 1, why: "1 form(s) were posted (the first to %s/post)"},
		{name: "SentAfterFillReturned", page: "/late", action: landResponse + "\n    steps:\n      - {click: \"button#next\"}",
			submitSent: true, posts: 1, why: "1 request(s) the landing's response names were sent"},
		{name: "PreviewOnARequestSite", page: "/preview", action: landResponse + "\n    steps:\n      - {click: \"button#preview\"}",
			posts: 1},
		{name: "QuietStep", page: "/quiet", action: "    landed: {selector: \"#toast\"}\n    steps:\n      - {click: \"button#next\", wait: \"#shown\"}",
			posts: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var posts atomic.Int64
			mux := http.NewServeMux()
			for path, html := range pages {
				mux.HandleFunc("GET "+path, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, html) })
			}
			// A preview answers with the composer again, as a wiki's does.
			mux.HandleFunc("POST /preview-form", func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, strings.Replace(pages["/preview"], `<textarea id="t"></textarea>`, `<textarea id="t">`+html.EscapeString(r.FormValue("text"))+`</textarea>`, 1))
			})
			count := func(w http.ResponseWriter, r *http.Request) {
				posts.Add(1)
				w.WriteHeader(http.StatusCreated)
				io.WriteString(w, "{}")
			}
			mux.HandleFunc("POST /post", count)
			mux.HandleFunc("POST /api/post", count)
			srv := httptest.NewServer(mux)
			t.Cleanup(srv.Close)
			d := miniSite(t, miniYAML(srv.URL, tc.page, tc.action, ""))
			ctx, tab := miniTab(t)
			in := sites.Intent{Kind: kind.Post, Actor: "alice", Text: "prepared once"}
			_, err := d.Open(ctx, tab, in)
			require.NoError(t, err)
			_, err = d.Fill(ctx, tab, in)
			if tc.fillSent {
				require.ErrorIs(t, err, sites.ErrSentBeforeClick)
				require.NotErrorIs(t, err, sites.ErrStepFailed, "no definitive failure")
				require.ErrorContains(t, err, strings.Replace(tc.why, "%s", srv.URL, 1))
				// The request the watch saw reaches the server a moment later.
				require.Eventually(t, func() bool { return posts.Load() == tc.posts }, 5*time.Second, 20*time.Millisecond)
				return
			}
			require.NoError(t, err)
			if tc.submitSent {
				time.Sleep(time.Second) // the page's late send
			}
			err = d.Submit(ctx, tab, in)
			if tc.submitSent {
				require.ErrorIs(t, err, sites.ErrOutcomeUnknown)
				require.ErrorIs(t, err, sites.ErrSentBeforeClick)
				require.ErrorContains(t, err, tc.why)
				require.ErrorContains(t, err, "the committing click was not sent")
			} else {
				require.NoError(t, err)
			}
			require.EqualValues(t, tc.posts, posts.Load(), "one request: the step's or the click's")
		})
	}
}
