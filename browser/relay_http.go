package browser

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// relayWeb answers HTTP on the relay socket as Chrome's own DevTools port
// would, for one purpose: a person who signs in on a machine without a
// display forwards the socket over SSH (ssh -L PORT:SOCKET) and opens
// chrome://inspect on their own computer. Only what that needs is served:
// /json/version, /json/list (and /json), and WebSockets at
// /devtools/browser/… (the pipe protocol) and /devtools/page/ID (one page,
// as a DevTools front-end speaks to it).
//
// As Chrome's own port does, it answers only a Host that is an IP address
// or localhost (a web page that renamed its own site to 127.0.0.1 cannot
// read it) and a WebSocket only without an Origin or from the DevTools
// front-end (devtools://devtools).
type relayWeb struct {
	r     *relay
	ln    *chanListener
	srv   *http.Server
	close func()
}

func newRelayWeb(r *relay) *relayWeb {
	w := &relayWeb{r: r, ln: newChanListener()}
	mux := http.NewServeMux()
	mux.HandleFunc("/json/version", w.version)
	mux.HandleFunc("/json/list", w.list)
	mux.HandleFunc("/json", w.list)
	mux.HandleFunc("/json/close/", w.closeTarget)
	mux.HandleFunc("/json/activate/", w.activateTarget)
	mux.HandleFunc("/devtools/browser/", w.browserSocket)
	mux.HandleFunc("/devtools/page/", w.pageSocket)
	w.srv = &http.Server{Handler: w.guard(mux), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = w.srv.Serve(w.ln) }()
	w.close = func() { _ = w.srv.Close() }
	return w
}

// take hands the server one connection.
func (w *relayWeb) take(conn net.Conn) { w.ln.push(conn) }

// guard refuses a Host that is not an IP address or localhost, and a
// WebSocket from a web page's origin.
func (w *relayWeb) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
		if !localHost(req.Host) {
			http.Error(rw, "Host header is specified and is not an IP address or localhost.", http.StatusForbidden)
			return
		}
		if o := req.Header.Get("Origin"); o != "" && o != "devtools://devtools" {
			http.Error(rw, "Origin "+o+" may not use DevTools here.", http.StatusForbidden)
			return
		}
		next.ServeHTTP(rw, req)
	})
}

// localHost reports whether host (with or without a port) is an IP
// address or localhost.
func localHost(host string) bool {
	if host == "" {
		return true
	}
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	h = strings.Trim(h, "[]")
	return strings.EqualFold(h, "localhost") || net.ParseIP(h) != nil
}

func (w *relayWeb) version(rw http.ResponseWriter, req *http.Request) {
	res, err := w.r.call("Browser.getVersion", struct{}{}, "", true)
	if err != nil {
		http.Error(rw, err.Error(), http.StatusBadGateway)
		return
	}
	var v struct {
		ProtocolVersion string `json:"protocolVersion"`
		Product         string `json:"product"`
		UserAgent       string `json:"userAgent"`
		JSVersion       string `json:"jsVersion"`
	}
	_ = json.Unmarshal(res, &v)
	writeJSON(rw, map[string]string{
		"Browser":              v.Product,
		"Protocol-Version":     v.ProtocolVersion,
		"User-Agent":           v.UserAgent,
		"V8-Version":           v.JSVersion,
		"webSocketDebuggerUrl": "ws://" + hostOf(req) + "/devtools/browser/relay",
	})
}

func (w *relayWeb) list(rw http.ResponseWriter, req *http.Request) {
	res, err := w.r.call("Target.getTargets", struct{}{}, "", true)
	if err != nil {
		http.Error(rw, err.Error(), http.StatusBadGateway)
		return
	}
	var got struct {
		TargetInfos []struct {
			TargetID string `json:"targetId"`
			Type     string `json:"type"`
			Title    string `json:"title"`
			URL      string `json:"url"`
		} `json:"targetInfos"`
	}
	_ = json.Unmarshal(res, &got)
	host := hostOf(req)
	out := []map[string]string{}
	for _, t := range got.TargetInfos {
		if t.Type != "page" {
			continue
		}
		out = append(out, map[string]string{
			"description":          "",
			"devtoolsFrontendUrl":  "/devtools/inspector.html?ws=" + host + "/devtools/page/" + t.TargetID,
			"id":                   t.TargetID,
			"title":                t.Title,
			"type":                 t.Type,
			"url":                  t.URL,
			"webSocketDebuggerUrl": "ws://" + host + "/devtools/page/" + t.TargetID,
		})
	}
	writeJSON(rw, out)
}

