package operator_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/demosite"
	"github.com/browserop/browserop/operator"
	"github.com/browserop/browserop/sites"
)

// timedAdapter measures the time a pass spends in the site adapter, that
// is, in the browser; the rest of the pass is browserop's own work (ledger,
// bookkeeping, verification logic).
type timedAdapter struct {
	sites.Adapter
	mu sync.Mutex
	in time.Duration
}

func (t *timedAdapter) add(start time.Time) {
	t.mu.Lock()
	t.in += time.Since(start)
	t.mu.Unlock()
}

func (t *timedAdapter) OpenHome(ctx context.Context, tab *browser.Tab) (int, error) {
	defer t.add(time.Now())
	return t.Adapter.OpenHome(ctx, tab)
}
func (t *timedAdapter) Identity(ctx context.Context, tab *browser.Tab) (string, error) {
	defer t.add(time.Now())
	return t.Adapter.Identity(ctx, tab)
}
func (t *timedAdapter) Blocker(ctx context.Context, tab *browser.Tab, status int) (sites.Blocker, error) {
	defer t.add(time.Now())
	return t.Adapter.Blocker(ctx, tab, status)
}
func (t *timedAdapter) Open(ctx context.Context, tab *browser.Tab, in sites.Intent) (int, error) {
	defer t.add(time.Now())
	return t.Adapter.Open(ctx, tab, in)
}
func (t *timedAdapter) Fill(ctx context.Context, tab *browser.Tab, in sites.Intent) (string, error) {
	defer t.add(time.Now())
	return t.Adapter.Fill(ctx, tab, in)
}
func (t *timedAdapter) Submit(ctx context.Context, tab *browser.Tab, in sites.Intent) error {
	defer t.add(time.Now())
	return t.Adapter.Submit(ctx, tab, in)
}
func (t *timedAdapter) Result(ctx context.Context, tab *browser.Tab, in sites.Intent) (sites.Observed, error) {
	defer t.add(time.Now())
	return t.Adapter.Result(ctx, tab, in)
}
func (t *timedAdapter) Search(ctx context.Context, tab *browser.Tab, q sites.Query) (sites.SearchResult, error) {
	defer t.add(time.Now())
	return t.Adapter.Search(ctx, tab, q)
}

// BenchmarkPass50Posts runs passes over 50 due posts on demosite and
// reports actions per minute and the share of the pass spent outside the
// browser. Preflight's own reads (tab URL, ownership) count as browserop's.
func BenchmarkPass50Posts(b *testing.B) {
	var perMin, outside []float64
	for i := range b.N {
		b.StopTimer()
		w := newWorld(b, demosite.Faults{})
		var cal strings.Builder
		cal.WriteString("entries:\n")
		for j := range 50 {
			cal.WriteString(post(fmt.Sprintf("p%d", j), fmt.Sprintf("benchmark post %d of run %d", j, i)))
		}
		w.calendar(cal.String())
		timed := &timedAdapter{Adapter: w.site}
		r := operator.NewRunner(w.db, []sites.Adapter{timed}, w.policy, operator.Planner{}, w.connect(), w.cfg, nil)
		b.StartTimer()
		start := time.Now()
		sum, err := r.Pass(context.Background())
		total := time.Since(start)
		b.StopTimer()
		if err != nil || sum.Counts["verified"] != 50 {
			b.Fatalf("pass: %v, %+v", err, sum.Counts)
		}
		perMin = append(perMin, 50/total.Minutes())
		outside = append(outside, 100*float64(total-timed.in)/float64(total))
		b.StartTimer()
	}
	b.ReportMetric(median(perMin), "actions/min")
	b.ReportMetric(median(outside), "%outside-browser")
}

func median(xs []float64) float64 {
	sort.Float64s(xs)
	return xs[len(xs)/2]
}
