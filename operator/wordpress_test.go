package operator_test

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/budgets"
	"github.com/browserop/browserop/internal/testrig/faultproxy"
	"github.com/browserop/browserop/internal/testrig/wpsite"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/operator"
	"github.com/browserop/browserop/sites"
)

// One real WordPress for the package, behind a fault proxy the tests arm:
// installed at the proxy's address, so every page and request of the
// browser goes through it.
var (
	wpOnce  sync.Once
	wpProxy *faultproxy.Proxy
	wpErr   error
	wp      *wpsite.Shared
)

// wpSettle is the WordPress adapter's settle time in these tests.
const wpSettle = 2 * time.Second

// wordpressWorld is a ledger and a runner over the shared browser, signed in
// to the shared WordPress as alice.
type wordpressWorld struct {
	*world
	site  *wpsite.Site
	proxy *faultproxy.Proxy
	alice int
}

func newWordPressWorld(t *testing.T) *wordpressWorld {
	t.Helper()
	wpOnce.Do(func() {
		wpProxy, wpErr = faultproxy.Start("")
		wp = wpsite.NewShared(wpsite.WithFront(wpProxy))
	})
	require.NoError(t, wpErr)
	site := wp.Site(t)
	ctx := context.Background()
	for name, v := range map[string]string{"comment_moderation": "0", "comment_previously_approved": "0", "browserop_test_flood": "off", "comment_registration": "0"} {
		require.NoError(t, site.SetOption(ctx, name, v))
	}
	b := shared.Browser(t)
	dir := t.TempDir()
	db, err := ledger.Open(ctx, filepath.Join(dir, "ledger.db"), ledger.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	w := &world{t: t, db: db, calDir: filepath.Join(dir, "calendar"), b: b, base: site.URL()}
	require.NoError(t, os.MkdirAll(w.calDir, 0o700))
	w.policy, err = budgets.NewPolicy(map[string]budgets.FormatLimit{
		budgets.PostText: {Max: 100, Window: 24 * time.Hour},
		budgets.Reply:    {Max: 100, Window: 24 * time.Hour},
	}, map[string]budgets.GroupLimit{"original": {Formats: []string{budgets.PostText, budgets.PostImage, budgets.Thread}, Max: 100, Window: 24 * time.Hour}})
	require.NoError(t, err)
	// A block editor step waits for the page's own scripts (the media
	// modal, its library list through admin-ajax): on a 2-core machine
	// running other packages' tests beside this one, opening the modal
	// took over 20s once (CI, TestWordPressRefusedUploadFailsBeforeClick).
	w.cfg = operator.Config{CalendarDir: w.calDir, ActionTimeout: 30 * time.Second, Heartbeat: time.Second, LeaseTTL: 2 * time.Minute}
	// The person chose, as newWorld's did.
	_, err = db.SetCleanupPreference(context.Background(), w.cfg.Profile, ledger.CleanupSubmittedAndProbeBlockers, "test")
	require.NoError(t, err)
	w.site = wordpressAdapter(t, site)
	ww := &wordpressWorld{world: w, site: site, proxy: wpProxy, alice: site.UserID("alice")}
	ww.signIn()
	return ww
}

// wordpressAdapter is the bundled WordPress adapter on site, its accounts
// declared, with a short settle.
func wordpressAdapter(t testing.TB, site *wpsite.Site) sites.Adapter {
	return wordpressAdapterWith(t, site, "surface_within: 10m")
}

// wordpressAdapterWith is wordpressAdapter with each search's
// surface_within line replaced by surface.
func wordpressAdapterWith(t testing.TB, site *wpsite.Site, surface string) sites.Adapter {
	t.Helper()
	raw, err := site.AdapterYAML()
	require.NoError(t, err)
	y := string(raw)
	require.Equal(t, 2, strings.Count(y, "settle: 10s"))
	y = strings.ReplaceAll(y, "settle: 10s", "settle: "+wpSettle.String())
	require.Equal(t, 2, strings.Count(y, "surface_within: 10m"))
	y = strings.ReplaceAll(y, "surface_within: 10m", surface)
	d, err := sites.Parse("wordpress.yaml", []byte(y))
	require.NoError(t, err)
	return d
}

// signIn signs the shared browser in to WordPress as alice, unless it is.
func (w *wordpressWorld) signIn() {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tab, err := w.b.NewTab(ctx, "about:blank")
	require.NoError(w.t, err)
	defer w.b.CloseTab(context.Background(), tab)
	tab.SetActionTimeout(20 * time.Second)
	_, err = tab.Navigate(ctx, w.site.URL()+"/wp-admin/profile.php")
	require.NoError(w.t, err)
	if who, err := wpsite.SignedIn(ctx, tab); err == nil && who == "alice" {
		return
	}
	require.NoError(w.t, w.site.SignIn(ctx, tab, "alice", wpsite.Alice.Password))
}

// carolPost publishes a post by carol and returns its address and id.
func (w *wordpressWorld) carolPost() (string, int) {
	w.t.Helper()
	id, err := w.site.InsertPost(context.Background(), wpsite.Post{Author: "carol", Title: fmt.Sprintf("Carol's post %d", time.Now().UnixNano()),
		Content: "<!-- wp:paragraph -->\n<p>Something to reply to.</p>\n<!-- /wp:paragraph -->"})
	require.NoError(w.t, err)
	return fmt.Sprintf("%s/?p=%d", w.site.URL(), id), id
}

// posts counts alice's published posts titled title, in the database.
func (w *wordpressWorld) posts(title string) int {
	w.t.Helper()
	n, err := w.site.Count(context.Background(), "SELECT COUNT(*) FROM wp_posts WHERE post_type = 'post' AND post_status = 'publish' AND post_author = ? AND post_title = ?", w.alice, title)
	require.NoError(w.t, err)
	return n
}

// comments counts alice's comments with text, in the database.
func (w *wordpressWorld) comments(text string) int {
	w.t.Helper()
	n, err := w.site.Count(context.Background(), "SELECT COUNT(*) FROM wp_comments WHERE user_id = ? AND comment_content = ? AND comment_approved <> 'trash'", w.alice, text)
	require.NoError(w.t, err)
	return n
}

// entries writes a calendar of WordPress entries, due a second ago.
func (w *wordpressWorld) entries(es ...string) {
	w.t.Helper()
	fixedCalendar(w.world, time.Now().Add(-time.Second), "entries:\n"+strings.Join(es, ""))
}

func wpPost(id, title, body string) string {
	return fmt.Sprintf("  - {id: %s, site: wordpress, actor: alice, type: post, at: \"{at}\", text: %q}\n", id, title+"\n\n"+body)
}

func wpReply(id, target, text string) string {
	return fmt.Sprintf("  - {id: %s, site: wordpress, actor: alice, type: reply, at: \"{at}\", target: %q, text: %q}\n", id, target, text)
}

// only returns the ledger's one action.
func (w *world) only() ledger.Action {
	w.t.Helper()
	as := w.actions()
	require.Len(w.t, as, 1)
	return as[0]
}

// unique makes a text no other test used.
func unique(what string) string { return fmt.Sprintf("%s %d", what, time.Now().UnixNano()) }

// TestWordPressPublishesOnce: a post through the block editor and a
// comment on another's post are each published once and verified on the
// live site, and a second pass publishes nothing; with the pre-publish
// panel on (the default) and off.
func TestWordPressPublishesOnce(t *testing.T) {
	w := newWordPressWorld(t)
	target, _ := w.carolPost()
	// WordPress shows the comment texturized (don’t, …, –): verified
	// through the adapter's transforms.
	title, body, reply := unique("A real post"), "Its body, in a paragraph block.", unique("A real comment")+": don't stop... it - works"
	w.entries(wpPost("p1", title, body), wpReply("r1", target, reply))
	sum := w.pass()
	require.Equal(t, 2, sum.Counts["verified"], "%+v", sum)
	require.Equal(t, 1, w.posts(title))
	require.Equal(t, 1, w.comments(reply))
	for _, a := range w.actions() {
		require.Equal(t, ledger.Verified, a.Status, "%s: %s", a.ID, a.FailureReason)
		if a.Type == "reply" {
			require.Regexp(t, `/\?p=\d+#comment-\d+$`, a.CanonicalResult, "a comment's permalink keeps its fragment")
		} else {
			require.Regexp(t, `/\?p=\d+$`, a.CanonicalResult)
		}
	}
	sum = w.pass()
	require.Empty(t, sum.Counts["verified"], "%+v", sum)
	require.Equal(t, 1, w.posts(title))
	require.Equal(t, 1, w.comments(reply))

	t.Run("pre-publish panel off", func(t *testing.T) {
		ctx := context.Background()
		require.NoError(t, w.site.SetPreferences(ctx, "alice", "core/edit-post", map[string]any{"isPublishSidebarEnabled": false, "welcomeGuide": false}))
		t.Cleanup(func() {
			require.NoError(t, w.site.SetPreferences(ctx, "alice", "core/edit-post", map[string]any{"isPublishSidebarEnabled": true, "welcomeGuide": false}))
		})
		title2 := unique("Published without the panel")
		w.entries(wpPost("p2", title2, "One click."))
		sum := w.pass()
		require.Equal(t, 1, sum.Counts["verified"], "%+v", sum)
		require.Equal(t, 1, w.posts(title2))
	})
}

// TestWordPressLostAnswers: WordPress commits and the answer is lost on
// the way back (the connection drops, a 500 comes instead, or it is held
// past the action's deadline): never a second post or comment, and
// reconciliation settles the action as verified.
func TestWordPressLostAnswers(t *testing.T) {
	w := newWordPressWorld(t)
	// A held answer outlasts this deadline: the submission times out.
	w.cfg.ActionTimeout = 10 * time.Second
	for _, mode := range []faultproxy.Mode{faultproxy.DropAfterCommit, faultproxy.ErrorAfterCommit, faultproxy.Hold} {
		for _, what := range []string{"post", "comment"} {
			t.Run(fmt.Sprintf("%s/%v", what, mode), func(t *testing.T) {
				w.world.db = freshLedger(t)
				w.runner = nil
				spec := faultproxy.Spec{Method: "POST", Mode: mode, Limit: 1, Path: `rest_route=/wp/v2/posts/\d+&`}
				title, text := unique("Lost answer "+what), unique("lost answer comment")
				if what == "post" {
					w.entries(wpPost("p", title, "Committed, the answer lost."))
				} else {
					target, _ := w.carolPost()
					spec.Path = `^/wp-comments-post\.php$`
					w.entries(wpReply("r", target, text))
				}
				rule, err := w.proxy.Add(spec)
				require.NoError(t, err)
				defer w.proxy.Remove(rule)
				if mode == faultproxy.Hold {
					defer rule.Release()
				}
				count := func() int {
					if what == "post" {
						return w.posts(title)
					}
					return w.comments(text)
				}
				var last *operator.Summary
				for pass := 0; pass < 4 && (pass == 0 || w.only().Status != ledger.Verified); pass++ {
					last = w.pass()
					require.Equal(t, 1, count(), "exactly once on the site after pass %d: %+v", pass+1, last)
					if pass == 0 {
						require.Equal(t, 1, rule.Matched(), "the browser sent the submission once")
					}
					if pass == 0 && mode == faultproxy.Hold {
						rule.Release()
					}
					time.Sleep(wpSettle)
				}
				a := w.only()
				require.Equal(t, ledger.Verified, a.Status, "%s: %+v", a.FailureReason, last)
				require.Equal(t, 1, count())
			})
		}
	}
}

// freshLedger opens an empty ledger for a subtest.
func freshLedger(t *testing.T) *ledger.DB {
	t.Helper()
	db, err := ledger.Open(context.Background(), filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

// TestWordPressRefusals: what WordPress answers to a comment it refuses is
// classified from that answer, definitively, with its own message: a
// flood, a session lost at submit (the form then posts as a
// visitor, or is refused outright where only users may comment). A
// duplicate is not a refusal: WordPress says it holds that comment (it may
// be this one, posted by a resend the browser did not show), so the reply
// is verified on its post's page, as the identical comment there. A post
// whose session is lost at submit is not a proven refusal (the editor
// retries by itself): it ends absent once the settle time has passed.
// Nothing is ever published twice.
func TestWordPressRefusals(t *testing.T) {
	w := newWordPressWorld(t)
	ctx := context.Background()
	insertComment := func(postID int, text string) {
		_, err := w.site.InsertComment(ctx, wpsite.Comment{PostID: postID, Author: "alice", Content: text})
		require.NoError(t, err)
	}
	dropSession := func() {
		require.NoError(t, w.site.Exec(ctx, "DELETE FROM wp_usermeta WHERE user_id = ? AND meta_key = 'session_tokens'", w.alice))
	}
	for _, tc := range []struct {
		name    string
		arrange func(postID int, text string) (undo func())
		reason  string
		stops   bool
	}{
		{"duplicate", func(id int, text string) func() { insertComment(id, text); return func() {} }, "", false},
		{"rate_limit", func(id int, _ string) func() {
			require.NoError(t, w.site.SetOption(ctx, "browserop_test_flood", "on"))
			insertComment(id, unique("just before"))
			return func() { require.NoError(t, w.site.SetOption(ctx, "browserop_test_flood", "off")) }
		}, `the site refused the reply (rate_limit, status 429); nothing was created: "You are posting comments too quickly`, true},
		{"session lost", func(int, string) func() { dropSession(); return w.signIn },
			`the site refused the reply (validation, status 200); nothing was created: "Error: Please fill the required fields."`, false},
		{"session lost, users only", func(int, string) func() {
			require.NoError(t, w.site.SetOption(ctx, "comment_registration", "1"))
			dropSession()
			return func() { require.NoError(t, w.site.SetOption(ctx, "comment_registration", "0")); w.signIn() }
		}, `the site refused the reply (login, status 403); nothing was created: "Sorry, you must be logged in to comment."`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w.world.db = freshLedger(t)
			target, id := w.carolPost()
			text := unique("refused " + tc.name)
			w.entries(wpReply("r", target, text))
			// Arrange the refusal right before the click: after the pass
			// filled the form, as a site changes under a person's hands.
			site := &beforeClick{Adapter: w.world.site, hook: func() func() { return tc.arrange(id, text) }}
			w.useRunner(nil, site)
			before := w.comments(text)
			sum := w.pass()
			site.undo()
			a := w.only()
			seeded := 0
			if tc.name == "duplicate" {
				seeded = 1 // the earlier identical comment the refusal names
				require.Equal(t, ledger.Verified, a.Status, "%s: %+v", a.FailureReason, sum)
				require.Regexp(t, `/\?p=\d+#comment-\d+$`, a.CanonicalResult)
			} else {
				require.Equal(t, ledger.Failed, a.Status, "%+v", sum)
				require.Equal(t, ledger.Definitive, a.FailureClass)
				// The reason in fixed words, the site's message apart.
				require.Contains(t, a.FailureReason+": "+a.FailureSiteWords, tc.reason)
			}
			require.Equal(t, before+seeded, w.comments(text), "the refused submission stored nothing")
			require.Equal(t, tc.stops, sum.StoppedSites["wordpress"] != "", "a rate limit or a lost session stops the site: %+v", sum)
		})
	}

	t.Run("post, session lost", func(t *testing.T) {
		w.world.db = freshLedger(t)
		// An earlier post of alice's on the archive, so that the view shows
		// it can see her posts: an empty archive (a fresh site, when this
		// test runs first) proves no absence (docs/design.md invariant 12).
		_, err := w.site.InsertPost(ctx, wpsite.Post{Author: "alice", Title: unique("An earlier post"), Date: time.Now().Add(-time.Hour),
			Content: "<!-- wp:paragraph -->\n<p>Already there.</p>\n<!-- /wp:paragraph -->"})
		require.NoError(t, err)
		title := unique("Never published")
		w.entries(wpPost("p", title, "The session ends at the click."))
		site := &beforeClick{Adapter: w.world.site, hook: func() func() { dropSession(); return w.signIn }}
		w.useRunner(nil, site)
		sum := w.pass()
		site.undo()
		if w.only().Status == ledger.Ambiguous {
			// Verified right after the click inside the settle time.
			time.Sleep(wpSettle)
			w.useRunner(nil, w.world.site)
			sum = w.pass()
		}
		a := w.only()
		require.Equal(t, ledger.Failed, a.Status, "%+v", sum)
		require.Contains(t, a.FailureReason, "the effect is absent", "not a refusal: the 403 proves nothing, the complete view after the settle time does")
		require.Zero(t, w.posts(title))
	})
}

// TestWordPressModeration: a comment WordPress holds for moderation is
// moderated (it exists, it is not public), never posted again, and
// verified once a moderator approves it.
func TestWordPressModeration(t *testing.T) {
	w := newWordPressWorld(t)
	ctx := context.Background()
	require.NoError(t, w.site.SetOption(ctx, "comment_moderation", "1"))
	t.Cleanup(func() { require.NoError(t, w.site.SetOption(ctx, "comment_moderation", "0")) })
	target, _ := w.carolPost()
	text := unique("held for moderation")
	w.entries(wpReply("r", target, text))
	sum := w.pass()
	a := w.only()
	require.Equal(t, ledger.Moderated, a.Status, "%+v", sum)
	require.Regexp(t, `/\?p=\d+#comment-\d+$`, a.CanonicalResult)
	require.Empty(t, sum.NeedsPerson, "held is not a question for a person")

	sum = w.pass()
	require.Equal(t, ledger.Moderated, w.only().Status, "%+v", sum)
	require.Equal(t, 1, w.comments(text), "never posted again")

	require.NoError(t, w.site.Exec(ctx, "UPDATE wp_comments SET comment_approved = '1' WHERE user_id = ? AND comment_content = ?", w.alice, text))
	sum = w.pass()
	a = w.only()
	require.Equal(t, ledger.Verified, a.Status, "%+v", sum)
	require.Equal(t, 1, w.comments(text))
}

// beforeClick runs hook right before Submit (after preflight and Fill), and
// keeps the undo it returns.
type beforeClick struct {
	sites.Adapter
	hook   func() func()
	undoFn func()
}

func (b *beforeClick) Submit(ctx context.Context, tab *browser.Tab, in sites.Intent) error {
	b.undoFn = b.hook()
	return b.Adapter.Submit(ctx, tab, in)
}

func (b *beforeClick) undo() {
	if b.undoFn != nil {
		b.undoFn()
	}
}

// TestWordPressHeldCommentNeverProvenAbsent: when the landed page is not
// read (the pass lost it between the click and the reading), a comment
// WordPress holds for moderation is in no search; since the adapter says
// comments may be held, its absence is never proven: it waits for a
// person instead of being failed and posted a second time.
func TestWordPressHeldCommentNeverProvenAbsent(t *testing.T) {
	w := newWordPressWorld(t)
	ctx := context.Background()
	require.NoError(t, w.site.SetOption(ctx, "comment_moderation", "1"))
	t.Cleanup(func() { require.NoError(t, w.site.SetOption(ctx, "comment_moderation", "0")) })
	// A short bound on how late a submission surfaces: without the rule
	// it would prove the held comment absent once passed.
	site := wordpressAdapterWith(t, w.site, "surface_within: "+wpSettle.String())
	target, _ := w.carolPost()
	text := unique("held, landing unread")
	w.entries(wpReply("r", target, text))
	w.useRunner(nil, &landingLost{Adapter: site})
	sum := w.pass()
	require.Equal(t, ledger.Ambiguous, w.only().Status, "%+v", sum)
	time.Sleep(2 * wpSettle)
	w.useRunner(nil, site)
	for i := 0; i < 2; i++ {
		sum = w.pass()
		a := w.only()
		require.Equal(t, ledger.Ambiguous, a.Status, "pass %d: a held comment is never proven absent: %+v", i+2, sum)
		require.Equal(t, 1, w.comments(text), "never posted again")
	}
}

// landingLost loses what the landed page said: Result fails after the
// click, as when the pass loses its tab before reading it.
type landingLost struct{ sites.Adapter }

func (l *landingLost) Result(context.Context, *browser.Tab, sites.Intent) (sites.Observed, error) {
	return sites.Observed{}, fmt.Errorf("%w: the tab went away before the landed page was read", sites.ErrOutcomeUnknown)
}

// writeImage writes a real 320×200 PNG to the calendar's directory (the
// media directory) as name.
func (w *wordpressWorld) writeImage(name string) {
	w.t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 320, 200))
	for y := 0; y < 200; y++ {
		for x := 0; x < 320; x++ {
			img.SetRGBA(x, y, color.RGBA{R: 200, G: 90, B: uint8(x), A: 255})
		}
	}
	f, err := os.Create(filepath.Join(w.calDir, name))
	require.NoError(w.t, err)
	require.NoError(w.t, png.Encode(f, img))
	require.NoError(w.t, f.Close())
}

