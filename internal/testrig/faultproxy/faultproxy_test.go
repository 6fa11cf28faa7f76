package faultproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// site is a backend that counts the requests it completed and echoes what
// it saw.
type site struct {
	*httptest.Server
	hits atomic.Int32
}

func newSite(t *testing.T) *site {
	t.Helper()
	s := &site{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.hits.Add(1)
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, "http://"+r.Host+"/landed", http.StatusFound)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "s1"})
		fmt.Fprintf(w, "host=%s cookie=%s method=%s uri=%s body=%s", r.Host, r.Header.Get("Cookie"), r.Method, r.URL.RequestURI(), body)
	}))
	t.Cleanup(s.Close)
	return s
}

func start(t *testing.T, target string) *Proxy {
	t.Helper()
	p, err := Start(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return p
}

// client does not follow redirects and opens a connection per request, so
// that a dropped one is not retried by the transport.
func client() *http.Client {
	return &http.Client{
		Transport:     &http.Transport{DisableKeepAlives: true},
		Timeout:       10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

func send(t *testing.T, ctx context.Context, method, u, body string) (*http.Response, string, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Cookie", "wordpress_logged_in=abc")
	resp, err := client().Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, string(b), err
}

func add(t *testing.T, p *Proxy, s Spec) *Rule {
	t.Helper()
	r, err := p.Add(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestPass(t *testing.T) {
	s := newSite(t)
	p := start(t, s.URL)
	counted := add(t, p, Spec{Method: "GET", Path: "^/redirect$", Mode: Pass})
	resp, body, err := send(t, context.Background(), "POST", p.URL()+"/wp-comments-post.php?x=1", "comment=hi")
	if err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(p.URL(), "http://")
	want := "host=" + host + " cookie=wordpress_logged_in=abc method=POST uri=/wp-comments-post.php?x=1 body=comment=hi"
	if body != want {
		t.Errorf("site saw %q, want %q", body, want)
	}
	if got := resp.Header.Get("Set-Cookie"); got != "session=s1" {
		t.Errorf("Set-Cookie = %q, want session=s1", got)
	}

	// A redirect reaches the client as the site wrote it.
	resp, _, err = send(t, context.Background(), "GET", p.URL()+"/redirect", "")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != p.URL()+"/landed" {
		t.Errorf("redirect: %d %q, want 302 to %s/landed", resp.StatusCode, resp.Header.Get("Location"), p.URL())
	}

	if counted.Matched() != 1 || counted.Faulted() != 1 {
		t.Errorf("a Pass rule: Matched, Faulted = %d, %d; want 1, 1", counted.Matched(), counted.Faulted())
	}
	reqs := p.Requests()
	if len(reqs) != 2 || reqs[0].Method != "POST" || reqs[0].URI != "/wp-comments-post.php?x=1" ||
		reqs[0].Status != 200 || !reqs[0].Delivered || reqs[1].Status != 302 {
		t.Errorf("Requests() = %+v", reqs)
	}
}

func TestNoTarget(t *testing.T) {
	s := newSite(t)
	p := start(t, "")
	resp, _, err := send(t, context.Background(), "GET", p.URL()+"/", "")
	if err != nil || resp.StatusCode != http.StatusBadGateway {
		t.Fatalf("before SetTarget: %v, %v; want 502", resp, err)
	}
	if err := p.SetTarget(s.URL); err != nil {
		t.Fatal(err)
	}
	if resp, _, err := send(t, context.Background(), "GET", p.URL()+"/", ""); err != nil || resp.StatusCode != 200 {
		t.Fatalf("after SetTarget: %v, %v; want 200", resp, err)
	}
	for _, bad := range []string{"", "ftp://x", "http://127.0.0.1:1/path", "127.0.0.1:80"} {
		if err := p.SetTarget(bad); err == nil {
			t.Errorf("SetTarget(%q) accepted", bad)
		}
	}
}

func TestDropAfterCommit(t *testing.T) {
	s := newSite(t)
	p := start(t, s.URL)
	r := add(t, p, Spec{Method: "POST", Path: `^/wp-comments-post\.php$`, Mode: DropAfterCommit})
	_, _, err := send(t, context.Background(), "POST", p.URL()+"/wp-comments-post.php", "comment=hi")
	if err == nil {
		t.Fatal("the client got an answer, want a dropped connection")
	}
	if got := s.hits.Load(); got != 1 {
		t.Errorf("site hits = %d, want 1 (the request is committed)", got)
	}
	if r.Matched() != 1 || r.Faulted() != 1 {
		t.Errorf("Matched, Faulted = %d, %d; want 1, 1", r.Matched(), r.Faulted())
	}
	if reqs := p.Requests(); len(reqs) != 1 || reqs[0].Mode != DropAfterCommit || reqs[0].Status != 200 || reqs[0].Delivered {
		t.Errorf("Requests() = %+v", reqs)
	}
	// A GET, or another path, is not matched.
	for _, c := range [][2]string{{"GET", "/wp-comments-post.php"}, {"POST", "/wp-comments-post.php?x"}} {
		if resp, _, err := send(t, context.Background(), c[0], p.URL()+c[1], ""); err != nil || resp.StatusCode != 200 {
			t.Errorf("%s %s: %v, %v; want a passed 200", c[0], c[1], resp, err)
		}
	}
	if r.Matched() != 1 {
		t.Errorf("Matched = %d after unmatched requests, want 1", r.Matched())
	}
}

func TestDropBeforeSite(t *testing.T) {
	s := newSite(t)
	p := start(t, s.URL)
	r := add(t, p, Spec{Method: "POST", Mode: DropBeforeSite, Limit: 1})
	if _, _, err := send(t, context.Background(), "POST", p.URL()+"/wp-comments-post.php", "comment=hi"); err == nil {
		t.Fatal("the client got an answer, want a dropped connection")
	}
	if got := s.hits.Load(); got != 0 {
		t.Errorf("site hits = %d, want 0 (the request never reached it)", got)
	}
	if r.Matched() != 1 || r.Faulted() != 1 {
		t.Errorf("Matched, Faulted = %d, %d; want 1, 1", r.Matched(), r.Faulted())
	}
	if resp, _, err := send(t, context.Background(), "POST", p.URL()+"/wp-comments-post.php", "comment=hi"); err != nil || resp.StatusCode != 200 {
		t.Errorf("past its limit: %v, %v; want a passed 200", resp, err)
	}
	if got := s.hits.Load(); got != 1 {
		t.Errorf("site hits = %d, want 1", got)
	}
}

func TestErrorAfterCommit(t *testing.T) {
	s := newSite(t)
	p := start(t, s.URL)
	r := add(t, p, Spec{Path: `rest_route=/wp/v2/posts/\d+`, Mode: ErrorAfterCommit})
	// The block editor's REST URL, query percent-encoded.
	resp, body, err := send(t, context.Background(), "POST", p.URL()+"/index.php?rest_route=%2Fwp%2Fv2%2Fposts%2F12&_locale=user", "{}")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 500 || body != ErrorBody || resp.Header.Get("Set-Cookie") != "" {
		t.Errorf("got %d %q (Set-Cookie %q), want 500 %q and nothing of the site's answer", resp.StatusCode, body, resp.Header.Get("Set-Cookie"), ErrorBody)
	}
	if s.hits.Load() != 1 || r.Faulted() != 1 {
		t.Errorf("site hits = %d, Faulted = %d; want 1, 1", s.hits.Load(), r.Faulted())
	}
}

func TestLimitAndOrder(t *testing.T) {
	s := newSite(t)
	p := start(t, s.URL)
	first := add(t, p, Spec{Method: "POST", Mode: ErrorAfterCommit, Limit: 1})
	second := add(t, p, Spec{Mode: DropAfterCommit})
	codes := []int{}
	for range 3 {
		resp, _, err := send(t, context.Background(), "POST", p.URL()+"/x", "")
		if err != nil {
			t.Fatal(err)
		}
		codes = append(codes, resp.StatusCode)
	}
	if fmt.Sprint(codes) != "[500 200 200]" {
		t.Errorf("statuses = %v, want [500 200 200]: the first rule errs once, then passes", codes)
	}
	if first.Matched() != 3 || first.Faulted() != 1 || second.Matched() != 0 {
		t.Errorf("first Matched, Faulted = %d, %d; second Matched = %d; want 3, 1, 0", first.Matched(), first.Faulted(), second.Matched())
	}
	p.Remove(first)
	if _, _, err := send(t, context.Background(), "POST", p.URL()+"/x", ""); err == nil {
		t.Error("after Remove(first), want the second rule's drop")
	}
	if _, err := p.Add(Spec{Path: "("}); err == nil {
		t.Error("Add accepted a path that does not compile")
	}
}

func TestHold(t *testing.T) {
	s := newSite(t)
	p := start(t, s.URL)
	r := add(t, p, Spec{Method: "POST", Mode: Hold})
	type result struct {
		status int
		body   string
		err    error
	}
	got := make(chan result, 1)
	go func() {
		resp, body, err := send(t, context.Background(), "POST", p.URL()+"/publish", "x")
		if err != nil {
			got <- result{err: err}
			return
		}
		got <- result{resp.StatusCode, body, nil}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.Wait(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if s.hits.Load() != 1 {
		t.Errorf("site hits = %d while held, want 1", s.hits.Load())
	}
	select {
	case res := <-got:
		t.Fatalf("the client got %+v while the answer is held", res)
	case <-time.After(100 * time.Millisecond):
	}
	r.Release()
	res := <-got
	if res.err != nil || res.status != 200 || !strings.Contains(res.body, "uri=/publish") {
		t.Errorf("after Release: %+v, want the site's answer", res)
	}
	// Released: later matches are answered at once.
	if resp, _, err := send(t, context.Background(), "POST", p.URL()+"/publish", ""); err != nil || resp.StatusCode != 200 {
		t.Errorf("after Release: %v, %v", resp, err)
	}
	if reqs := p.Requests(); len(reqs) != 2 || !reqs[0].Delivered || reqs[0].Mode != Hold {
		t.Errorf("Requests() = %+v", reqs)
	}
}

func TestHoldClientGone(t *testing.T) {
	s := newSite(t)
	p := start(t, s.URL)
	r := add(t, p, Spec{Mode: Hold})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, _, err := send(t, ctx, "GET", p.URL()+"/", "")
		done <- err
	}()
	wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer wcancel()
	if err := r.Wait(wctx, 1); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("client: %v, want context.Canceled", err)
	}
	// The handler ends with its client: Close (in Cleanup) does not wait
	// for a release that never comes. Nor does it for a held request whose
	// client still waits:
	go func() { _, _, err := send(t, context.Background(), "GET", p.URL()+"/", ""); done <- err }()
	if err := r.Wait(wctx, 2); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err == nil {
		t.Error("a held client got an answer from a closed proxy")
	}
}

func TestWaitTimeout(t *testing.T) {
	p := start(t, "")
	r := add(t, p, Spec{Mode: Hold})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := r.Wait(ctx, 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Wait = %v, want DeadlineExceeded", err)
	}
}

func TestDecoded(t *testing.T) {
	for in, want := range map[string]string{
		"/a": "/a",
		"/index.php?rest_route=%2Fwp%2Fv2%2Fposts%2F5&_locale=user": "/index.php?rest_route=/wp/v2/posts/5&_locale=user",
		"/?s=a+b":   "/?s=a b",
		"/?bad=%zz": "/?bad=%zz",
	} {
		if got := decoded(in); got != want {
			t.Errorf("decoded(%q) = %q, want %q", in, got, want)
		}
	}
}
