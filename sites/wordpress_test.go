package sites_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/internal/wpsite"
	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/sites"
	"github.com/browserop/browserop/sites/sitetest"
)

// wp is one real WordPress for the package's tests, started by the first
// that needs it.
var wp = wpsite.NewShared()

// wordpressAdapter is the bundled WordPress adapter on site, with the test
// site's accounts declared (alice's display name is not her login).
func wordpressAdapter(t testing.TB, site *wpsite.Site) *sites.Declarative {
	t.Helper()
	y, err := site.AdapterYAML()
	require.NoError(t, err)
	d, err := sites.Parse("wordpress.yaml", y)
	require.NoError(t, err)
	return d
}

var wpSetup sync.Once

// wordpress returns the shared site, set up for publishing as alice:
// comments need no approval and are not held back by the flood check.
func wordpress(t testing.TB) *wpsite.Site {
	site := wp.Site(t)
	wpSetup.Do(func() {
		ctx := context.Background()
		for name, v := range map[string]string{"comment_moderation": "0", "comment_previously_approved": "0", "browserop_test_flood": "off"} {
			require.NoError(t, site.SetOption(ctx, name, v))
		}
	})
	return site
}

// wpTab opens a tab signed in to site as alice.
func wpTab(t testing.TB, site *wpsite.Site) *browser.Tab {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	b := shared.Browser(t)
	tab, err := b.NewTab(ctx, "")
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = b.CloseTab(context.Background(), tab) })
	tab.SetActionTimeout(20 * time.Second)
	_, err = tab.Navigate(ctx, site.URL()+"/wp-admin/profile.php")
	require.NoError(t, err)
	if who, err := wpsite.SignedIn(ctx, tab); err != nil || who != "alice" {
		require.NoError(t, site.SignIn(ctx, tab, "alice", wpsite.Alice.Password))
	}
	return tab
}

// wpCarolPost publishes a post by carol to act on and returns its address.
func wpCarolPost(t testing.TB, site *wpsite.Site) (url string, id int) {
	t.Helper()
	id, err := site.InsertPost(context.Background(), wpsite.Post{Author: "carol", Title: fmt.Sprintf("Carol's post %d", time.Now().UnixNano()),
		Content: "<!-- wp:paragraph -->\n<p>Something to reply to.</p>\n<!-- /wp:paragraph -->"})
	require.NoError(t, err)
	return fmt.Sprintf("%s/?p=%d", site.URL(), id), id
}

// TestWordPressConformance runs the adapter conformance suite for the
// bundled WordPress adapter against a real WordPress 6.1 from Debian's
// packages: a post through the block editor (welcome guide, block
// appender, pre-publish panel), a comment as a reply, both counted in the
// database, found by the searches, and the comment form's refusals.
func TestWordPressConformance(t *testing.T) {
	site := wordpress(t)
	d := wordpressAdapter(t, site)
	ctx := context.Background()
	alice := site.UserID("alice")
	sitetest.Run(t, sitetest.Harness{
		Adapter: d,
		Actor:   "alice",
		Tab:     func(t *testing.T) *browser.Tab { return wpTab(t, site) },
		Target: func(t *testing.T, _ kind.Kind) string {
			u, _ := wpCarolPost(t, site)
			return u
		},
		Count: func(t *testing.T, k kind.Kind, text string) int {
			var n int
			var err error
			if k == kind.Post {
				title, _, _ := strings.Cut(text, "\n")
				n, err = site.Count(ctx, "SELECT COUNT(*) FROM wp_posts WHERE post_type = 'post' AND post_status = 'publish' AND post_author = ? AND post_title = ?", alice, title)
			} else {
				n, err = site.Count(ctx, "SELECT COUNT(*) FROM wp_comments WHERE user_id = ? AND comment_content = ? AND comment_approved <> 'trash'", alice, text)
			}
			require.NoError(t, err)
			return n
		},
		Refusals: map[sites.RefusalKind]func(*testing.T, sites.Intent) func(){
			sites.RefusedDuplicate: func(t *testing.T, in sites.Intent) func() {
				// WordPress's duplicate check matches the post, the author's
				// name or e-mail and the text.
				_, err := site.InsertComment(ctx, wpsite.Comment{PostID: postID(t, in.Target), Author: "alice", Content: in.Text})
				require.NoError(t, err)
				return func() {}
			},
			sites.RefusedRateLimit: func(t *testing.T, in sites.Intent) func() {
				require.NoError(t, site.SetOption(ctx, "browserop_test_flood", "on"))
				_, err := site.InsertComment(ctx, wpsite.Comment{PostID: postID(t, in.Target), Author: "alice", Content: "a moment ago"})
				require.NoError(t, err)
				return func() { require.NoError(t, site.SetOption(ctx, "browserop_test_flood", "off")) }
			},
			sites.RefusedValidation: func(t *testing.T, in sites.Intent) func() {
				// The session is lost at submit: the form then posts as a
				// visitor without name and e-mail.
				require.NoError(t, site.Exec(ctx, "DELETE FROM wp_usermeta WHERE user_id = ? AND meta_key = 'session_tokens'", alice))
				return func() {}
			},
			sites.RefusedLogin: func(t *testing.T, in sites.Intent) func() {
				// The same, on a site where only signed-in users comment.
				require.NoError(t, site.SetOption(ctx, "comment_registration", "1"))
				require.NoError(t, site.Exec(ctx, "DELETE FROM wp_usermeta WHERE user_id = ? AND meta_key = 'session_tokens'", alice))
				return func() { require.NoError(t, site.SetOption(ctx, "comment_registration", "0")) }
			},
		},
		Timeout: 3 * time.Minute,
	})
}

func postID(t *testing.T, target string) int {
	t.Helper()
	var id int
	_, err := fmt.Sscanf(target[strings.Index(target, "?p=")+3:], "%d", &id)
	require.NoError(t, err, target)
	return id
}

// TestWordPressThreadedComments: a comment with replies under it (WordPress
// nests them in the comment's own list) is read as one item with its own
// fields, and so is each reply: no item is unreadable, so a search of a
// threaded page can still prove absence.
func TestWordPressThreadedComments(t *testing.T) {
	site := wordpress(t)
	d := wordpressAdapter(t, site)
	tab := wpTab(t, site)
	ctx := context.Background()
	target, id := wpCarolPost(t, site)
	parent, err := site.InsertComment(ctx, wpsite.Comment{PostID: id, Author: "alice", Content: "the first word"})
	require.NoError(t, err)
	_, err = site.InsertComment(ctx, wpsite.Comment{PostID: id, Parent: parent, Author: "carol", Content: "an answer under it"})
	require.NoError(t, err)
	res, err := d.Search(ctx, tab, sites.Query{Kind: kind.Reply, Actor: "alice", Target: target})
	require.NoError(t, err)
	require.Len(t, res.Items, 2)
	for _, it := range res.Items {
		require.True(t, it.OK(), "%+v", it)
	}
	require.Equal(t, "alice", res.Items[0].Author)
	require.Equal(t, "the first word", strings.TrimSpace(res.Items[0].Text))
	require.Equal(t, "carol", res.Items[1].Author)
	require.True(t, res.Complete)
}
