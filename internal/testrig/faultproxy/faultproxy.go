// Package faultproxy is an HTTP reverse proxy on loopback for tests: it
// stands in front of a site (the WordPress of internal/testrig/wpsite), passes
// every request through with its Host and cookies, and fails the ones a
// test picks in the ways that make an outcome uncertain: the site did the
// work, but the browser never learns it (the connection drops, a 500
// comes back, the answer is held).
//
// A site that builds absolute URLs (WordPress from its siteurl) must be
// installed at the proxy's URL, so that its links and redirects come back
// through the proxy: start the proxy first, with no target, then the site
// (wpsite.WithFront), which sets it.
package faultproxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
)

// Proxy is a running reverse proxy. Its methods are safe for concurrent use.
type Proxy struct {
	url       string
	srv       *http.Server
	transport *http.Transport
	rp        *httputil.ReverseProxy
	target    atomic.Pointer[url.URL]

	ctx    context.Context // ends on Close: held answers and forwarded requests
	cancel context.CancelFunc
	active sync.WaitGroup // handlers running

	mu     sync.Mutex
	rules  []*Rule
	seen   []Request
	closed bool // no handler starts once set

	closeOnce sync.Once
	closeErr  error
}

// maxSeen bounds the request log.
const maxSeen = 10000

// Start starts a proxy on a free port of 127.0.0.1 forwarding to target
// (an origin such as http://127.0.0.1:8080), or, when target is "", to
// nothing yet: it answers 502 until SetTarget.
func Start(target string) (*Proxy, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("faultproxy: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Proxy{
		url:    "http://" + l.Addr().String(),
		ctx:    ctx,
		cancel: cancel,
		transport: &http.Transport{
			Proxy:               nil, // never an HTTP_PROXY of the environment
			MaxIdleConnsPerHost: 16,
		},
	}
	if target != "" {
		if err := p.SetTarget(target); err != nil {
			l.Close()
			cancel()
			return nil, err
		}
	}
	p.rp = &httputil.ReverseProxy{
		Rewrite:   p.rewrite,
		Transport: p.transport,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			http.Error(w, "faultproxy: "+err.Error(), http.StatusBadGateway)
		},
	}
	p.srv = &http.Server{Handler: http.HandlerFunc(p.serve)}
	go p.srv.Serve(l)
	return p, nil
}

// URL returns the proxy's origin, http://127.0.0.1:PORT.
func (p *Proxy) URL() string { return p.url }

// SetTarget makes the proxy forward to origin (scheme://host:port, no path).
func (p *Proxy) SetTarget(origin string) error {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return fmt.Errorf("faultproxy: target %q is not an http(s) origin", origin)
	}
	u.Path = ""
	p.target.Store(u)
	return nil
}

// SetKeepAlives turns keep-alive connections from clients on (the default)
// or off. Off, every request comes on a new connection, which the proxy
// closes after the answer: a browser retries a request on its own when a
// reused connection closes before any answer, so a dropped answer on a
// reused connection can make the site see the same request twice.
func (p *Proxy) SetKeepAlives(on bool) { p.srv.SetKeepAlivesEnabled(on) }

// rewrite points a request at the target, keeping the client's Host (the
// site's own address, which it checks) and cookies.
func (p *Proxy) rewrite(pr *httputil.ProxyRequest) {
	pr.SetURL(p.target.Load())
	pr.Out.Host = pr.In.Host
}

// Close stops the proxy: held answers are dropped, requests being forwarded
// are cancelled, and it returns once every handler ended. It is safe to call
// more than once.
func (p *Proxy) Close() error {
	p.closeOnce.Do(func() {
		p.mu.Lock()
		p.closed = true
		p.mu.Unlock()
		p.cancel()
		p.closeErr = p.srv.Close()
		p.active.Wait()
		p.transport.CloseIdleConnections()
		if errors.Is(p.closeErr, http.ErrServerClosed) {
			p.closeErr = nil
		}
	})
	return p.closeErr
}
