package browser_test

import (
	"context"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/browser/browsertest"
)

// notSentPage is a publishing page whose committing button (#save) does
// what %s says, after a head that asks for no favicon.
const notSentPage = `<!doctype html><html><head><link rel="icon" href="data:,"><title>ns</title></head>
<body><button id="save">save</button><script>%s</script></body></html>`

// notSentSite serves the pages of TestNotSent and counts every request
// that reaches it after the page itself.
type notSentSite struct {
	*httptest.Server
	hits atomic.Int64
}

func newNotSentSite(t *testing.T) *notSentSite {
	s := &notSentSite{}
	pages := map[string]string{
		// The button does nothing: the page was not ready.
		"/nothing": ``,
		// The submission leaves 3.5 s after the click, after the landing
		// wait (3 s) gave up.
		"/late": `document.getElementById('save').onclick = () => setTimeout(() => fetch('/api/save', {method: 'POST', body: 'x'}), 3500);`,
		// The submission leaves as a beacon when the page is hidden.
		"/beacon": `let dirty = false; document.getElementById('save').onclick = () => { dirty = true; };
addEventListener('pagehide', () => { if (dirty) navigator.sendBeacon('/api/save', 'x'); });`,
		// A service worker is registered for the origin.
		"/sw": `navigator.serviceWorker.register('/sw.js').then(() => document.body.dataset.ready = 'yes');`,
		// A WebSocket is open at the press.
		"/ws": `const ws = new WebSocket('ws://' + location.host + '/socket'); ws.onopen = () => document.body.dataset.ready = 'yes';`,
		// The click asks the site's other tabs to send (a leader tab).
		"/bc": `document.getElementById('save').onclick = () => new BroadcastChannel('save').postMessage('x');`,
		// A tab of the site that sends what the others ask it to.
		"/listener": `new BroadcastChannel('save').onmessage = () => fetch('/api/save', {method: 'POST', body: 'x'});
document.body.dataset.ready = 'yes';`,
		// A dedicated worker runs.
		"/worker": `const w = new Worker(URL.createObjectURL(new Blob(['postMessage(1)'], {type: 'text/javascript'})));
w.onmessage = () => document.body.dataset.ready = 'yes';`,
	}
	mux := http.NewServeMux()
	for path, script := range pages {
		mux.HandleFunc("GET "+path, func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, notSentPage, script)
		})
	}
	mux.HandleFunc("GET /sw.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		fmt.Fprint(w, `self.addEventListener('fetch', () => {});`)
	})
	mux.HandleFunc("GET /socket", func(w http.ResponseWriter, r *http.Request) {
		// A WebSocket handshake, then the connection is held open.
		sum := sha1.Sum([]byte(r.Header.Get("Sec-WebSocket-Key") + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
		conn, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		fmt.Fprintf(rw, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n", base64.StdEncoding.EncodeToString(sum[:]))
		rw.Flush()
		buf := make([]byte, 512)
		for {
			if _, err := conn.Read(buf); err != nil {
				return
			}
		}
	})
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		w.WriteHeader(http.StatusCreated)
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// TestNotSent: a committing click that provably sent nothing is
// ErrNotSent, and only then: a late submission, a beacon on pagehide, a
// service worker, an open WebSocket, a worker, or a tab that may not be
// torn down all leave the outcome unknown, and no submission reaches the
// site once the landing wait gave up.
func TestNotSent(t *testing.T) {
	b := browsertest.Launch(t)
	s := newNotSentSite(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	click := func(t *testing.T, path string, allow bool) error {
		t.Helper()
		tab, err := b.NewTab(ctx, s.URL+path)
		require.NoError(t, err)
		t.Cleanup(func() { _, _ = b.CloseTab(context.Background(), tab) })
		if path != "/nothing" && path != "/late" && path != "/beacon" && path != "/bc" {
			require.NoError(t, tab.WaitVisible(ctx, "body[data-ready]", 10*time.Second))
		}
		tab.AllowTeardown(allow)
		tab.SetActionTimeout(3 * time.Second) // the landing wait
		_, err = tab.ClickOnceAndLand(ctx, "#save", browser.LandingSigns{Selector: "#saved"})
		require.Error(t, err)
		t.Log(err)
		if errors.Is(err, browser.ErrNotSent) {
			require.NotErrorIs(t, err, browser.ErrOutcomeUnknown, "not sent is definitive")
			tab.SetActionTimeout(0)
			u, uerr := tab.URL(ctx)
			require.NoError(t, uerr)
			require.Equal(t, "about:blank", u, "the clicked document was torn down")
		} else {
			require.ErrorIs(t, err, browser.ErrOutcomeUnknown)
		}
		return err
	}

	t.Run("NothingSent", func(t *testing.T) {
		err := click(t, "/nothing", true)
		require.ErrorIs(t, err, browser.ErrNotSent)
		require.Zero(t, s.hits.Load())
	})
	t.Run("TabNotTornDown", func(t *testing.T) {
		// Before any test registers a service worker for the origin.
		err := click(t, "/nothing", false)
		require.NotErrorIs(t, err, browser.ErrNotSent)
	})
	t.Run("LateFetch", func(t *testing.T) {
		s.hits.Store(0)
		err := click(t, "/late", true)
		require.NotErrorIs(t, err, browser.ErrNotSent)
		time.Sleep(time.Second)
		require.Zero(t, s.hits.Load(), "the late submission was stopped before it left")
	})
	t.Run("BeaconOnPagehide", func(t *testing.T) {
		// The beacon is seen and the outcome is unknown; on a loaded
		// machine the page may run its pagehide only after the proof
		// ended, and the sealed tab stops the beacon then too: either
		// way nothing reaches the site.
		s.hits.Store(0)
		err := click(t, "/beacon", true)
		if errors.Is(err, browser.ErrNotSent) {
			t.Log("pagehide ran after the proof")
		}
		time.Sleep(2 * time.Second)
		require.Zero(t, s.hits.Load(), "the beacon was stopped before it left")
	})
	t.Run("AnotherTabOfTheSite", func(t *testing.T) {
		// Another tab of the same site sends for the clicked page: its
		// request is another target's, which the clicked tab never sees.
		other, err := b.NewTab(ctx, s.URL+"/listener")
		require.NoError(t, err)
		defer b.CloseTab(context.Background(), other)
		require.NoError(t, other.WaitVisible(ctx, "body[data-ready]", 10*time.Second))
		err = click(t, "/bc", true)
		require.NotErrorIs(t, err, browser.ErrNotSent)
	})
	t.Run("AnotherSiteTab", func(t *testing.T) {
		// A tab of another site (localhost is not 127.0.0.1) takes nothing
		// from the proof.
		other, err := b.NewTab(ctx, strings.Replace(s.URL, "127.0.0.1", "localhost", 1)+"/listener")
		require.NoError(t, err)
		defer b.CloseTab(context.Background(), other)
		require.NoError(t, other.WaitVisible(ctx, "body[data-ready]", 10*time.Second))
		s.hits.Store(0)
		err = click(t, "/nothing", true)
		require.ErrorIs(t, err, browser.ErrNotSent)
		require.Zero(t, s.hits.Load())
	})
	// The service worker stays registered for the origin: it goes last.
	for _, path := range []string{"/ws", "/worker", "/sw"} {
		t.Run("Refused"+path, func(t *testing.T) {
			err := click(t, path, true)
			require.NotErrorIs(t, err, browser.ErrNotSent)
		})
	}
}

// TestNotSentWithFetchLater: in a browser browserop did not launch,
// fetchLater is there, and the browser sends what a page deferred with it
// after the page is gone, outside the tab's interception: no click is
// proven to have sent nothing there, even one that sent nothing.
func TestNotSentWithFetchLater(t *testing.T) {
	s := newNotSentSite(t)
	dir := persistentProfile(t)
	startChrome(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	b, err := browser.Attach(ctx, browsertest.Config(dir))
	require.NoError(t, err)
	defer b.Close()
	tab, err := b.NewTab(ctx, s.URL+"/nothing")
	require.NoError(t, err)
	defer b.CloseTab(context.Background(), tab)
	tab.AllowTeardown(true)
	tab.SetActionTimeout(3 * time.Second)
	_, err = tab.ClickOnceAndLand(ctx, "#save", browser.LandingSigns{Selector: "#saved"})
	require.ErrorIs(t, err, browser.ErrOutcomeUnknown)
	require.NotErrorIs(t, err, browser.ErrNotSent)
}
