package demosite_test

import (
	"context"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/browserop/browserop/demosite"
	"github.com/stretchr/testify/require"
)

// t0 has sub-millisecond digits so tests see the store truncate them.
var t0 = time.Date(2026, 11, 30, 10, 0, 0, 123456789, time.UTC)

// clock is a settable clock for Options.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// site is one demosite behind httptest, with its clock.
type site struct {
	*demosite.Server
	URL   string
	Clock *clock
}

// newSite starts a fresh demosite with the oracle on and a clock at t0.
func newSite(tb testing.TB, faults demosite.Faults) *site {
	tb.Helper()
	c := &clock{t: t0}
	s := demosite.New(demosite.Options{Oracle: true, Faults: faults, Now: c.Now})
	ts := httptest.NewServer(s)
	// Cleanups run last-in first-out: release hung handlers before waiting
	// for them.
	tb.Cleanup(ts.Close)
	tb.Cleanup(func() { require.NoError(tb, s.Close()) })
	return &site{Server: s, URL: ts.URL, Clock: c}
}

// client is a browser stand-in that does not follow redirects.
type client struct {
	tb     testing.TB
	base   string
	hc     *http.Client
	cookie *http.Cookie
}

func (st *site) client(tb testing.TB) *client {
	return &client{
		tb:   tb,
		base: st.URL,
		hc: &http.Client{
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
			Timeout:       10 * time.Second,
		},
	}
}

// as returns a client signed in as handle through the Go helper.
func (st *site) as(tb testing.TB, handle string) *client {
	c := st.client(tb)
	c.cookie = st.Login(handle)
	return c
}

type response struct {
	Status int
	Header http.Header
	Body   string
}

func (r response) Location() string { return r.Header.Get("Location") }

func (c *client) do(req *http.Request) (response, error) {
	if c.cookie != nil {
		req.AddCookie(c.cookie)
	}
	res, err := c.hc.Do(req)
	if err != nil {
		return response{}, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return response{}, err
	}
	return response{Status: res.StatusCode, Header: res.Header, Body: string(b)}, nil
}

func (c *client) get(path string) response {
	c.tb.Helper()
	req, err := http.NewRequest(http.MethodGet, c.base+path, nil)
	require.NoError(c.tb, err)
	res, err := c.do(req)
	require.NoError(c.tb, err)
	return res
}

func (c *client) postReq(ctx context.Context, path string, form url.Values) *http.Request {
	c.tb.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, strings.NewReader(form.Encode()))
	require.NoError(c.tb, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return req
}

func (c *client) post(path string, form url.Values) response {
	c.tb.Helper()
	res, err := c.do(c.postReq(context.Background(), path, form))
	require.NoError(c.tb, err)
	return res
}

func (c *client) compose(text string) response {
	c.tb.Helper()
	return c.post("/posts", url.Values{"text": {text}})
}

func (c *client) send(method, path, body string) response {
	c.tb.Helper()
	req, err := http.NewRequest(method, c.base+path, strings.NewReader(body))
	require.NoError(c.tb, err)
	res, err := c.do(req)
	require.NoError(c.tb, err)
	return res
}

// article is one article.post as rendered.
type article struct {
	ID, Author, Parent string
	IsMain             bool // article.post#post
	Text               string
	Datetime           string
	Raw                string
}

var (
	articleRE  = regexp.MustCompile(`(?s)<article class="post"( id="post")? data-id="([^"]*)" data-author="([^"]*)" data-parent="([^"]*)">(.*?)</article>`)
	postTextRE = regexp.MustCompile(`(?s)<div class="post-text">(.*?)</div>`)
	timeRE     = regexp.MustCompile(`<time datetime="([^"]*)">`)
)

func articles(body string) []article {
	var out []article
	for _, m := range articleRE.FindAllStringSubmatch(body, -1) {
		a := article{IsMain: m[1] != "", ID: m[2], Author: m[3], Parent: m[4], Raw: m[0]}
		if t := postTextRE.FindStringSubmatch(m[5]); t != nil {
			a.Text = html.UnescapeString(t[1])
		}
		if t := timeRE.FindStringSubmatch(m[5]); t != nil {
			a.Datetime = t[1]
		}
		out = append(out, a)
	}
	return out
}

// section returns the HTML inside the element that opens with open, up to
// the first close after it.
func section(tb testing.TB, body, open, close string) string {
	tb.Helper()
	i := strings.Index(body, open)
	require.GreaterOrEqual(tb, i, 0, "no %s in page", open)
	rest := body[i:]
	j := strings.Index(rest, close)
	require.GreaterOrEqual(tb, j, 0, "no %s after %s", close, open)
	return rest[:j]
}

var whoamiRE = regexp.MustCompile(`<span id="whoami" data-handle="([^"]*)">signed in as @([^<]*)</span>`)

// whoami returns the signed-in handle a page shows, or "".
func whoami(tb testing.TB, body string) string {
	tb.Helper()
	m := whoamiRE.FindStringSubmatch(body)
	if m == nil {
		require.NotContains(tb, body, `id="whoami"`)
		return ""
	}
	require.Equal(tb, m[1], m[2])
	return m[1]
}

var (
	nextPageRE = regexp.MustCompile(`<a id="next-page" href="([^"]*)">`)
	completeRE = regexp.MustCompile(`<section id="timeline" data-complete="(true|false)"`)
)
