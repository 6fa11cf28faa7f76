package browser_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/browser/browsertest"
)

var shared *browsertest.Shared

func TestMain(m *testing.M) {
	if dir := os.Getenv(persistentChildEnv); dir != "" {
		// A child process of TestPersistentOutlivesProcess, not a test run.
		os.Exit(persistentChild(dir))
	}
	shared = browsertest.Start()
	code := m.Run()
	if err := shared.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "close shared browser:", err)
	}
	os.Exit(code)
}

// site is the test page server. posts counts the form submissions that
// reached it, which is what "exactly once" is about.
type site struct {
	*httptest.Server
	posts atomic.Int64
}

const pageHTML = `<!doctype html><html><head><title>fixture</title>
<style>#overlay{position:fixed;left:0;top:0;width:100%%;height:100%%;background:rgba(0,0,0,.01);z-index:10;display:%s}</style></head>
<body>
<span id="whoami" data-handle="alice">signed in as @alice</span>
<p class="p">one</p><p class="p">two</p>
<form id="f" method="post" action="/submit">
<textarea id="t" name="text">old text</textarea>
<input id="i" name="i" value="x">
<div id="ce" contenteditable="true">editable</div>
<button id="go" type="submit">Go</button>
</form>
<form method="post" action="/hang"><button id="hang" type="submit">Hang</button></form>
<form method="post" action="/drop"><button id="drop" type="submit">Drop</button></form>
<button class="dup">A</button><button class="dup">B</button>
<button id="hidden" style="display:none">hidden</button>
<div id="overlay"></div>
<article class="post" data-author="alice" data-id="1"><a class="permalink" href="/p/1">x</a><div class="post-text">first</div></article>
<article class="post" data-author="bob" data-id="2"><a class="permalink" href="/p/2">x</a><div class="post-text">second</div><div class="post-text">dup</div></article>
<script>
setTimeout(() => { const d = document.createElement('div'); d.id = 'late'; d.textContent = 'late'; document.body.appendChild(d); }, 300);
</script>
</body></html>`

func newSite(t testing.TB) *site {
	s := &site{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /page", func(w http.ResponseWriter, r *http.Request) {
		overlay := "none"
		if r.URL.Query().Has("covered") {
			overlay = "block"
		}
		fmt.Fprintf(w, pageHTML, overlay)
	})
	mux.HandleFunc("GET /missing", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `<!doctype html><h1 id="nf">not found</h1>`)
	})
	mux.HandleFunc("GET /redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/page", http.StatusFound)
	})
	mux.HandleFunc("GET /evil", func(w http.ResponseWriter, r *http.Request) {
		// A page that rewrites the DOM API of its own world to lie.
		io.WriteString(w, `<!doctype html><span id="whoami" data-handle="alice">@alice</span>
<script>
Document.prototype.querySelectorAll = function(){ return []; };
Element.prototype.getAttribute = function(){ return 'mallory'; };
Object.defineProperty(Node.prototype, 'textContent', {get(){ return 'lies'; }});
</script>`)
	})
	mux.HandleFunc("GET /append", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `<!doctype html><textarea id="t"></textarea>
<script>
const t = document.getElementById('t');
t.addEventListener('input', () => { if (!t.value.startsWith('DRAFT ')) t.value = 'DRAFT ' + t.value; });
</script>`)
	})
	mux.HandleFunc("POST /submit", func(w http.ResponseWriter, r *http.Request) {
		s.posts.Add(1)
		http.Redirect(w, r, "/done?text="+r.FormValue("text"), http.StatusSeeOther)
	})
	mux.HandleFunc("GET /done", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><h1 id="done">done</h1>`)
	})
	mux.HandleFunc("POST /hang", func(w http.ResponseWriter, r *http.Request) {
		s.posts.Add(1)
		<-r.Context().Done()
	})
	mux.HandleFunc("POST /drop", func(w http.ResponseWriter, r *http.Request) {
		s.posts.Add(1)
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	})
	mux.HandleFunc("GET /slow", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// newTab opens an owned tab on the shared browser and closes it after the test.
func newTab(t *testing.T, url string) (*browser.Browser, *browser.Tab) {
	t.Helper()
	b := shared.Browser(t)
	tab, err := b.NewTab(ctxT(t), url)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = b.CloseTab(context.Background(), tab) })
	return b, tab
}
