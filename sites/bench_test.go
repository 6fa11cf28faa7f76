package sites_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/demosite"
	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/sites"
)

// reportMedian adds the median of the iterations as a metric: ns/op is a
// mean, and one slow page load skews it.
func reportMedian(b *testing.B, d []time.Duration) {
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2].Microseconds())/1000, "median-ms")
}

// BenchmarkPostAdapter is one post through the adapter with every check:
// open compose, preflight (origin, blockers, identity), fill and read back,
// one click, read the landed post and its canonical URL.
func BenchmarkPostAdapter(b *testing.B) {
	e := setup(b, demosite.Faults{})
	durations := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		obs, err := e.perform(sites.Intent{Kind: kind.Post, Actor: "alice", Text: fmt.Sprintf("bench adapter %d", i)})
		if err != nil {
			b.Fatal(err)
		}
		if !strings.HasPrefix(obs.URL, base+"/p/") {
			b.Fatalf("no canonical URL: %+v", obs)
		}
		durations = append(durations, time.Since(start))
	}
	reportMedian(b, durations)
}

// BenchmarkPostBareChromedp does the same clicks with plain chromedp on the
// same browser and site, and checks nothing: navigate, type, click, wait for
// the post, read the URL.
func BenchmarkPostBareChromedp(b *testing.B) {
	setup(b, demosite.Faults{}) // signs the profile in as alice
	ctx := bareChromedp(b)
	durations := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		err := chromedp.Do(ctx,
			chromedp.Navigate(base+"/compose"),
			chromedp.SendKeys(chromedp.ID("compose-text"), fmt.Sprintf("bench bare %d", i)),
			chromedp.Click(chromedp.ID("compose-submit")),
			chromedp.WaitVisible(chromedp.CSS("article.post#post")),
		)
		if err != nil {
			b.Fatal(err)
		}
		loc, err := chromedp.Run(ctx, chromedp.Location())
		if err != nil {
			b.Fatal(err)
		}
		if !strings.HasPrefix(loc, base+"/p/") {
			b.Fatalf("not on a permalink: %s", loc)
		}
		durations = append(durations, time.Since(start))
	}
	reportMedian(b, durations)
}

// bareChromedp connects plain chromedp to the shared browser, in a new tab
// of its own, for the benchmarks that compare an adapter with it.
func bareChromedp(b *testing.B) context.Context {
	b.Helper()
	ws, err := browser.ReadActivePort(filepath.Join(shared.Browser(b).ProfileDir(), browser.ActivePortFileName))
	if err != nil {
		b.Fatal(err)
	}
	allocCtx, cancelAlloc := remote.NewAllocator(context.Background(), ws)
	ctx, cancel := chromedp.NewContext(allocCtx)
	b.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil {
		b.Fatal(err)
	}
	return ctx
}
