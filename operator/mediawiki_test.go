package operator_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/budgets"
	"github.com/browserop/browserop/bundled"
	"github.com/browserop/browserop/internal/testrig/faultproxy"
	"github.com/browserop/browserop/internal/testrig/mwsite"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/operator"
	"github.com/browserop/browserop/sites"
)

// One real MediaWiki for the package, behind a fault proxy the tests arm,
// installed at the proxy's address.
var (
	mwOnce  sync.Once
	mwProxy *faultproxy.Proxy
	mwErr   error
	mw      *mwsite.Shared
)

// mwAlice is the account the MediaWiki tests publish as.
var mwAlice = mwsite.User{Login: "alice", Password: "alice-wiki-pass"}

// mwSettle is the MediaWiki adapter's settle time in these tests.
const mwSettle = 2 * time.Second

type mediawikiWorld struct {
	*world
	site  *mwsite.Site
	proxy *faultproxy.Proxy
}

func newMediaWikiWorld(t *testing.T) *mediawikiWorld {
	t.Helper()
	mwOnce.Do(func() {
		mwProxy, mwErr = faultproxy.Start("")
		mw = mwsite.NewShared(mwsite.WithFront(mwProxy))
	})
	require.NoError(t, mwErr)
	site := mw.Site(t)
	ctx := context.Background()
	if err := site.CreateUser(ctx, mwAlice.Login, mwAlice.Password); err != nil && !errors.Is(err, mwsite.ErrUserExists) {
		require.NoError(t, err)
	}
	dir := t.TempDir()
	db, err := ledger.Open(ctx, filepath.Join(dir, "ledger.db"), ledger.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	w := &world{t: t, db: db, calDir: filepath.Join(dir, "calendar"), b: shared.Browser(t), base: site.URL()}
	require.NoError(t, os.MkdirAll(w.calDir, 0o700))
	w.policy, err = budgets.NewPolicy(map[string]budgets.FormatLimit{
		budgets.PostText: {Max: 100, Window: 24 * time.Hour},
		budgets.Reply:    {Max: 100, Window: 24 * time.Hour},
	}, map[string]budgets.GroupLimit{"original": {Formats: []string{budgets.PostText, budgets.PostImage, budgets.Thread}, Max: 100, Window: 24 * time.Hour}})
	require.NoError(t, err)
	w.cfg = operator.Config{CalendarDir: w.calDir, ActionTimeout: 10 * time.Second, Heartbeat: time.Second, LeaseTTL: 2 * time.Minute}
	// The person chose, as newWorld's did.
	_, err = db.SetCleanupPreference(context.Background(), w.cfg.Profile, ledger.CleanupSubmittedAndProbeBlockers, "test")
	require.NoError(t, err)
	raw, err := fs.ReadFile(bundled.Sites, "sites/mediawiki.yaml")
	require.NoError(t, err)
	y := strings.Replace(string(raw), "  - http://127.0.0.1:8080\n", "  - "+site.URL()+"\n", 1)
	require.Equal(t, 2, strings.Count(y, "settle: 5s"), "the post's search and the reply's")
	y = strings.ReplaceAll(y, "settle: 5s", "settle: "+mwSettle.String())
	y += "\naccounts:\n  alice:\n    name: \"Alice\"\n"
	w.site, err = sites.Parse("mediawiki.yaml", []byte(y))
	require.NoError(t, err)
	mw := &mediawikiWorld{world: w, site: site, proxy: mwProxy}
	mw.signIn()
	return mw
}

// signIn signs the shared browser in to the wiki as alice, unless it is.
func (w *mediawikiWorld) signIn() {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tab, err := w.b.NewTab(ctx, "about:blank")
	require.NoError(w.t, err)
	defer w.b.CloseTab(context.Background(), tab)
	tab.SetActionTimeout(20 * time.Second)
	_, err = tab.Navigate(ctx, w.site.PageURL("Special:BlankPage"))
	require.NoError(w.t, err)
	if who, err := mwsite.SignedIn(ctx, tab); err == nil && who == "Alice" {
		return
	}
	require.NoError(w.t, w.site.SignIn(ctx, tab, mwAlice.Login, mwAlice.Password))
}

// revisions counts alice's revisions of the page title whose text is body;
// 0 when the page does not exist or holds another text.
func (w *mediawikiWorld) revisions(title, body string) int {
	w.t.Helper()
	ctx := context.Background()
	got, err := w.site.PageText(ctx, title)
	if errors.Is(err, mwsite.ErrNoPage) {
		return 0
	}
	require.NoError(w.t, err)
	if strings.TrimSpace(got) != strings.TrimSpace(body) {
		return 0
	}
	n, err := w.site.RevisionsBy(ctx, title, "Alice")
	require.NoError(w.t, err)
	return n
}

func mwPost(id, title, body string) string {
	return fmt.Sprintf("  - {id: %s, site: mediawiki, actor: alice, type: post, at: \"{at}\", text: %q}\n", id, title+"\n\n"+body)
}

// TestMediaWikiLostAnswers: the wiki saves the page and its answer is
// lost (the connection dropped, a 500 in its place, or held past the
// action's deadline). The new page is reconciled through its history,
// each revision read on its own page, and verified: exactly one revision,
// never a second save.
func TestMediaWikiLostAnswers(t *testing.T) {
	w := newMediaWikiWorld(t)
	for _, mode := range []faultproxy.Mode{faultproxy.DropAfterCommit, faultproxy.ErrorAfterCommit, faultproxy.Hold} {
		t.Run(mode.String(), func(t *testing.T) {
			w.world.db = freshLedger(t)
			w.runner = nil
			title := fmt.Sprintf("Lost answer %d", time.Now().UnixNano())
			body := "Saved, the answer lost."
			fixedCalendar(w.world, time.Now().Add(-time.Second), "entries:\n"+mwPost("p", title, body))
			rule, err := w.proxy.Add(faultproxy.Spec{Method: "POST", Mode: mode, Limit: 1, Path: `action=submit`})
			require.NoError(t, err)
			defer w.proxy.Remove(rule)
			if mode == faultproxy.Hold {
				defer rule.Release()
			}
			page := strings.ReplaceAll(title, " ", "_")
			var last *operator.Summary
			for pass := 0; pass < 4 && (pass == 0 || w.only().Status != ledger.Verified); pass++ {
				last = w.pass()
				if pass == 0 {
					require.Equal(t, 1, rule.Matched(), "the browser sent the submission once")
					if mode == faultproxy.Hold {
						rule.Release()
					}
				}
				require.Eventually(t, func() bool { return w.revisions(page, body) == 1 }, 20*time.Second, 100*time.Millisecond,
					"saved exactly once after pass %d: %+v", pass+1, last)
				time.Sleep(mwSettle)
			}
			a := w.only()
			require.Equal(t, ledger.Verified, a.Status, "%s: %+v", a.FailureReason, last)
			require.Contains(t, a.CanonicalResult, "oldid=", "verified at the revision's permalink")
			require.Equal(t, 1, w.revisions(page, body))
			n, err := w.site.RevisionCount(context.Background(), page)
			require.NoError(t, err)
			require.Equal(t, 1, n, "one revision: never saved twice")
		})
	}
}

// TestMediaWikiPostNeverEditsAPage: a post whose title names a page that
// exists fails before anything is typed, and the page keeps its text.
func TestMediaWikiPostNeverEditsAPage(t *testing.T) {
	w := newMediaWikiWorld(t)
	title := fmt.Sprintf("Existing page %d", time.Now().UnixNano())
	require.NoError(t, w.site.EditPage(context.Background(), mwsite.Admin.Login, title, "Someone else's text.", "set up"))
	fixedCalendar(w.world, time.Now().Add(-time.Second), "entries:\n"+mwPost("p", title, "Would overwrite it."))
	sum := w.pass()
	require.Equal(t, 1, sum.Counts["step_failed"], "%v", notes(sum))
	a := w.only()
	require.Equal(t, ledger.Failed, a.Status)
	require.Contains(t, a.FailureSiteWords, ".mw-newarticletext", "the step's detail is the person's, beside the reason")
	require.NotContains(t, a.FailureReason, ".mw-newarticletext")
	got, err := w.site.PageText(context.Background(), strings.ReplaceAll(title, " ", "_"))
	require.NoError(t, err)
	require.Equal(t, "Someone else's text.", strings.TrimSpace(got))
}

// TestMediaWikiNothingSentIsAbsent: the form's POST never reaches the
// wiki (the connection drops before it). The history of the page, which
// does not exist, is the wiki's own answer that it has no revision: once
// settled, the post is proven absent, planned again and saved, once.
func TestMediaWikiNothingSentIsAbsent(t *testing.T) {
	w := newMediaWikiWorld(t)
	title := fmt.Sprintf("Never sent %d", time.Now().UnixNano())
	body := "The first save never reached the wiki."
	fixedCalendar(w.world, time.Now().Add(-time.Second), "entries:\n"+mwPost("p", title, body))
	rule, err := w.proxy.Add(faultproxy.Spec{Method: "POST", Mode: faultproxy.DropBeforeSite, Limit: 1, Path: `action=submit`})
	require.NoError(t, err)
	defer w.proxy.Remove(rule)
	page := strings.ReplaceAll(title, " ", "_")

	var statuses []ledger.Status
	var reasons []string
	for pass := 0; pass < 6; pass++ {
		sum := w.pass()
		as := w.actions()
		for _, a := range as {
			statuses = append(statuses, a.Status)
			reasons = append(reasons, a.FailureReason)
		}
		if len(as) > 0 && as[len(as)-1].Status == ledger.Verified {
			break
		}
		require.Zero(t, w.revisions(page, body), "nothing saved yet: %+v", sum)
		time.Sleep(mwSettle)
	}
	require.Equal(t, 1, rule.Faulted(), "the first save was dropped")
	require.Equal(t, ledger.Failed, statuses[0], "proven absent after the first pass: %v", statuses)
	require.Contains(t, reasons[0], "the effect is absent", "proven absent by the wiki's empty history")
	require.Equal(t, ledger.Verified, w.only().Status, "planned again and saved: %v", statuses)
	require.Equal(t, 1, w.revisions(page, body), "saved once")
}

// sections counts the sections of the talk page talk headed heading with
// text in its current wikitext, and its revisions: 0, 0 when it does not
// exist.
func (w *mediawikiWorld) sections(talk, heading, text string) (n, revisions int) {
	w.t.Helper()
	ctx := context.Background()
	wikitext, err := w.site.PageText(ctx, talk)
	if errors.Is(err, mwsite.ErrNoPage) {
		return 0, 0
	}
	require.NoError(w.t, err)
	for _, sec := range mwsite.Sections(wikitext) {
		if sec.Heading == heading && sec.Text == text {
			n++
		}
	}
	revisions, err = w.site.RevisionCount(ctx, talk)
	require.NoError(w.t, err)
	return n, revisions
}

// TestMediaWikiReplyLostAnswer: a reply, a new section of a page's talk
// page, whose save's answer is dropped after the wiki committed it (to a
// page whose talk page did not exist, and to one whose talk page holds
// sections: alice's own with the same heading and text, and another
// account's after it). The pass reconciles it through the talk
// page's history, each revision read on its own page, and verifies it:
// exactly one new section, one new revision, never a second save.
func TestMediaWikiReplyLostAnswer(t *testing.T) {
	w := newMediaWikiWorld(t)
	ctx := context.Background()
	for _, withSections := range []bool{false, true} {
		name := map[bool]string{false: "NoTalkPage", true: "TalkWithSections"}[withSections]
		t.Run(name, func(t *testing.T) {
			w.world.db = freshLedger(t)
			w.runner = nil
			page := fmt.Sprintf("Replied page %d", time.Now().UnixNano())
			talk := "Talk:" + page
			require.NoError(t, w.site.EditPage(ctx, mwsite.Admin.Login, page, "A page to discuss.", "set up"))
			heading := fmt.Sprintf("Lost answer %d", time.Now().UnixNano())
			body := "The answer lost, saved once."
			before, want := 0, 1
			if withSections {
				// Alice's own section with the very same heading and text,
				// and another account's after it: the old one is in the
				// search before the click, and is never taken for the new.
				alice, err := w.site.SignInHTTP(ctx, mwAlice.Login, mwAlice.Password)
				require.NoError(t, err)
				_, err = alice.NewSection(ctx, talk, heading, body)
				require.NoError(t, err)
				require.NoError(t, w.site.EditPage(ctx, mwsite.Admin.Login, talk,
					mustTalk(t, w.site, talk)+"\n\n== Another account's ==\n\nSomething else.", "set up"))
				_, before = w.sections(talk, "", "")
				want = 2
			}
			fixedCalendar(w.world, time.Now().Add(-time.Second), "entries:\n"+
				fmt.Sprintf("  - {id: r, site: mediawiki, actor: alice, type: reply, at: \"{at}\", target: %q, text: %q}\n",
					w.site.PageURL(page), heading+"\n\n"+body))
			rule, err := w.proxy.Add(faultproxy.Spec{Method: "POST", Mode: faultproxy.DropAfterCommit, Limit: 1, Path: `action=submit`})
			require.NoError(t, err)
			defer w.proxy.Remove(rule)
			var last *operator.Summary
			for pass := 0; pass < 4 && (pass == 0 || w.only().Status != ledger.Verified); pass++ {
				last = w.pass()
				if pass == 0 {
					require.Equal(t, 1, rule.Faulted(), "the answer to the save was dropped")
				}
				n, revs := w.sections(talk, heading, body)
				require.Equal(t, want, n, "one new section after pass %d: %+v", pass+1, last)
				require.Equal(t, before+1, revs, "one new revision after pass %d", pass+1)
				time.Sleep(mwSettle)
			}
			a := w.only()
			require.Equal(t, ledger.Verified, a.Status, "%s: %+v", a.FailureReason, last)
			require.Contains(t, a.CanonicalResult, "oldid=", "verified at the revision's permalink")
			n, revs := w.sections(talk, heading, body)
			require.Equal(t, want, n, "one new section: never saved twice")
			require.Equal(t, before+1, revs)
		})
	}
}

// mustTalk is the current wikitext of title.
func mustTalk(t *testing.T, site *mwsite.Site, title string) string {
	t.Helper()
	text, err := site.PageText(context.Background(), title)
	require.NoError(t, err)
	return text
}
