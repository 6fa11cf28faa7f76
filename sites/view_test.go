package sites_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/sites"
	"github.com/browserop/browserop/verify"
)

// A search's view: items read exactly are compared; one read with problems
// makes the view incomplete and is named by its problems in fixed form,
// never by what the page said.
func TestSearchResultView(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	r := sites.SearchResult{Complete: true, Items: []sites.Item{
		{Author: "alice", Text: "hi", Link: "https://s.test/p/1", Time: at, Media: []sites.MediaSeen{{Type: "png", Alt: "a", AltRead: true}}},
		{Problems: []string{"author missing", "link matched 2 elements", "parent: \"https://evil.test\" is off the site", "time unparsable", "<b>page text</b>"}},
	}}
	v := r.View(at)
	require.False(t, v.Complete, "an unread item may be the result")
	require.Equal(t, at, v.ObservedAt)
	require.Equal(t, []verify.Item{{Author: "alice", Text: "hi", URL: "https://s.test/p/1", At: at,
		Media: []verify.Media{{Type: "png", Alt: "a", AltShown: true}}}}, v.Items)
	require.Equal(t, [][]string{{"author missing", "link doubled", "parent unusable", "time unparsable", "unreadable field"}}, v.Unread)

	r.Items = r.Items[:1]
	require.True(t, r.View(at).Complete)
}

// The landed page counts only for the fields the adapter read.
func TestObservedLanded(t *testing.T) {
	o := sites.Observed{Text: "hi", Author: "alice", Media: []sites.MediaSeen{{Type: "jpeg"}}, Read: []string{"link", "media"}}
	require.Equal(t, verify.LandedResult{Text: "hi", Author: "alice", Media: []verify.Media{{Type: "jpeg"}}, ReadMedia: true}, o.LandedResult())
}
