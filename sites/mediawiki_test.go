package sites_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/bundled"
	"github.com/browserop/browserop/internal/testrig/mwsite"
	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/sites"
	"github.com/browserop/browserop/sites/sitetest"
)

// mw is one real MediaWiki for the package's tests, started by the first
// that needs it.
var mw = mwsite.NewShared()

// mwAlice is the account the MediaWiki tests publish as.
var mwAlice = mwsite.User{Login: "alice", Password: "alice-wiki-pass"}

var mwSetup sync.Once

// mediawiki returns the shared wiki, with alice's account.
func mediawiki(t testing.TB) *mwsite.Site {
	site := mw.Site(t)
	mwSetup.Do(func() {
		err := site.CreateUser(context.Background(), mwAlice.Login, mwAlice.Password)
		if err != nil && !errors.Is(err, mwsite.ErrUserExists) {
			require.NoError(t, err)
		}
	})
	return site
}

// mediawikiAdapter is the bundled MediaWiki adapter on site, with alice's
// user name declared (MediaWiki capitalizes it).
func mediawikiAdapter(t testing.TB, site *mwsite.Site) *sites.Declarative {
	t.Helper()
	raw, err := fs.ReadFile(bundled.Sites, "sites/mediawiki.yaml")
	require.NoError(t, err)
	y := strings.Replace(string(raw), "  - http://127.0.0.1:8080\n", "  - "+site.URL()+"\n", 1)
	y += "\naccounts:\n  alice:\n    name: \"Alice\"\n"
	d, err := sites.Parse("mediawiki.yaml", []byte(y))
	require.NoError(t, err)
	return d
}

// mwTab opens a tab signed in to site as alice.
func mwTab(t testing.TB, site *mwsite.Site) *browser.Tab {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	b := shared.Browser(t)
	tab, err := b.NewTab(ctx, "")
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = b.CloseTab(context.Background(), tab) })
	tab.SetActionTimeout(20 * time.Second)
	_, err = tab.Navigate(ctx, site.PageURL("Special:BlankPage"))
	require.NoError(t, err)
	if who, err := mwsite.SignedIn(ctx, tab); err != nil || who != "Alice" {
		require.NoError(t, site.SignIn(ctx, tab, mwAlice.Login, mwAlice.Password))
	}
	return tab
}

// mwTitle is the page a post's text names: its first line, as MediaWiki
// stores it (first letter capitalized, spaces as underscores).
func mwTitle(text string) string {
	title, _, _ := strings.Cut(text, "\n")
	title = strings.ToUpper(title[:1]) + title[1:]
	return strings.ReplaceAll(title, " ", "_")
}

// TestMediaWikiConformance runs the adapter conformance suite for the
// bundled MediaWiki adapter against a real MediaWiki 1.39 from Debian's
// packages: a post is a new page (titled by its first line, its wikitext
// the rest), counted in the wiki's database and found by its history,
// read page by page; a follow is watching a page.
func TestMediaWikiConformance(t *testing.T) {
	site := mediawiki(t)
	d := mediawikiAdapter(t, site)
	ctx := context.Background()
	sitetest.Run(t, sitetest.Harness{
		Adapter: d,
		Actor:   "alice",
		Tab:     func(t *testing.T) *browser.Tab { return mwTab(t, site) },
		Target: func(t *testing.T, _ kind.Kind) string {
			title := fmt.Sprintf("Page to watch %d", time.Now().UnixNano())
			require.NoError(t, site.EditPage(ctx, mwsite.Admin.Login, title, "Something to watch.", "set up"))
			return site.PageURL(title)
		},
		Count: func(t *testing.T, k kind.Kind, text string) int {
			require.Equal(t, kind.Post, k)
			title := mwTitle(text)
			_, body, _ := strings.Cut(text, "\n")
			got, err := site.PageText(ctx, title)
			if errors.Is(err, mwsite.ErrNoPage) {
				return 0
			}
			require.NoError(t, err)
			if strings.TrimSpace(got) != strings.TrimSpace(body) {
				return 0
			}
			n, err := site.RevisionsBy(ctx, title, "Alice")
			require.NoError(t, err)
			return n
		},
		Refusals: map[sites.RefusalKind]func(*testing.T, sites.Intent) func(){
			// The wiki's session store cleared while the form is filled:
			// its POST carries an edit token the wiki no longer knows, and
			// the wiki answers with a preview saying the session was lost,
			// saving nothing.
			sites.RefusedLogin: func(t *testing.T, _ sites.Intent) func() {
				n, err := site.DropSessions(ctx)
				require.NoError(t, err)
				require.NotZero(t, n, "a session to drop")
				return func() { mwTab(t, site) } // signs the browser in again
			},
		},
		Done: func(t *testing.T, _ kind.Kind, target string) bool {
			u, err := url.Parse(target)
			require.NoError(t, err)
			ok, err := site.Watched(ctx, "Alice", u.Query().Get("title"))
			require.NoError(t, err)
			return ok
		},
	})
}

// TestMediaWikiCheck: `sites check` on the bundled adapter finds no
// problem on a stock wiki: the post's edit page of a new title (its
// before step satisfied), its fields, and its search, the history of a
// page that does not exist, which the wiki says is empty (not blind).
// Nothing is saved.
func TestMediaWikiCheck(t *testing.T) {
	site := mediawiki(t)
	tab := mwTab(t, site)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	watched := fmt.Sprintf("Checked page %d", time.Now().UnixNano())
	require.NoError(t, site.EditPage(ctx, mwsite.Admin.Login, watched, "Text.", "set up"))
	target := site.PageURL(watched)
	title := fmt.Sprintf("Sites check %d", time.Now().UnixNano())
	rep, err := mediawikiAdapter(t, site).Check(ctx, tab, "alice", target, title+"\n\nbody")
	require.NoError(t, err)
	require.Empty(t, rep.Problems(), "%+v", rep)
	require.Equal(t, "alice", rep.Identity)
	for _, s := range rep.Searches {
		require.True(t, s.Complete, "%s", s.Kind)
		require.True(t, s.Counted, "the wiki says the history is empty: %s", s.Kind)
	}
	ok, err := site.PageExists(ctx, strings.ReplaceAll(title, " ", "_"))
	require.NoError(t, err)
	require.False(t, ok, "sites check saves nothing")
}