// closeTarget and activateTarget are chrome://inspect's "close" and
// "focus" links: what the person does to their own browser.
func (w *relayWeb) closeTarget(rw http.ResponseWriter, req *http.Request) {
	w.targetCommand(rw, req, "/json/close/", "Target.closeTarget", "Target is closing")
}

func (w *relayWeb) activateTarget(rw http.ResponseWriter, req *http.Request) {
	w.targetCommand(rw, req, "/json/activate/", "Target.activateTarget", "Target activated")
}

func (w *relayWeb) targetCommand(rw http.ResponseWriter, req *http.Request, prefix, method, done string) {
	if req.Method != http.MethodPut && req.Method != http.MethodGet {
		http.Error(rw, "use PUT", http.StatusMethodNotAllowed)
		return
	}
	id := strings.TrimPrefix(req.URL.Path, prefix)
	if _, err := w.r.call(method, map[string]string{"targetId": id}, "", true); err != nil {
		http.Error(rw, "No such target id: "+id, http.StatusNotFound)
		return
	}
	_, _ = rw.Write([]byte(done))
}

func hostOf(req *http.Request) string {
	if req.Host == "" {
		return "localhost"
	}
	return req.Host
}

func writeJSON(rw http.ResponseWriter, v any) {
	rw.Header().Set("Content-Type", "application/json; charset=UTF-8")
	_ = json.NewEncoder(rw).Encode(v)
}

// wsLimit bounds one message a WebSocket client sends.
const wsLimit = 64 << 20

func (w *relayWeb) accept(rw http.ResponseWriter, req *http.Request) (*websocket.Conn, bool) {
	// The Origin is checked by guard, as Chrome checks it.
	ws, err := websocket.Accept(rw, req, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return nil, false
	}
	ws.SetReadLimit(wsLimit)
	return ws, true
}

func (w *relayWeb) serveWS(c *relayClient, ws *websocket.Conn) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w.r.serveClient(c,
		func() ([]byte, error) {
			_, b, err := ws.Read(ctx)
			return b, err
		},
		func(b []byte) error { return ws.Write(ctx, websocket.MessageText, b) },
		func() {
			cancel()
			_ = ws.CloseNow()
		})
}

func (w *relayWeb) browserSocket(rw http.ResponseWriter, req *http.Request) {
	ws, ok := w.accept(rw, req)
	if !ok {
		return
	}
	c, err := w.r.join(false)
	if err != nil {
		_ = ws.Close(websocket.StatusGoingAway, "Chrome is gone")
		return
	}
	w.serveWS(c, ws)
}

func (w *relayWeb) pageSocket(rw http.ResponseWriter, req *http.Request) {
	id := strings.TrimPrefix(req.URL.Path, "/devtools/page/")
	if id == "" || strings.Contains(id, "/") {
		http.NotFound(rw, req)
		return
	}
	c, err := w.r.join(true)
	if err != nil {
		http.Error(rw, err.Error(), http.StatusBadGateway)
		return
	}
	if err := w.r.attachPage(c, id); err != nil {
		w.r.part(c)
		http.Error(rw, "No such target id: "+id, http.StatusNotFound)
		return
	}
	ws, ok := w.accept(rw, req)
	if !ok {
		w.r.part(c)
		return
	}
	w.serveWS(c, ws)
}

// chanListener is a net.Listener fed connections by push.
type chanListener struct {
	ch   chan net.Conn
	done chan struct{}
	once sync.Once
}

func newChanListener() *chanListener {
	return &chanListener{ch: make(chan net.Conn), done: make(chan struct{})}
}

func (l *chanListener) push(c net.Conn) {
	select {
	case l.ch <- c:
	case <-l.done:
		_ = c.Close()
	}
}

func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.done:
		return nil, errors.New("relay: closed")
	}
}

func (l *chanListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *chanListener) Addr() net.Addr { return &net.UnixAddr{Name: SocketFileName, Net: "unix"} }
