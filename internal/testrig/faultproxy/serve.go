package faultproxy

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"time"
)

// Request is one request the proxy saw, in the order they arrived.
type Request struct {
	Time   time.Time
	Method string
	URI    string // path and query, as sent
	// Mode is what the proxy did: the matching rule's mode, or Pass.
	Mode Mode
	// Status is the site's answer (502 when it could not be reached), or
	// 0 while the request is on its way. The client got it only when Mode
	// is Pass, or Hold and Delivered.
	Status int
	// Delivered says the client was sent the answer.
	Delivered bool
}

// Requests returns the requests seen so far (the last 10000).
func (p *Proxy) Requests() []Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Request(nil), p.seen...)
}

// note records a request and returns its index for update.
func (p *Proxy) note(r Request) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.seen) == maxSeen {
		p.seen = append(p.seen[:0:0], p.seen[maxSeen/2:]...)
	}
	p.seen = append(p.seen, r)
	return len(p.seen) - 1
}

func (p *Proxy) update(i int, uri string, f func(*Request)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	// The log may have been trimmed since: find the entry again.
	if i >= len(p.seen) || p.seen[i].URI != uri {
		for i = len(p.seen) - 1; i >= 0 && p.seen[i].URI != uri; i-- {
		}
		if i < 0 {
			return
		}
	}
	f(&p.seen[i])
}

func (p *Proxy) serve(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		http.Error(w, "faultproxy: closed", http.StatusServiceUnavailable)
		return
	}
	p.active.Add(1)
	p.mu.Unlock()
	defer p.active.Done()
	if p.target.Load() == nil {
		http.Error(w, "faultproxy: no target yet", http.StatusBadGateway)
		return
	}
	uri := r.URL.RequestURI()
	rule, apply := p.match(r.Method, uri)
	mode := Pass
	if rule != nil && apply {
		mode = rule.spec.Mode
	}
	idx := p.note(Request{Time: time.Now(), Method: r.Method, URI: uri, Mode: mode})

	if mode == Pass {
		sw := &statusWriter{ResponseWriter: w}
		p.rp.ServeHTTP(sw, r)
		p.update(idx, uri, func(q *Request) { q.Status, q.Delivered = sw.status(), true })
		if rule != nil && apply { // a Pass rule; not one past its Limit
			rule.fault()
		}
		return
	}

	if mode == DropBeforeSite {
		rule.fault()
		drop(w)
		return
	}

	// The site must finish its work whatever the client does meanwhile:
	// the request to it ends only with the proxy.
	ctx, cancel := context.WithCancel(p.ctx)
	defer cancel()
	rec := newRecorder()
	p.rp.ServeHTTP(rec, r.WithContext(ctx))
	p.update(idx, uri, func(q *Request) { q.Status = rec.code })

	switch mode {
	case DropAfterCommit:
		rule.fault()
		drop(w)
	case ErrorAfterCommit:
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Content-Length", strconv.Itoa(len(ErrorBody)))
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(ErrorBody))
		rule.fault()
	case Hold:
		rule.fault()
		select {
		case <-rule.released:
		case <-r.Context().Done():
			return
		case <-p.ctx.Done():
			drop(w)
			return
		}
		rec.replay(w)
		p.update(idx, uri, func(q *Request) { q.Delivered = true })
	}
}

// drop closes the client's connection without an answer.
func drop(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	// Without a hijackable connection, the server closes it for us.
	panic(http.ErrAbortHandler)
}

// statusWriter notes the status a passed-through answer had.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.code == 0 && code >= 200 {
		s.code = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.code == 0 {
		s.code = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusWriter) status() int { return s.code }

// Unwrap lets http.ResponseController reach the connection (flushes).
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// recorder keeps a whole answer of the site.
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func newRecorder() *recorder { return &recorder{header: http.Header{}} }

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) {
	if r.code == 0 && code >= 200 { // informational answers are not kept
		r.code = code
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	return r.body.Write(b)
}

// replay writes the kept answer to w.
func (r *recorder) replay(w http.ResponseWriter) {
	h := w.Header()
	for k, v := range r.header {
		h[k] = v
	}
	code := r.code
	if code == 0 {
		code = http.StatusOK
	}
	w.WriteHeader(code)
	_, _ = w.Write(r.body.Bytes())
}
