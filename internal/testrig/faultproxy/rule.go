package faultproxy

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"
)

// Mode is what a rule does to the requests it matches.
type Mode int

const (
	// Pass forwards the request and its answer unchanged (the rule only
	// counts).
	Pass Mode = iota
	// DropAfterCommit forwards the request, waits for the site's whole
	// answer, then closes the client's connection without writing a byte:
	// the effect happened, the client sees an empty response. Chrome
	// resends a request, a POST too, on its own when a reused keep-alive
	// connection closes before any answer, once per idle connection it
	// holds: with Limit 1 the resent request passes (Matched counts it; a
	// WordPress comment then answers 409, a duplicate); with Limit 0 each is
	// dropped until Chrome runs out of reused connections and shows
	// net::ERR_EMPTY_RESPONSE. SetKeepAlives(false) makes the first drop
	// final.
	DropAfterCommit
	// ErrorAfterCommit forwards the request, waits for the site's whole
	// answer, throws it away and answers 500 with a short text body.
	ErrorAfterCommit
	// Hold forwards the request, waits for the site's whole answer and
	// keeps it until the rule is released (then the client gets it) or the
	// client goes away or the proxy closes (then nothing is written).
	Hold
	// DropBeforeSite closes the client's connection without forwarding
	// the request: the site never sees it, nothing happened, and the
	// client sees an empty response.
	DropBeforeSite
)

// String names the mode as the fault switches do.
func (m Mode) String() string {
	switch m {
	case Pass:
		return "pass"
	case DropAfterCommit:
		return "drop_after_commit"
	case ErrorAfterCommit:
		return "error_after_commit"
	case Hold:
		return "hold"
	case DropBeforeSite:
		return "drop_before_site"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ErrorBody is the body of ErrorAfterCommit's 500.
const ErrorBody = "faultproxy: internal server error after commit\n"

// Spec says which requests a rule matches and what it does to them.
type Spec struct {
	// Method matches the request's method exactly; "" matches any.
	Method string
	// Path is a regular expression (Go syntax, unanchored) matched against
	// the request URI (path and query) as sent, and as it reads with its
	// query percent-decoded: either matching is a match. So
	// `rest_route=/wp/v2/posts/\d+` matches the block editor's
	// "/index.php?rest_route=%2Fwp%2Fv2%2Fposts%2F12&_locale=user". ""
	// matches any.
	Path string
	Mode Mode
	// Limit is how many matching requests get Mode, the first ones; later
	// ones pass (and are still counted). 0 means every one.
	Limit int
}

// Rule is a Spec added to a proxy, with what it matched so far.
type Rule struct {
	spec Spec
	path *regexp.Regexp

	mu       sync.Mutex
	matched  int
	faulted  int
	changed  chan struct{} // closed and replaced when faulted grows
	released chan struct{}
	relOnce  sync.Once
}

// Add adds a rule after those already there: a request takes the first
// rule that matches it. It returns an error for a Path that does not
// compile.
func (p *Proxy) Add(s Spec) (*Rule, error) {
	r := &Rule{spec: s, changed: make(chan struct{}), released: make(chan struct{})}
	if s.Path != "" {
		re, err := regexp.Compile(s.Path)
		if err != nil {
			return nil, fmt.Errorf("faultproxy: rule path: %w", err)
		}
		r.path = re
	}
	p.mu.Lock()
	p.rules = append(p.rules, r)
	p.mu.Unlock()
	return r, nil
}

// Remove takes r off the proxy: later requests no longer match it. Answers
// it holds stay held until it is released.
func (p *Proxy) Remove(r *Rule) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, x := range p.rules {
		if x == r {
			p.rules = append(p.rules[:i:i], p.rules[i+1:]...)
			return
		}
	}
}

// match returns the first rule matching method and uri, and whether the
// request gets the rule's mode (within its Limit); nil when none matches.
func (p *Proxy) match(method, uri string) (*Rule, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range p.rules {
		if r.spec.Method != "" && r.spec.Method != method {
			continue
		}
		if r.path != nil && !r.path.MatchString(uri) && !r.path.MatchString(decoded(uri)) {
			continue
		}
		r.mu.Lock()
		r.matched++
		apply := r.spec.Limit == 0 || r.matched <= r.spec.Limit
		r.mu.Unlock()
		return r, apply
	}
	return nil, false
}

// decoded returns uri with its query percent-decoded (and + read as a
// space), or uri when the query does not decode.
func decoded(uri string) string {
	path, query, ok := strings.Cut(uri, "?")
	if !ok {
		return uri
	}
	q, err := url.QueryUnescape(query)
	if err != nil {
		return uri
	}
	return path + "?" + q
}

// Spec returns what the rule was added with.
func (r *Rule) Spec() Spec { return r.spec }

// Matched returns how many requests matched the rule so far, faulted or
// not (past its Limit, or still on their way).
func (r *Rule) Matched() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.matched
}

// Faulted returns how many requests the rule's mode was carried out on:
// the site answered and the connection was dropped, the 500 was sent, or
// the answer is held (or was, before a release). Pass counts every
// answered request.
func (r *Rule) Faulted() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.faulted
}

func (r *Rule) fault() {
	r.mu.Lock()
	r.faulted++
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
}

// Wait waits until Faulted reaches n, or ctx ends (its error).
func (r *Rule) Wait(ctx context.Context, n int) error {
	for {
		r.mu.Lock()
		got, ch := r.faulted, r.changed
		r.mu.Unlock()
		if got >= n {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("faultproxy: %d of %d requests faulted: %w", got, n, ctx.Err())
		}
	}
}

// Release lets a Hold rule's held answers go to their clients, and every
// later one at once. It is safe to call more than once.
func (r *Rule) Release() { r.relOnce.Do(func() { close(r.released) }) }
