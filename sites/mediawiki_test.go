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
	"github.com/browserop/browserop/verify"
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

// mwReplySection is the heading and text of the section a reply's
// expected text (Expected: its heading shown as the summary of a new
// section, "(→HEADING: new section)", then its text) is in the wikitext.
func mwReplySection(t testing.TB, expected string) (heading, text string) {
	t.Helper()
	first, text, _ := strings.Cut(expected, "\n")
	heading, ok := strings.CutPrefix(first, "(→\u200e")
	require.True(t, ok, "a reply's expected title: %q", first)
	heading, ok = strings.CutSuffix(heading, ": new section)")
	require.True(t, ok, "a reply's expected title: %q", first)
	return heading, text
}

// mustText is the current wikitext of title.
func mustText(t testing.TB, site *mwsite.Site, title string) string {
	t.Helper()
	text, err := site.PageText(context.Background(), title)
	require.NoError(t, err)
	return text
}

// TestMediaWikiConformance runs the adapter conformance suite for the
// bundled MediaWiki adapter against a real MediaWiki 1.39 from Debian's
// packages: a post is a new page (titled by its first line, its wikitext
// the rest), counted in the wiki's database and found by its history,
// read page by page; a reply is a new section of a page's talk page
// (headed by its first line), counted in the talk pages' wikitext and
// found by the talk page's history, both to a page whose talk page does
// not exist yet and to one whose talk page holds sections already (one
// of them alice's); a follow is watching a page.
func TestMediaWikiConformance(t *testing.T) {
	site := mediawiki(t)
	d := mediawikiAdapter(t, site)
	ctx := context.Background()
	sitetest.Run(t, sitetest.Harness{
		Adapter: d,
		Actor:   "alice",
		Tab:     func(t *testing.T) *browser.Tab { return mwTab(t, site) },
		// A fresh page, whose talk page does not exist yet: the reply's
		// search reads the wiki's empty history before the click.
		Target: func(t *testing.T, _ kind.Kind) string {
			title := fmt.Sprintf("Page to watch %d", time.Now().UnixNano())
			require.NoError(t, site.EditPage(ctx, mwsite.Admin.Login, title, "Something to watch.", "set up"))
			return site.PageURL(title)
		},
		TitledReplies: true,
		Targets: map[kind.Kind]map[string]func(*testing.T) string{
			// A page whose talk page has sections already, one of them
			// alice's with the very text the reply will have but for its
			// run's number, and another account's after it; addressed as
			// /wiki/T, with a title MediaWiki escapes in its links.
			kind.Reply: {"TalkWithSections": func(t *testing.T) string {
				title := fmt.Sprintf("Café notes/%d, part (1): replies", time.Now().UnixNano())
				require.NoError(t, site.EditPage(ctx, mwsite.Admin.Login, title, "Notes.", "set up"))
				alice, err := site.SignInHTTP(ctx, mwAlice.Login, mwAlice.Password)
				require.NoError(t, err)
				_, err = alice.NewSection(ctx, "Talk:"+title, "reply 1", "browserop conformance reply, checked once")
				require.NoError(t, err)
				require.NoError(t, site.EditPage(ctx, mwsite.Admin.Login, "Talk:"+title,
					mustText(t, site, "Talk:"+title)+"\n\n== Another account's ==\n\nSomething else.", "set up"))
				u := site.PageURL(title)
				return strings.Replace(u, "/index.php?title=", "/wiki/", 1)
			}},
		},
		Count: func(t *testing.T, k kind.Kind, text string) int {
			if k == kind.Reply {
				heading, body := mwReplySection(t, text)
				n, err := site.TalkSections(ctx, heading, body)
				require.NoError(t, err)
				return n
			}
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
// before step satisfied), its fields, typed with the text and read back,
// the Save button counted where the click would be (never made), and its
// search, the history of a page that does not exist, which the wiki says
// is empty (not blind). The edit page, which asks before it is left with
// text typed, is left. Nothing is saved.
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
	_, sels := checkPage(t, rep, "actions.post.open")
	require.Equal(t, 1, sels["actions.post.fields[0].selector@"+sites.CheckedAfterBefore].Count)
	require.Equal(t, 1, sels["actions.post.submit.selector@"+sites.CheckedAtClick].Count, "followed to the click: %+v", rep.Pages)
	for _, s := range rep.Searches {
		require.True(t, s.Complete, "%s", s.Kind)
		require.True(t, s.Counted, "the wiki says the history is empty: %s", s.Kind)
	}
	ok, err := site.PageExists(ctx, strings.ReplaceAll(title, " ", "_"))
	require.NoError(t, err)
	require.False(t, ok, "sites check saves nothing")
}

// TestMediaWikiReplyIsNotAnEdit: alice's section with a reply's heading
// and text is on the talk page before the click (the baseline), and her
// later edit of another section leaves it last on the page. That edit's
// revision shows the same last section, but its summary is not a new
// section's: it is never taken for the reply (it keeps the verdict
// ambiguous, an item of hers not explained), while a new section with the
// same heading and text is.
func TestMediaWikiReplyIsNotAnEdit(t *testing.T) {
	site := mediawiki(t)
	d := mediawikiAdapter(t, site)
	tab := mwTab(t, site)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	page := fmt.Sprintf("Edited talk %d", time.Now().UnixNano())
	talk := "Talk:" + page
	require.NoError(t, site.EditPage(ctx, mwsite.Admin.Login, page, "A page.", "set up"))
	require.NoError(t, site.EditPage(ctx, mwsite.Admin.Login, talk, "== First ==\n\nAn older topic.", "set up"))
	alice, err := site.SignInHTTP(ctx, mwAlice.Login, mwAlice.Password)
	require.NoError(t, err)
	heading, body := "Same words", "Said twice, once by hand."
	_, err = alice.NewSection(ctx, talk, heading, body)
	require.NoError(t, err)

	target := site.PageURL(page)
	text := heading + "\n\n" + body
	q := sites.Query{Kind: kind.Reply, Actor: "alice", Target: target, Text: text}
	vin := verify.Intent{Kind: kind.Reply, Actor: "alice", Text: d.Expected(kind.Reply, "alice", text, time.Now()),
		ExpectedParent: d.Canonical(target), NotBefore: time.Now()}
	res, err := d.Search(ctx, tab, q)
	require.NoError(t, err)
	vin.Baseline, vin.HaveBaseline = verify.BaselineOf(vin, res.View(time.Now()))
	require.True(t, vin.HaveBaseline, "the history is read whole: %v", problems(res))
	require.Len(t, vin.Baseline, 1, "alice's section is the reply's twin")

	classify := func() verify.Verdict {
		res, err := d.Search(ctx, tab, q)
		require.NoError(t, err)
		require.True(t, res.Complete, "%v", problems(res))
		return verify.Classify(vin, res.View(time.Now().Add(time.Hour)), verify.Options{Settle: res.Settle, Skew: time.Minute})
	}
	// Her edit of the first section: the page still ends with her section.
	wikitext := mustText(t, site, talk)
	_, err = alice.Edit(ctx, talk, strings.Replace(wikitext, "An older topic.", "An older topic, fixed.", 1), "fix a typo")
	require.NoError(t, err)
	v := classify()
	require.Equal(t, verify.Ambiguous, v.Outcome, "an edit is no reply: %s", v.Reason)
	require.NotEmpty(t, v.Unexplained, "her edit is an item of hers the reply does not explain")

	// A new section, headed and worded the same, is.
	added, err := alice.NewSection(ctx, talk, heading, body)
	require.NoError(t, err)
	v = classify()
	require.Equal(t, verify.Verified, v.Outcome, "%s", v.Reason)
	require.Contains(t, v.URL, fmt.Sprintf("oldid=%d", added.NewRevID))
}

// problems are the read problems of a search's items.
func problems(res sites.SearchResult) []string {
	var out []string
	for _, it := range res.Items {
		out = append(out, it.Problems...)
	}
	return out
}

// TestMediaWikiReplyWithoutText: a one-line reply has a heading and no
// text, which MediaWiki refuses with the form again, saving nothing ("the
// page you are creating is blank" on a talk page that does not exist,
// "Please enter a comment" on one that does): a validation refusal,
// proven as the answer to the one POST, definitive.
func TestMediaWikiReplyWithoutText(t *testing.T) {
	for _, talkExists := range []bool{false, true} {
		t.Run(map[bool]string{false: "NoTalkPage", true: "TalkPage"}[talkExists], func(t *testing.T) { replyWithoutText(t, talkExists) })
	}
}

func replyWithoutText(t *testing.T, talkExists bool) {
	site := mediawiki(t)
	d := mediawikiAdapter(t, site)
	tab := mwTab(t, site)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	page := fmt.Sprintf("Unanswered page %d", time.Now().UnixNano())
	require.NoError(t, site.EditPage(ctx, mwsite.Admin.Login, page, "A page.", "set up"))
	talk, revisions := "Talk:"+page, 0
	if talkExists {
		require.NoError(t, site.EditPage(ctx, mwsite.Admin.Login, talk, "== A topic ==\n\nSome text.", "set up"))
		revisions = 1
	}
	in := sites.Intent{Kind: kind.Reply, Actor: "alice", Target: site.PageURL(page), Text: "A heading and nothing else"}
	status, err := d.Open(ctx, tab, in)
	require.NoError(t, err)
	require.NoError(t, sites.Preflight(ctx, d, tab, "alice", status))
	_, err = d.Fill(ctx, tab, in)
	require.NoError(t, err)
	err = d.Submit(ctx, tab, in)
	ref := sites.AsRefusal(err)
	require.NotNil(t, ref, "a refusal, not %v", err)
	require.Equal(t, sites.RefusedValidation, ref.Kind, "%s", ref.Detail)
	require.NotErrorIs(t, err, sites.ErrOutcomeUnknown, "%s", ref.Doubt)
	n, err := site.RevisionCount(ctx, talk)
	require.NoError(t, err)
	require.Equal(t, revisions, n, "nothing saved")
}
