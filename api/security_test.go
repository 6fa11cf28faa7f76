package api

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/browserop/browserop/errcode"
	"github.com/browserop/browserop/intent"
	"github.com/browserop/browserop/ledger"
)

// A DNS-rebinding page reaches the API under its own host name: the Host
// header is not loopback and the request is refused before anything else,
// even with a valid token.
func TestForeignHostRefused(t *testing.T) {
	e := newEnv(t).start()
	port := e.srv.Listener.Addr().(*net.TCPAddr).Port
	for _, host := range []string{"evil.example", "evil.example:" + itoa(port), "127.0.0.1.nip.io", "localhost.evil.example",
		"0.0.0.0:" + itoa(port), "192.168.1.10", "[::ffff:192.168.1.10]:80", "127.0.0.1:80:80", "[::1]x"} {
		t.Run(host, func(t *testing.T) {
			for _, q := range []req{
				{method: "GET", path: "/v1/tasks", token: e.user, host: host},
				{method: "POST", path: "/v1/tasks", token: e.user, host: host, body: createBody("rebind"),
					header: map[string]string{"Idempotency-Key": "rebind"}},
			} {
				want(t, e.do(q), http.StatusMisdirectedRequest, "bad_host")
			}
		})
	}
	if n := e.taskCount(); n != 0 {
		t.Fatalf("%d tasks created through a foreign Host", n)
	}
	for _, host := range []string{"localhost:" + itoa(port), "LOCALHOST", "[::1]:" + itoa(port), "[::1]", "127.0.0.9", "127.0.0.1:1"} {
		want(t, e.do(req{method: "GET", path: "/v1/status", token: e.agent, host: host}), http.StatusOK, "")
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// Browser-made cross-site requests are refused: the headers a browser sets
// on a fetch or form post from another origin, for writes and reads alike.
func TestCrossSiteHeadersRefused(t *testing.T) {
	e := newEnv(t).start()
	self := e.srv.URL // http://127.0.0.1:PORT
	cases := []struct {
		name   string
		method string
		hdr    map[string]string
	}{
		{"FetchFromEvil", "POST", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "http://evil.example"}},
		{"OldBrowserEvilOrigin", "POST", map[string]string{"Origin": "http://evil.example"}},
		{"ReadFromEvil", "GET", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "http://evil.example"}},
		{"ReadEvilOrigin", "GET", map[string]string{"Origin": "https://evil.example"}},
		{"NullOrigin", "POST", map[string]string{"Origin": "null"}},
		{"OtherLoopbackOrigin", "POST", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "http://127.0.0.2:8080"}},
		{"OtherLoopbackOldBrowser", "POST", map[string]string{"Origin": "http://127.0.0.1:1"}},
		{"SameSite", "POST", map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "http://localhost:9999"}},
		{"SameSiteRead", "GET", map[string]string{"Sec-Fetch-Site": "same-site"}},
		{"Preflight", "OPTIONS", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "http://evil.example",
			"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization,content-type,idempotency-key"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hdr := map[string]string{"Idempotency-Key": "xsite-" + c.name}
			for k, v := range c.hdr {
				hdr[k] = v
			}
			q := req{method: c.method, path: "/v1/tasks", token: e.user, header: hdr}
			if c.method == "POST" {
				q.body = createBody("cross-site")
			}
			r := e.do(q)
			want(t, r, http.StatusForbidden, "cross_site")
		})
	}
	if n := e.taskCount(); n != 0 {
		t.Fatalf("%d tasks created by cross-site requests", n)
	}
	// The same origin (a future dashboard) and non-browser clients pass.
	r := e.do(req{method: "POST", path: "/v1/tasks", token: e.agent, body: createBody("same origin"),
		header: map[string]string{"Idempotency-Key": "same", "Origin": self, "Sec-Fetch-Site": "same-origin"}})
	want(t, r, http.StatusCreated, "")
}