func wpImagePost(id, title, body, file, alt string) string {
	return fmt.Sprintf("  - {id: %s, site: wordpress, actor: alice, type: post, at: \"{at}\", text: %q, media: [{file: %s, alt: %q}]}\n",
		id, title+"\n\n"+body, file, alt)
}

// imagePost checks what WordPress holds of alice's post titled title: one
// published post, one PNG uploaded to it and made its featured image, and
// an Image block with alt text.
func (w *wordpressWorld) imagePost(title, alt string) {
	w.t.Helper()
	ctx := context.Background()
	require.Equal(w.t, 1, w.posts(title), "published once")
	rows, err := w.site.Query(ctx, "SELECT ID, post_content FROM wp_posts WHERE post_type = 'post' AND post_status = 'publish' AND post_author = ? AND post_title = ?", w.alice, title)
	require.NoError(w.t, err)
	id, err := strconv.Atoi(rows[0][0])
	require.NoError(w.t, err)
	atts, err := w.site.Attachments(ctx, id)
	require.NoError(w.t, err)
	require.Len(w.t, atts, 1, "one image uploaded to the post")
	require.Equal(w.t, "image/png", atts[0].MIME)
	featured, err := w.site.FeaturedImage(ctx, id)
	require.NoError(w.t, err)
	require.Equal(w.t, atts[0].ID, featured, "the image is the featured image")
	require.Contains(w.t, rows[0][1], fmt.Sprintf(`alt="%s" class="wp-image-%d"`, alt, atts[0].ID), "the Image block's alt text")
}

