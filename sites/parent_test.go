package sites_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/demosite"
	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/media"
	"github.com/browserop/browserop/sites"
	"github.com/browserop/browserop/verify"
)

// pageParentDemo is the demo adapter with the replies searched as
// WordPress searches comments: on the target's page, each reply's parent
// read as that page (parent: {page: true}), and a fragment naming a reply
// (#reply-N) kept as part of an address, as WordPress keeps #comment-N.
func pageParentDemo(t *testing.T) *sites.Declarative {
	t.Helper()
	y := string(demoWith(t, "  # A thread part is a reply", `    search:
      url: "{target}"
      item: "#replies article.post"
      text: {selector: ".post-text"}
      author: {attribute: data-author}
      time: {selector: "time", attribute: datetime}
      link: {selector: "a.permalink", attribute: href}
      parent: {page: true}
      media: *post-media
      complete_marker: "form#reply-form"
      max_pages: 1
      lookback: 72h
      settle: 1s
  # A thread part is a reply`))
	y = strings.Replace(y, "  thread_part: *reply\n", "", 1) + "canonical:\n  keep_fragment: 'reply-\\d+'\n"
	d, err := sites.Parse("demo.yaml", []byte(y))
	require.NoError(t, err)
	d, err = d.WithOrigins(base)
	require.NoError(t, err)
	return d
}

// TestPageParentIsOnlyThePage: under parent: {page: true} the parent of a
// list's items is the page they are listed on, which is the intent's
// parent only when the intent's target is that page itself. A reply whose
// target names a comment on the page (…#reply-N) can neither be verified
// by the page's list (a top-level reply with its text is not it) nor be
// published: Fill refuses it before anything is typed.
func TestPageParentIsOnlyThePage(t *testing.T) {
	e := setup(t, demosite.Faults{})
	d := pageParentDemo(t)
	post := demo.SeedPost("bob", "a post with replies", time.Now().Add(-time.Hour))
	comment := demo.SeedReply("carol", post, "a reply to answer", time.Now().Add(-30*time.Minute))
	nested := fmt.Sprintf("%s#reply-%d", permalink(post), comment)
	require.Equal(t, nested, d.Canonical(nested), "the fragment is part of the address")

	c := d.Compares(kind.Reply)
	require.True(t, c.Parent && c.ParentFromPage && c.Text && c.Author && c.Link && c.Media)
	require.Empty(t, d.Uncompared(sites.Intent{Kind: kind.Reply, Actor: "alice", Target: permalink(post), Text: "x"}))
	require.Equal(t, []string{"parent"}, d.Uncompared(sites.Intent{Kind: kind.Reply, Actor: "alice", Target: nested, Text: "x"}))

	// A reply to the post: the page is its parent, and it is verified.
	start := time.Now().Add(-time.Second)
	text := "an answer on the page"
	obs, err := perform(e.ctx, d, e.tab, sites.Intent{Kind: kind.Reply, Actor: "alice", Target: permalink(post), Text: text})
	require.NoError(t, err)
	vin := verify.Intent{Kind: kind.Reply, Actor: "alice", Text: text, ExpectedParent: d.Canonical(permalink(post)), NotBefore: start}
	res, err := d.Search(e.ctx, e.tab, sites.Query{Kind: kind.Reply, Actor: "alice", Target: permalink(post)})
	require.NoError(t, err)
	v := verify.Classify(vin, res.View(time.Now()), verify.Options{Settle: res.Settle, Skew: time.Minute})
	require.Equal(t, verify.Verified, v.Outcome, v.Reason)
	require.Equal(t, obs.URL, v.URL)

	// The same text meant for the comment: the top-level reply on the
	// page is not its result, and the list cannot show that it is absent.
	vin.ExpectedParent = d.Canonical(nested)
	res, err = d.Search(e.ctx, e.tab, sites.Query{Kind: kind.Reply, Actor: "alice", Target: nested})
	require.NoError(t, err)
	require.NotEmpty(t, res.Items)
	for _, it := range res.Items {
		require.Empty(t, it.Parent)
		require.Contains(t, it.Problems, "parent: the target is a part of a page (its fragment), and the search reads only the page as each item's parent")
	}
	view := res.View(time.Now().Add(time.Hour))
	require.False(t, view.Complete)
	v = verify.Classify(vin, view, verify.Options{Settle: res.Settle, Skew: time.Minute})
	require.Equal(t, verify.Ambiguous, v.Outcome, "never verified by a reply to the page, never proven absent: %s", v.Reason)
	require.Contains(t, v.Reason, "parent unusable")

	// And it is not published: the page's form would answer the post.
	before := len(demo.Effects())
	in := sites.Intent{Kind: kind.Reply, Actor: "alice", Target: nested, Text: "meant for the comment"}
	_, err = d.Open(e.ctx, e.tab, in)
	require.NoError(t, err)
	_, err = d.Fill(e.ctx, e.tab, in)
	require.ErrorIs(t, err, sites.ErrUnverifiable)
	require.ErrorIs(t, err, sites.ErrStepFailed, "a failed preparation: nothing was submitted")
	require.ErrorContains(t, err, "cannot compare the parent")
	v2, err := e.tab.Value(e.ctx, "textarea#reply-text")
	require.NoError(t, err)
	require.Empty(t, strings.TrimSpace(v2), "nothing was typed")
	require.Len(t, demo.Effects(), before)
}

// TestCompares: what each bundled adapter's searches compare.
func TestCompares(t *testing.T) {
	d, err := sites.Load(demoPath)
	require.NoError(t, err)
	for _, k := range []kind.Kind{kind.Post, kind.Reply, kind.ThreadPart} {
		require.Equal(t, sites.Comparison{Text: true, Author: true, Time: true, Link: true, Parent: true, Media: true, AltText: true}, d.Compares(k), k)
	}
	require.Equal(t, sites.Comparison{}, d.Compares(kind.Like))
	require.Empty(t, d.Uncompared(sites.Intent{Kind: kind.Reply, Target: "http://127.0.0.1:8787/p/1#x", Media: []media.Item{{Type: "png"}}}),
		"the demo reads each item's parent: any target compares")

	wp, err := sites.Load("../bundled/sites/wordpress.yaml")
	require.NoError(t, err)
	require.Equal(t, sites.Comparison{Text: true, Author: true, Own: true, Time: true, Link: true, Media: true}, wp.Compares(kind.Post))
	// The comments' search reads each comment's parent from the comment
	// (a top-level one's Reply link; a nested one's is not read at all):
	// compared for any target, a comment's too (docs/sites.md, WordPress).
	require.Equal(t, sites.Comparison{Text: true, Author: true, Time: true, Link: true, Parent: true}, wp.Compares(kind.Reply))
	require.Empty(t, wp.Uncompared(sites.Intent{Kind: kind.Reply, Target: "http://127.0.0.1:8080/?p=5"}))
	require.Empty(t, wp.Uncompared(sites.Intent{Kind: kind.Reply, Target: "http://127.0.0.1:8080/?p=5#comment-2"}),
		"a reply to a comment: each comment's parent is read per comment")
	require.Equal(t, []string{"media"}, wp.Uncompared(sites.Intent{Kind: kind.Reply, Target: "http://127.0.0.1:8080/?p=5#comment-2", Media: []media.Item{{Type: "png"}}}))
	require.Empty(t, wp.Uncompared(sites.Intent{Kind: kind.Reply, Target: "http://127.0.0.1:8080/?p=5#respond"}),
		"a fragment the canonical form drops names the page")
}