// No token, a wrong one, another scheme, and a token in the query string
// (even the right one, even alongside a good header) are all refused, and
// nothing is created.
func TestAuthRefusals(t *testing.T) {
	e := newEnv(t).start()
	create := func(q req) resp {
		q.method, q.body = "POST", createBody("auth")
		if q.path == "" {
			q.path = "/v1/tasks"
		}
		if q.header == nil {
			q.header = map[string]string{}
		}
		q.header["Idempotency-Key"] = "auth"
		return e.do(q)
	}
	r := create(req{})
	want(t, r, http.StatusUnauthorized, "unauthorized")
	if !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
		t.Fatalf("WWW-Authenticate %q", r.header.Get("WWW-Authenticate"))
	}
	want(t, create(req{token: "bop_user_" + strings.Repeat("A", 43)}), http.StatusUnauthorized, "unauthorized")
	want(t, create(req{token: e.user + "x"}), http.StatusUnauthorized, "unauthorized")
	want(t, create(req{token: e.user[:len(e.user)-1]}), http.StatusUnauthorized, "unauthorized")
	want(t, create(req{header: map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte("u:"+e.user))}}),
		http.StatusUnauthorized, "unauthorized")
	want(t, create(req{header: map[string]string{"Authorization": e.user}}), http.StatusUnauthorized, "unauthorized")
	want(t, create(req{header: map[string]string{"Authorization": "Bearer "}}), http.StatusUnauthorized, "unauthorized")
	for _, path := range []string{
		"/v1/tasks?token=" + url.QueryEscape(e.user),
		"/v1/tasks?access_token=" + url.QueryEscape(e.agent),
		"/v1/tasks?x=" + url.QueryEscape(e.user),
		"/v1/tasks?x=" + url.QueryEscape("Bearer "+e.user),
		"/v1/tasks?" + url.QueryEscape(e.agent),
		"/v1/tasks?api_key=whatever",
	} {
		want(t, create(req{path: path}), http.StatusBadRequest, "token_in_query")
		want(t, create(req{path: path, token: e.user}), http.StatusBadRequest, "token_in_query")
		want(t, e.do(req{method: "GET", path: path, token: e.user}), http.StatusBadRequest, "token_in_query")
	}
	if n := e.taskCount(); n != 0 {
		t.Fatalf("%d tasks created without a proper token", n)
	}
	if !strings.Contains(e.logs.String(), "rotate") {
		t.Fatalf("no warning about the exposed token in the log")
	}
	// Every route needs a token, reads included.
	for _, rt := range routeTable(false) {
		path := strings.ReplaceAll(rt.path, "{id}", "x")
		want(t, e.do(req{method: rt.method, path: path}), http.StatusUnauthorized, "unauthorized")
	}
	want(t, e.do(req{method: "GET", path: "/nowhere"}), http.StatusUnauthorized, "unauthorized")
}

// A body larger than MaxBody is 413 with a code, declared or streamed,
// and creates nothing.
func TestOversizedBody(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.MaxBody = 1024 }).start()
	big := createBody(strings.Repeat("x", 4096))
	r := e.do(req{method: "POST", path: "/v1/tasks", token: e.agent, body: big, header: map[string]string{"Idempotency-Key": "big"}})
	want(t, r, http.StatusRequestEntityTooLarge, "too_large")

	// Chunked, without a Content-Length: the reader stops at the limit.
	pr, pw := io.Pipe()
	go func() {
		_, _ = pw.Write([]byte(`{"title": "` + strings.Repeat("y", 4096) + `", "contract": {"domains": ["127.0.0.1"], "capabilities": ["post"]}}`))
		pw.Close()
	}()
	q := e.newRequest(req{method: "POST", path: "/v1/tasks", token: e.agent, header: map[string]string{"Idempotency-Key": "big2", "Content-Type": "application/json"}})
	q.Body, q.ContentLength = pr, -1
	want(t, e.send(q), http.StatusRequestEntityTooLarge, "too_large")

	// Oversized intents too.
	st := e.create("small", createBody("small"))
	r = e.do(req{method: "POST", path: "/v1/tasks/" + st.ID + "/actions", token: e.agent,
		body: intent.Request{Site: "demo", Actor: "alice", Type: intent.Post, Text: strings.Repeat("z", 2048)}})
	want(t, r, http.StatusRequestEntityTooLarge, "too_large")
	if n := e.taskCount(); n != 1 {
		t.Fatalf("%d tasks, want only the small one", n)
	}
	got, _ := e.svc.Get(e.ctx, st.ID)
	if got.Intents != 0 {
		t.Fatalf("an oversized intent was recorded")
	}
}