// TestWordPressPostWithImage: a calendar post with an image is published
// once through the block editor (the image uploaded to the media library,
// its alt text in the Image block) and verified on its landed editor, as
// post_image with the image in its payload; a second pass does nothing.
// With the editor's answer lost, the author archive shows the post with
// its image (the featured image), and reconciliation verifies it there.
func TestWordPressPostWithImage(t *testing.T) {
	w := newWordPressWorld(t)
	w.writeImage("photo.png")
	title, alt := unique("A post with an image"), "An orange field at dusk"
	w.entries(wpImagePost("img", title, "Its body, then its image.", "photo.png", alt))
	seen := len(w.proxy.Requests())
	sum := w.pass()
	a := w.only()
	require.Equal(t, ledger.Verified, a.Status, "%s (%+v)", a.FailureReason, sum)
	require.Equal(t, budgets.PostImage, a.Format)
	require.Equal(t, 1, a.Attempt)
	require.Regexp(t, `/\?p=\d+$`, a.CanonicalResult)
	p, err := ledger.ParsePayload(a.Payload)
	require.NoError(t, err)
	require.Len(t, p.Media, 1)
	require.Equal(t, "png", p.Media[0].Type)
	require.Equal(t, alt, p.Media[0].Alt)
	require.Equal(t, 1, publishes(w.proxy.Requests()[seen:]), "the editor sent the post once")
	w.imagePost(title, alt)

	sum = w.pass()
	require.Empty(t, sum.Actions, "%+v", sum)
	require.Equal(t, 1, w.posts(title), "never published again")

	t.Run("answer lost", func(t *testing.T) {
		w.world.db = freshLedger(t)
		w.runner = nil
		rule, err := w.proxy.Add(faultproxy.Spec{Method: "POST", Mode: faultproxy.DropAfterCommit, Limit: 1, Path: `rest_route=/wp/v2/posts/\d+&`})
		require.NoError(t, err)
		defer w.proxy.Remove(rule)
		title := unique("An image post whose answer was lost")
		w.entries(wpImagePost("img-lost", title, "Committed, the answer lost.", "photo.png", alt))
		var last *operator.Summary
		for pass := 0; pass < 4 && (pass == 0 || w.only().Status != ledger.Verified); pass++ {
			last = w.pass()
			require.Equal(t, 1, w.posts(title), "exactly once on the site after pass %d: %+v", pass+1, last)
			time.Sleep(wpSettle)
		}
		require.Equal(t, 1, rule.Matched(), "the browser sent the post once")
		a := w.only()
		require.Equal(t, ledger.Verified, a.Status, "%s: %+v", a.FailureReason, last)
		require.Equal(t, 1, a.Attempt)
		w.imagePost(title, alt)
	})
}

