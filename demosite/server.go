package demosite

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// ErrClosed is returned by [Server.Start] after [Server.Close].
var ErrClosed = errors.New("demosite: server closed")

// ErrStarted is returned by [Server.Start] when the server already listens.
var ErrStarted = errors.New("demosite: server already started")

// Options configure a [Server].
type Options struct {
	// Oracle serves the test oracle under /_oracle/. Without it those paths
	// are 404; the Go oracle methods work either way.
	Oracle bool
	// Faults are the switches the server starts with, and returns to on
	// Reset. New does not validate them; call Faults.Validate first.
	Faults Faults
	// Now is the clock for post times and visibility; nil means time.Now.
	// The slow and hang faults wait in real time regardless.
	Now func() time.Time
}

// Server is the demosite: an [http.Handler] with an in-memory store, plus the
// oracle methods tests use. All methods are safe for concurrent use.
type Server struct {
	opts    Options
	now     func() time.Time
	store   *store
	mux     *http.ServeMux
	oracle  *http.ServeMux
	closing chan struct{}

	mu      sync.Mutex
	faults  Faults
	httpSrv *http.Server
	ln      net.Listener
	closed  bool
	wg      sync.WaitGroup
	once    sync.Once
	err     error
}

// New returns a Server with the fixed accounts, no posts, and opts.Faults
// switched on.
func New(opts Options) *Server {
	s := &Server{
		opts:    opts,
		now:     opts.Now,
		store:   newStore(),
		closing: make(chan struct{}),
		faults:  opts.Faults,
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.mux = s.routes()
	s.oracle = s.oracleRoutes()
	return s
}

// Start listens on addr (for example "127.0.0.1:0") and serves in the
// background. It returns the base URL, such as "http://127.0.0.1:41234",
// ErrStarted if the server already listens, ErrClosed after Close, or the
// listen error.
func (s *Server) Start(addr string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return "", ErrClosed
	}
	if s.httpSrv != nil {
		return "", ErrStarted
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("demosite: listen on %s: %w", addr, err)
	}
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	s.httpSrv, s.ln = hs, ln
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		_ = hs.Serve(ln) // returns once Close closed the listener
	}()
	return "http://" + ln.Addr().String(), nil
}

// Close releases requests held by the hang and slow faults, stops the
// listener started by Start and waits for its goroutines. It is safe to call
// more than once and without Start; later calls return the first result.
func (s *Server) Close() error {
	s.once.Do(func() {
		s.mu.Lock()
		s.closed = true
		hs, ln := s.httpSrv, s.ln
		s.mu.Unlock()
		// Stop accepting before releasing held requests, so that nothing a
		// browser sends after the release reaches the store.
		if ln != nil {
			_ = ln.Close()
		}
		close(s.closing)
		if hs != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			// The listener is already closed: Shutdown closing it again
			// is no failure.
			if err := hs.Shutdown(ctx); err != nil && !errors.Is(err, net.ErrClosed) {
				s.err = errors.Join(err, hs.Close())
			}
			s.wg.Wait()
		}
	})
	return s.err
}

// visit is what one request knows about its visitor, fixed when it starts.
type visit struct {
	faults Faults
	me     string // acting handle, "" when not signed in
	token  string // session token as sent, for logout
}

type visitKey struct{}

func visitFrom(r *http.Request) *visit {
	v, _ := r.Context().Value(visitKey{}).(*visit)
	if v == nil {
		return &visit{}
	}
	return v
}

const sessionCookie = "demosite_session"

// ServeHTTP serves the site. The oracle paths bypass every fault.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if r.URL.Path == "/_oracle" || strings.HasPrefix(r.URL.Path, "/_oracle/") {
		if !s.opts.Oracle {
			http.NotFound(w, r)
			return
		}
		s.oracle.ServeHTTP(w, r)
		return
	}
	v := &visit{faults: s.Faults()}
	if !s.wait(r.Context(), v.faults.Slow) {
		drop(w)
		return
	}
	if c, err := r.Cookie(sessionCookie); err == nil {
		v.token = c.Value
		v.me = s.store.session(c.Value)
	}
	if v.faults.SessionExpired {
		v.me = ""
	}
	if v.me != "" && v.faults.SwitchAccount != "" {
		v.me = v.faults.SwitchAccount
	}
	r = r.WithContext(context.WithValue(r.Context(), visitKey{}, v))
	if v.me != "" && isAPI(r) && apiBlocked(w, v.faults) {
		return
	}
	if v.me != "" && r.URL.Path != "/login" && r.URL.Path != "/logout" {
		switch {
		case v.faults.Captcha:
			s.render(w, r, http.StatusForbidden, "captcha", pageData{Title: "Security check"})
			return
		case v.faults.Restricted:
			s.render(w, r, http.StatusForbidden, "restricted", pageData{Title: "Account restricted"})
			return
		case v.faults.RateLimit:
			w.Header().Set("Retry-After", "60")
			s.render(w, r, http.StatusTooManyRequests, "ratelimited", pageData{Title: "Slow down"})
			return
		}
	}
	s.mux.ServeHTTP(w, r)
}

// wait sleeps for d, or until ctx ends or the server closes; it reports
// whether the full time passed.
func (s *Server) wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-s.closing:
		return false
	}
}

// hang holds a request until its client goes away or the server closes, then
// drops the connection without a response.
func (s *Server) hang(ctx context.Context, w http.ResponseWriter) {
	select {
	case <-ctx.Done():
	case <-s.closing:
	}
	drop(w)
}

// drop ends the exchange without a usable response: one byte that is not
// HTTP, then close. Closing without any byte is not enough: Chrome resends a
// request that got an empty response on a connection it counts as reused (a
// preconnected socket counts), up to twice, so the site would commit the same
// POST again where browserop submitted once. An invalid response is never
// resent; Chrome shows ERR_INVALID_HTTP_RESPONSE.
func drop(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, buf, err := hj.Hijack(); err == nil {
			_, _ = buf.WriteString("X")
			_ = buf.Flush()
			_ = conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

// clock returns the current time as the store keeps it: UTC, milliseconds.
func (s *Server) clock() time.Time {
	return s.now().UTC().Truncate(time.Millisecond)
}
