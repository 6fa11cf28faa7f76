package sites_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/sites"
)

// BenchmarkWordPressAdapter is one post through the block editor and one
// comment on another's post, through the bundled adapter with every
// check: open, preflight (origin, blockers, identity), the steps, each
// field filled and read back (twice for the post), one committing click,
// the landing recognised (the editor's REST answer, the comment's
// redirect), and the landed result read and made canonical.
func BenchmarkWordPressAdapter(b *testing.B) {
	site := wordpress(b)
	d := wordpressAdapter(b, site)
	tab := wpTab(b, site)
	ctx := context.Background()
	perform := func(in sites.Intent) sites.Observed {
		status, err := d.Open(ctx, tab, in)
		if err == nil {
			err = sites.Preflight(ctx, d, tab, in.Actor, status)
		}
		if err == nil {
			_, err = d.Fill(ctx, tab, in)
		}
		if err == nil {
			err = d.Submit(ctx, tab, in)
		}
		var obs sites.Observed
		if err == nil {
			obs, err = d.Result(ctx, tab, in)
		}
		if err != nil {
			b.Fatal(err)
		}
		return obs
	}
	// The welcome guide shows once per user: close it before timing.
	perform(sites.Intent{Kind: kind.Post, Actor: "alice", Text: "bench warm-up\n\nfirst"})
	durations := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		target, _ := wpCarolPost(b, site)
		b.StartTimer()
		start := time.Now()
		post := perform(sites.Intent{Kind: kind.Post, Actor: "alice", Text: fmt.Sprintf("bench adapter %d\n\nthe body", i)})
		reply := perform(sites.Intent{Kind: kind.Reply, Actor: "alice", Target: target, Text: fmt.Sprintf("bench adapter comment %d", i)})
		if !strings.Contains(post.URL, "?p=") || !strings.Contains(reply.URL, "#comment-") {
			b.Fatalf("results: %s %s", post.URL, reply.URL)
		}
		durations = append(durations, time.Since(start))
	}
	reportMedian(b, durations)
}

// BenchmarkWordPressBareChromedp does the same fills and clicks with plain
// chromedp on the same browser and site, and checks nothing: the editor's
// block, title and paragraph typed as one input each, "Publish" twice, the
// snackbar's link; the comment typed, posted, and the landed address.
func BenchmarkWordPressBareChromedp(b *testing.B) {
	site := wordpress(b)
	wpTab(b, site) // signs the profile in as alice
	ctx := bareChromedp(b)
	insert := func(sel, text string) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			if err := chromedp.Do(ctx, chromedp.Focus(chromedp.CSS(sel))); err != nil {
				return err
			}
			_, err := chromedp.Call(ctx, input.InsertText, input.InsertTextParams{Text: text})
			return err
		})
	}
	// reachable waits until a click at the centre of sel would reach it,
	// as the adapter does: the pre-publish panel slides in.
	reachable := func(sel string) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			_, err := chromedp.Run(ctx, chromedp.PollFunction[bool](`(sel) => {
				const e = document.querySelector(sel); if (!e) return false;
				const r = e.getBoundingClientRect(); const h = document.elementFromPoint(r.left + r.width/2, r.top + r.height/2);
				return !!h && (h === e || e.contains(h)) && e.getAttribute('aria-disabled') !== 'true' && !e.disabled;
			}`, chromedp.WithPollingArgs(sel), chromedp.WithPollingInterval(50*time.Millisecond)))
			return err
		})
	}
	// Every wait of chromedp waits forever without a deadline.
	step := func() (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, time.Minute) }
	post := func(i int) (string, error) {
		ctx, cancel := step()
		defer cancel()
		err := chromedp.Do(ctx,
			chromedp.Navigate(site.URL()+"/wp-admin/post-new.php"),
			chromedp.WaitVisible(chromedp.CSS(".block-editor-default-block-appender__content")),
		)
		if err != nil {
			return "", err
		}
		// The welcome guide shows once per user.
		if guide, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`!!document.querySelector(".edit-post-welcome-guide")`)); err == nil && guide {
			if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`.edit-post-welcome-guide button[aria-label="Close dialog"]`))); err != nil {
				return "", err
			}
		}
		err = chromedp.Do(ctx,
			chromedp.Click(chromedp.CSS(".block-editor-default-block-appender__content")),
			chromedp.WaitVisible(chromedp.CSS(`p.wp-block-paragraph[contenteditable="true"]`)),
			insert("h1.editor-post-title__input", fmt.Sprintf("bench bare %d", i)),
			insert(`p.wp-block-paragraph[contenteditable="true"]`, "the body"),
			chromedp.Click(chromedp.CSS("button.editor-post-publish-panel__toggle")),
			reachable(".editor-post-publish-panel__header-publish-button button.editor-post-publish-button"),
			chromedp.Click(chromedp.CSS(".editor-post-publish-panel__header-publish-button button.editor-post-publish-button")),
			chromedp.WaitVisible(chromedp.CSS(".components-snackbar a.components-snackbar__action")),
		)
		if err != nil {
			return "", err
		}
		attr, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS(".components-snackbar a.components-snackbar__action"), "href"))
		return attr.Value, err
	}
	comment := func(target string, i int) (string, error) {
		ctx, cancel := step()
		defer cancel()
		err := chromedp.Do(ctx,
			chromedp.Navigate(target),
			insert("textarea#comment", fmt.Sprintf("bench bare comment %d", i)),
			chromedp.Click(chromedp.CSS("form#commentform input#submit")),
			chromedp.WaitVisible(chromedp.CSS("li.comment:target")),
		)
		if err != nil {
			return "", err
		}
		return chromedp.Run(ctx, chromedp.Location())
	}
	if _, err := post(-1); err != nil { // as the adapter's warm-up
		b.Fatal(err)
	}
	durations := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		target, _ := wpCarolPost(b, site)
		b.StartTimer()
		start := time.Now()
		link, err := post(i)
		if err != nil {
			b.Fatal(err)
		}
		loc, err := comment(target, i)
		if err != nil {
			b.Fatal(err)
		}
		if !strings.Contains(link, "?p=") || !strings.Contains(loc, "#comment-") {
			b.Fatalf("results: %s %s", link, loc)
		}
		durations = append(durations, time.Since(start))
	}
	reportMedian(b, durations)
}