// TestWordPressRefusedUploadFailsBeforeClick: an image WordPress refuses
// (over its upload limit, lowered here through the test site's option)
// fails the action definitively in its preparation (upload_failed): it
// never goes executing, the post is never sent, nothing is published.
// Once the site takes the image, a later pass publishes it once.
func TestWordPressRefusedUploadFailsBeforeClick(t *testing.T) {
	w := newWordPressWorld(t)
	ctx := context.Background()
	require.NoError(t, w.site.SetOption(ctx, "browserop_test_upload_limit", "100"))
	t.Cleanup(func() { require.NoError(t, w.site.SetOption(ctx, "browserop_test_upload_limit", "0")) })
	w.writeImage("large.png")
	st, err := os.Stat(filepath.Join(w.calDir, "large.png"))
	require.NoError(t, err)
	require.Greater(t, st.Size(), int64(100))
	title, alt := unique("Its image refused"), "Over the limit"
	w.entries(wpImagePost("big", title, "The image is over the site's limit.", "large.png", alt))
	seen := len(w.proxy.Requests())
	sum := w.pass()
	require.Equal(t, 1, sum.Counts["upload_failed"], "%+v", sum)
	a := w.only()
	require.Equal(t, ledger.Failed, a.Status, "%+v", sum)
	require.Equal(t, ledger.Definitive, a.FailureClass)
	require.True(t, a.ExecutingAt.IsZero(), "it never went executing")
	require.Contains(t, a.FailureReason, "a media upload failed")
	require.Contains(t, a.FailureReason, "nothing was published (the site may keep a draft of it)", "the block editor keeps drafts")
	require.Zero(t, publishes(w.proxy.Requests()[seen:]), "the post was never sent")
	require.Zero(t, w.posts(title))

	require.NoError(t, w.site.SetOption(ctx, "browserop_test_upload_limit", "0"))
	sum = w.pass()
	a = w.only()
	require.Equal(t, ledger.Verified, a.Status, "%s (%+v)", a.FailureReason, sum)
	require.Equal(t, 2, a.Attempt)
	w.imagePost(title, alt)
}

// publishRequest is the block editor's request that saves a post (not
// its autosaves), as the browser sends it through the proxy.
var publishRequest = regexp.MustCompile(`rest_route=(/|%2F)wp(/|%2F)v2(/|%2F)posts(/|%2F)\d+&`)

// publishes counts the requests among rs that save a post.
func publishes(rs []faultproxy.Request) int {
	n := 0
	for _, r := range rs {
		if r.Method == "POST" && publishRequest.MatchString(r.URI) {
			n++
		}
	}
	return n
}
