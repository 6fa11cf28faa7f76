package browser

import (
	"regexp"
	"testing"

	"github.com/chromedp/cdproto/network"
)

// Every request of the method and URL is a request of the submission,
// whatever its body; its answer is a landing sign only when its body
// matches, or when Chrome did not report it (it may be the submission).
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
		sign bool
	}{
		{req(`{"status":"publish"}`, true), true},
		{req(`{"status":"draft"}`, true), false},
		{req("", true), true},   // not reported: may be it
		{req("", false), false}, // no body at all: not the publishing one
	} {
		request, sign := m.matches(tc.r)
		if !request || sign != tc.sign {
			t.Errorf("matches(%+v) = %v, %v, want true, %v", tc.r, request, sign, tc.sign)
		}
	}
	other := &network.Request{Method: "POST", URL: "https://x.example/posts/7"}
	if request, sign := m.matches(other); request || sign {
		t.Errorf("another method matched: %v, %v", request, sign)
	}
}