// The token file is created private and reused; one that others can read,
// a malformed one, and one with equal tokens are refused with clear errors
// that never echo the file's content.
func TestTokenFile(t *testing.T) {
	dir := filepath.Join(privateTempDir(t), "state")
	path := filepath.Join(dir, "token")
	user, agent, err := LoadOrCreateTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file mode %04o, want 0600", fi.Mode().Perm())
	}
	di, _ := os.Stat(dir)
	if di.Mode().Perm() != 0o700 {
		t.Fatalf("token dir mode %04o, want 0700", di.Mode().Perm())
	}
	if user == agent || !strings.HasPrefix(user, userTokenPrefix) || !strings.HasPrefix(agent, agentTokenPrefix) {
		t.Fatalf("tokens %q %q", user[:10], agent[:10])
	}
	for _, tok := range []string{strings.TrimPrefix(user, userTokenPrefix), strings.TrimPrefix(agent, agentTokenPrefix)} {
		if b, err := base64.RawURLEncoding.DecodeString(tok); err != nil || len(b) != 32 {
			t.Fatalf("token is not 256 random bits: %v %d", err, len(b))
		}
	}
	u2, a2, err := LoadOrCreateTokens(path)
	if err != nil || u2 != user || a2 != agent {
		t.Fatalf("second start: %v (same tokens: %v)", err, u2 == user && a2 == agent)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("left behind: %v", entries)
	}

	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o660} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		_, _, err := LoadOrCreateTokens(path)
		if err == nil || !strings.Contains(err.Error(), "chmod 600") || !strings.Contains(err.Error(), path) {
			t.Fatalf("mode %04o: %v, want a refusal saying chmod 600", mode, err)
		}
		if strings.Contains(err.Error(), user) {
			t.Fatalf("error leaks the token")
		}
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}

	bad := func(name, content string, wantMsg string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		_, _, err := LoadOrCreateTokens(p)
		if err == nil || !strings.Contains(err.Error(), wantMsg) {
			t.Fatalf("%s: %v, want %q", name, err, wantMsg)
		}
		if strings.Contains(err.Error(), "SECRETVALUE") {
			t.Fatalf("%s: error echoes the file: %v", name, err)
		}
	}
	bad("garbage", "SECRETVALUE not json", "not a browserop token file")
	bad("short", `{"user": "bop_user_SECRETVALUE", "agent": "bop_agent_SECRETVALUE"}`, "random bytes")
	bad("same", `{"user": "`+user+`", "agent": "bop_agent_`+strings.TrimPrefix(user, userTokenPrefix)+`"}`, "equal")
	bad("equal-ish", `{"user": "`+user+`", "agent": "`+agent+`", "extra": "SECRETVALUE"}`, "not a browserop token file")
	if _, _, err := LoadOrCreateTokens(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("a directory: %v", err)
	}
	if _, _, err := LoadOrCreateTokens(""); err == nil {
		t.Fatal("empty path accepted")
	}
	// A token file in a folder others can reach is refused, naming the
	// fix: whoever can write the folder can swap the file.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadOrCreateTokens(path); err == nil || !strings.Contains(err.Error(), "is mode 0755: others can reach what is in it; run `chmod 700 "+dir+"`") {
		t.Fatalf("a 0755 folder: %v", err)
	}
}

// privateTempDir is a temporary folder of this user's alone (t.TempDir
// is 0755 under the usual umask).
func privateTempDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

// The ledger file (the API's store) readable by others is refused too, with
// a clear error; the API maps that to a stable code.
func TestLedgerFileNot0600Refused(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	db, err := ledger.Open(ctx, path, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = ledger.Open(ctx, path, ledger.Options{})
	if !errors.Is(err, ledger.ErrUnsafeFile) || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("open a 0644 ledger: %v", err)
	}
	if k := errcode.Of(err); k.Code != "unsafe_ledger_file" {
		t.Fatalf("kind %+v", k)
	}
}

// Listen refuses every host that is not loopback, with a clear error.
func TestListenLoopbackOnly(t *testing.T) {
	for _, addr := range []string{":0", "0.0.0.0:0", "[::]:0", "192.168.1.2:0", "example.com:0", "10.0.0.1:0", "127.0.0.1"} {
		ln, err := Listen(addr)
		if err == nil {
			ln.Close()
			t.Fatalf("Listen(%q) accepted", addr)
		}
		if !strings.Contains(err.Error(), "loopback") {
			t.Fatalf("Listen(%q): %v, want an error naming loopback", addr, err)
		}
	}
	for _, addr := range []string{"127.0.0.1:0", "localhost:0", "[::1]:0"} {
		ln, err := Listen(addr)
		if err != nil {
			if addr == "[::1]:0" {
				t.Logf("no IPv6 loopback here: %v", err)
				continue
			}
			t.Fatalf("Listen(%q): %v", addr, err)
		}
		if !ln.Addr().(*net.TCPAddr).IP.IsLoopback() {
			t.Fatalf("%s listens on %s", addr, ln.Addr())
		}
		ln.Close()
	}
}

// Serve answers until its context ends, then shuts down.
func TestServe(t *testing.T) {
	e := newEnv(t)
	ln, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, e.s) }()
	r, _ := http.NewRequest("GET", "http://"+ln.Addr().String()+"/v1/status", nil)
	r.Header.Set("Authorization", "Bearer "+e.agent)
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d", res.StatusCode)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
}
