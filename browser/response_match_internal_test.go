package browser

import (
	"regexp"
	"testing"

	"github.com/chromedp/cdproto/network"
)

// A request whose body Chrome did not report may be the submission: it
// matches a ResponseMatch with a Body, as one whose body matches does.
func TestResponseMatchBody(t *testing.T) {
	m := &ResponseMatch{Method: "PUT", URL: regexp.MustCompile(`/posts/\d+$`), Body: regexp.MustCompile(`"status":"publish"`)}
	req := func(body string, has bool) *network.Request {
		r := &network.Request{Method: "PUT", URL: "https://x.example/posts/7", HasPostData: has}
		if body != "" {
			r.PostDataEntries = []*network.PostDataEntry{{Bytes: []byte(body[:3])}, {Bytes: []byte(body[3:])}}
		}
		return r
	}
	for _, tc := range []struct {
		r    *network.Request
		want bool
	}{
		{req(`{"status":"publish"}`, true), true},
		{req(`{"status":"draft"}`, true), false},
		{req("", true), true},   // not reported: may be it
		{req("", false), false}, // no body at all: not the publishing one
	} {
		if got := m.matches(tc.r); got != tc.want {
			t.Errorf("matches(%+v) = %v, want %v", tc.r, got, tc.want)
		}
	}
}
