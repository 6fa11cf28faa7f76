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
	// api counts the POSTs to /api/ that reached the server.
	api atomic.Int64
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
<div style="display:none"><form method="post" action="/submit"><button class="copy" type="submit">Mobile copy</button></form></div>
<form method="post" action="/submit"><input type="hidden" name="text" value="copy"><button class="copy" type="submit">Copy</button></form>
<button class="twohidden" style="visibility:hidden">x</button><button class="twohidden" hidden>y</button>
<div id="overlay"></div>
<article class="post" data-author="alice" data-id="1"><a class="permalink" href="/p/1">x</a><div class="post-text">first</div></article>
<article class="post" data-author="bob" data-id="2"><a class="permalink" href="/p/2">x</a><div class="post-text">second</div><div class="post-text">dup</div></article>
<script>
setTimeout(() => { const d = document.createElement('div'); d.id = 'late'; d.textContent = 'late'; document.body.appendChild(d); }, 300);
</script>
</body></html>`

// richHTML has editors as publishing UIs make them: an input the browser
// autofilled, a ProseMirror-like editor (the element is contenteditable,
// the text lives in its paragraphs), a block that becomes editable only
// after a click, a TinyMCE-like editor in a same-origin iframe written by
// script, and an iframe of another origin (%s, the other server's URL).
const richHTML = `<!doctype html><html><head><title>rich</title></head><body>
<input id="user" name="user" value="alice">
<div id="pm" contenteditable="true" style="white-space:pre-wrap"><p>old one</p><p>old two</p></div>
<div id="host"></div><button id="add">+ paragraph</button>
<iframe id="fr" title="editor"></iframe>
<iframe id="xo" title="elsewhere" src="%s/plain" onload="document.body.dataset.xo = 'loaded'"></iframe>
<script>
const d = document.getElementById('fr').contentDocument;
d.open();
d.write('<!doctype html><html><body id="tinymce" contenteditable="true" style="white-space:pre-wrap"><p>draft</p></body></html>');
d.close();
document.getElementById('add').addEventListener('click', () => {
	const p = document.createElement('p');
	p.contentEditable = 'true';
	p.style.whiteSpace = 'pre-wrap';
	document.getElementById('host').appendChild(p);
});
</script>
</body></html>`

// landHTML publishes the ways real UIs do: fetch then a replaced URL and a
// toast, a refusal, a dropped or hung request, an element without any
// request, pushState, and classic forms.
const landHTML = `<!doctype html><html><head><title>land</title></head><body>
<p class="note">an old note</p>
<button id="ok">publish</button>
<button id="conflict">duplicate</button>
<button id="drop">drop</button>
<button id="hang">hang</button>
<button id="other-first">other first</button>
<button id="note">note</button>
<button id="noop">nothing</button>
<button id="push">push</button>
<button id="hidden" style="display:none">hidden</button>
<div style="display:none"><form method="post" action="/submit"><button class="copy" type="submit">Mobile copy</button></form></div>
<form method="post" action="/submit"><input type="hidden" name="text" value="copy"><button class="copy" type="submit">Copy</button></form>
<button class="twohidden" style="visibility:hidden">x</button><button class="twohidden" hidden>y</button>
<form method="post" action="/submit"><input type="hidden" name="text" value="form"><button id="form">form</button></form>
<form method="post" action="/status500"><button id="form500">form 500</button></form>
<button id="conflict-twice">duplicate, sent twice</button>
<button id="conflict-resend">duplicate, sent again once answered</button>
<form method="post" action="/refuse"><button id="refuse">refused form</button></form>
<form method="post" action="/refuse?slow=1"><button id="refuse-twice" onclick="setTimeout(() => this.form.submit(), 50)">refused form, submitted twice</button></form>
<button id="blank">blank</button>
<script>
const on = (id, f) => document.getElementById(id).addEventListener('click', f);
const post = url => fetch(url, {method: 'POST', headers: {'Content-Type': 'application/json'}, body: '{}'});
const toast = () => {
	const d = document.createElement('div');
	d.id = 'toast';
	d.textContent = 'published';
	document.body.appendChild(d);
};
on('ok', () => post('/api/echo').then(r => {
	history.replaceState(null, '', '/land?published=1');
	toast();
}));
on('conflict', () => post('/api/conflict').catch(() => {}));
on('conflict-twice', () => { post('/api/conflict').catch(() => {}); post('/api/conflict').catch(() => {}); });
on('conflict-resend', () => post('/api/conflict').then(() => setTimeout(() => post('/api/conflict').catch(() => {}), 100)).catch(() => {}));
on('blank', () => { location.href = 'about:blank'; });
on('drop', () => post('/api/drop').catch(() => {}));
on('hang', () => post('/api/hang').catch(() => {}));
on('other-first', () => fetch('/api/other').then(() => post('/api/echo')));
on('note', () => setTimeout(() => {
	const p = document.createElement('p');
	p.className = 'note';
	p.textContent = 'a new note';
	document.body.appendChild(p);
}, 100));
on('push', () => history.pushState(null, '', '/land?pushed=1'));
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
	mux.HandleFunc("GET /sliding", func(w http.ResponseWriter, r *http.Request) {
		// A button that slides in for 600ms, aria-disabled for the first
		// 300ms of its slide, and one that stays disabled.
		io.WriteString(w, `<!doctype html><body>
<button id="sliding" aria-disabled="true" style="position:fixed;top:10px;left:600px;transition:left 600ms linear">Publish</button>
<p style="margin-top:120px"><button id="off" disabled>Off</button> <button id="aria-off" aria-disabled="true">Aria off</button></p>
<script>
const b = document.getElementById('sliding');
b.onclick = () => { b.dataset.clicked = 'yes'; };
b.addEventListener('transitionend', () => { b.dataset.arrived = 'yes'; });
// aria-disabled ends 300ms into the slide, not 300ms after the load: on
// a busy machine the first frames may come later than that.
b.addEventListener('transitionrun', () => setTimeout(() => b.removeAttribute('aria-disabled'), 300));
requestAnimationFrame(() => requestAnimationFrame(() => { b.style.left = '20px'; }));
</script></body>`)
	})
	mux.HandleFunc("GET /stepping", func(w http.ResponseWriter, r *http.Request) {
		// A button that moves in two jumps over 1.2s: between them it
		// stands still, and only its running transition says it moves.
		io.WriteString(w, `<!doctype html><body>
<button id="stepping" style="position:fixed;top:10px;left:600px;transition:left 1200ms steps(2)">Publish</button>
<script>
const b = document.getElementById('stepping');
b.addEventListener('transitionend', () => { b.dataset.arrived = 'yes'; });
requestAnimationFrame(() => requestAnimationFrame(() => { b.style.left = '20px'; b.dataset.started = 'yes'; }));
</script></body>`)
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
	mux.HandleFunc("GET /named", func(w http.ResponseWriter, r *http.Request) {
		// Controls told apart only by their text or accessible name.
		io.WriteString(w, `<!doctype html><body>
<div class="panel"><button class="t">Categories</button><button class="t">Tags  &amp;
 labels</button><button class="t" aria-label="Close panel">×</button>
<span id="lbl">Publish now</span><button class="t" aria-labelledby="lbl">⏵</button>
<label for="ti">Title</label><input id="ti"><input type="submit" value="Save draft" class="t">
<button class="t" title="Settings"><img alt=""></button></div>
<script>for (const b of document.querySelectorAll('button')) b.onclick = () => { document.body.dataset.clicked = b.textContent || b.getAttribute('aria-label'); };</script>
</body>`)
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
	mux.HandleFunc("GET /plain", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `<!doctype html><body contenteditable="true"><p>elsewhere</p></body>`)
	})
	mux.HandleFunc("GET /rich", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, richHTML, r.URL.Query().Get("other"))
	})
	mux.HandleFunc("GET /land", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, landHTML)
	})
	mux.HandleFunc("POST /refuse", func(w http.ResponseWriter, r *http.Request) {
		s.posts.Add(1)
		if r.URL.Query().Has("slow") {
			time.Sleep(400 * time.Millisecond)
		}
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `<!doctype html><h1 id="refused">too many</h1>`)
	})
	mux.HandleFunc("POST /status500", func(w http.ResponseWriter, r *http.Request) {
		s.posts.Add(1)
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `<!doctype html><h1 id="server-error">oops</h1>`)
	})
	mux.HandleFunc("POST /api/echo", func(w http.ResponseWriter, r *http.Request) {
		s.api.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"id": 1}`)
	})
	mux.HandleFunc("POST /api/conflict", func(w http.ResponseWriter, r *http.Request) {
		s.api.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusConflict)
		io.WriteString(w, `{"error": "duplicate"}`)
	})
	mux.HandleFunc("POST /api/drop", func(w http.ResponseWriter, r *http.Request) {
		s.api.Add(1)
		// One byte that is not HTTP: an empty answer Chrome could resend.
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err == nil {
			buf.WriteString("X")
			buf.Flush()
			conn.Close()
		}
	})
	mux.HandleFunc("POST /api/hang", func(w http.ResponseWriter, r *http.Request) {
		s.api.Add(1)
		// The server notices the client leaving only once the body is read.
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	})
	mux.HandleFunc("GET /files", func(w http.ResponseWriter, r *http.Request) {
		// A hidden file input whose change event reads the chosen file, a
		// second file input, a disabled one and a text input.
		io.WriteString(w, `<!doctype html><body>
<input type="file" id="pick" style="display:none" multiple>
<input type="file" class="many"><input type="file" class="many">
<input type="file" id="off" disabled><input type="text" id="text">
<p id="got"></p>
<figure class="item"><img src="/a.png" alt="first"><img src="/b.jpg"></figure>
<figure class="item"></figure>
<script>
document.getElementById('pick').addEventListener('change', async e => {
	const parts = [];
	for (const f of e.target.files) parts.push(f.name + ':' + f.size + ':' + (await f.text()).slice(0, 8));
	document.getElementById('got').textContent = parts.join(',');
});
</script></body>`)
	})
	mux.HandleFunc("GET /api/other", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{}`)
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
