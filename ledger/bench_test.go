package ledger_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/browserop/browserop/budgets"
	"github.com/browserop/browserop/ledger"
)

// Benchmarks run on a real file (synchronous=FULL), in BENCH_DIR when set,
// else in the test's temp dir: keep it on the disk you mean to measure.

func benchDir(b *testing.B) string {
	b.Helper()
	if d := os.Getenv("BENCH_DIR"); d != "" {
		dir, err := os.MkdirTemp(d, "ledger-bench-")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { os.RemoveAll(dir) })
		return dir
	}
	return b.TempDir()
}

func benchOpen(b *testing.B, path string) (*ledger.DB, ledger.Lease) {
	b.Helper()
	db, err := ledger.Open(context.Background(), path, ledger.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	l, err := db.AcquireLease(context.Background(), "browser-operator", fmt.Sprintf("bench-%d", time.Now().UnixNano()), time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	return db, l
}

func benchIntent(i int) ledger.Intent {
	p, _ := json.Marshal(map[string]any{"text": fmt.Sprintf("benchmark post number %d with some words in it", i), "media": []string{}})
	return ledger.Intent{Type: "post", Format: budgets.PostText, Site: "demo", Actor: "alice", TargetURL: "http://127.0.0.1/compose", Payload: p}
}

var benchPolicy = func() budgets.Policy {
	p, err := budgets.NewPolicy(map[string]budgets.FormatLimit{
		budgets.PostText: {Max: 1 << 30, Window: 24 * time.Hour},
	}, map[string]budgets.GroupLimit{"original": {Formats: []string{budgets.PostText, budgets.PostImage, budgets.Thread}, Max: 1 << 30, Window: 24 * time.Hour}})
	if err != nil {
		panic(err)
	}
	return p
}()

// reportMedian adds the median of the per-iteration durations.
func reportMedian(b *testing.B, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, "ms-median")
}

func BenchmarkReserve(b *testing.B) {
	db, l := benchOpen(b, filepath.Join(benchDir(b), "ledger.db"))
	benchReserve(b, db, l, 0)
}

func BenchmarkReserveWith100kActions(b *testing.B) {
	db, l := benchOpen(b, seeded100k(b))
	benchReserve(b, db, l, 200000)
}

func benchReserve(b *testing.B, db *ledger.DB, l ledger.Lease, offset int) {
	ctx := context.Background()
	ds := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		if _, _, err := db.Reserve(ctx, l.Fence(), benchIntent(offset+i)); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(start))
	}
	reportMedian(b, ds)
}

// BenchmarkTransition measures each transition on its own.
func BenchmarkTransition(b *testing.B) {
	for _, tc := range []struct {
		name string
		pre  []ledger.Status
		to   ledger.Status
	}{
		{"PlannedToExecuting", nil, ledger.Executing},
		{"ExecutingToVerified", []ledger.Status{ledger.Executing}, ledger.Verified},
		{"ExecutingToFailed", []ledger.Status{ledger.Executing}, ledger.Failed},
		{"ExecutingToAmbiguous", []ledger.Status{ledger.Executing}, ledger.Ambiguous},
		{"AmbiguousToVerified", []ledger.Status{ledger.Executing, ledger.Ambiguous}, ledger.Verified},
		{"FailedToPlanned", []ledger.Status{ledger.Executing, ledger.Failed}, ledger.Planned},
	} {
		b.Run(tc.name, func(b *testing.B) {
			ctx := context.Background()
			db, l := benchOpen(b, filepath.Join(benchDir(b), "ledger.db"))
			ids := make([]string, b.N)
			for i := range b.N {
				a, _, err := db.Reserve(ctx, l.Fence(), benchIntent(i))
				if err != nil {
					b.Fatal(err)
				}
				for _, s := range tc.pre {
					if _, err := db.Transition(ctx, l.Fence(), a.ID, benchChange(s)); err != nil {
						b.Fatal(err)
					}
				}
				ids[i] = a.ID
			}
			ds := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				start := time.Now()
				if _, err := db.Transition(ctx, l.Fence(), ids[i], benchChange(tc.to)); err != nil {
					b.Fatal(err)
				}
				ds = append(ds, time.Since(start))
			}
			reportMedian(b, ds)
		})
	}
}

func benchChange(s ledger.Status) ledger.Change {
	c := ledger.Change{To: s, Reason: "bench", Budget: benchPolicy}
	switch s {
	case ledger.Verified:
		c.Result = "http://127.0.0.1/p/1"
	case ledger.Failed:
		c.Class = ledger.Definitive
	}
	return c
}

// BenchmarkLifecycle is one full action: reserve -> executing -> verified
// with its budget commit (three transactions, three WAL fsyncs).
func BenchmarkLifecycle(b *testing.B) {
	db, l := benchOpen(b, filepath.Join(benchDir(b), "ledger.db"))
	benchLifecycle(b, db, l)
}

func BenchmarkLifecycleWith100kActions(b *testing.B) {
	db, l := benchOpen(b, seeded100k(b))
	benchLifecycle(b, db, l)
}

func benchLifecycle(b *testing.B, db *ledger.DB, l ledger.Lease) {
	ctx := context.Background()
	ds := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		a, _, err := db.Reserve(ctx, l.Fence(), benchIntent(i))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := db.Transition(ctx, l.Fence(), a.ID, benchChange(ledger.Executing)); err != nil {
			b.Fatal(err)
		}
		if _, err := db.Transition(ctx, l.Fence(), a.ID, benchChange(ledger.Verified)); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(start))
	}
	reportMedian(b, ds)
}

func BenchmarkLeaseAcquire(b *testing.B) {
	ctx := context.Background()
	db, _ := benchOpen(b, filepath.Join(benchDir(b), "ledger.db"))
	b.ResetTimer()
	for range b.N {
		if _, err := db.AcquireLease(ctx, "bench", "holder", time.Minute); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkHeartbeat(b *testing.B) {
	ctx := context.Background()
	db, l := benchOpen(b, filepath.Join(benchDir(b), "ledger.db"))
	b.ResetTimer()
	for range b.N {
		var err error
		if l, err = db.Heartbeat(ctx, l, time.Hour); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBudgetCheck(b *testing.B) {
	ctx := context.Background()
	db, _ := benchOpen(b, seeded100k(b))
	b.ResetTimer()
	for range b.N {
		if err := db.CheckBudget(ctx, benchPolicy, budgets.PostText); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStatusWith100kActions(b *testing.B) {
	ctx := context.Background()
	db, _ := benchOpen(b, seeded100k(b))
	ds := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		r, err := db.Status(ctx, "browser-operator", benchPolicy)
		if err != nil {
			b.Fatal(err)
		}
		if r.Counts[ledger.Verified] < 89000 {
			b.Fatalf("seeded ledger has %d verified actions", r.Counts[ledger.Verified])
		}
		ds = append(ds, time.Since(start))
	}
	reportMedian(b, ds)
}

var (
	seedOnce sync.Once
	seedPath string
	seedErr  error
)

// seeded100k returns a copy of a ledger holding 100,000 historical actions
// (mostly verified with budget usage spread over 30 days, some failed, a
// few ambiguous), built once per process with bulk SQL.
func seeded100k(b *testing.B) string {
	b.Helper()
	seedOnce.Do(func() {
		dir, err := os.MkdirTemp(os.Getenv("BENCH_DIR"), "ledger-seed-")
		if err != nil {
			seedErr = err
			return
		}
		seedPath = filepath.Join(dir, "seed.db")
		seedErr = buildSeed(seedPath)
	})
	if seedErr != nil {
		b.Fatal(seedErr)
	}
	data, err := os.ReadFile(seedPath)
	if err != nil {
		b.Fatal(err)
	}
	p := filepath.Join(benchDir(b), "ledger.db")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		b.Fatal(err)
	}
	return p
}

func buildSeed(path string) error {
	ctx := context.Background()
	db, err := ledger.Open(ctx, path, ledger.Options{})
	if err != nil {
		return err
	}
	db.Close()
	raw, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL")
	if err != nil {
		return err
	}
	defer raw.Close()
	tx, err := raw.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	ins, err := tx.Prepare(`INSERT INTO actions (id, idempotency_key, type, format, site, actor, target_url, payload_json, status,
		canonical_result, failure_class, failure_reason, created_at, updated_at, executing_at, settled_at)
		VALUES (?, ?, 'post', 'post_text', 'demo', 'alice', '', ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	use, err := tx.Prepare(`INSERT INTO budget_usage (action_id, format, limits, generation, at) VALUES (?, 'post_text', 'post_text,original', 1, ?)`)
	if err != nil {
		return err
	}
	now := time.Now()
	for i := range 100000 {
		in := benchIntent(-1 - i)
		key, _ := in.Key()
		at := now.Add(-time.Duration(i) * 26 * time.Second).UnixNano()
		status, result, class, reason := "verified", fmt.Sprintf("http://127.0.0.1/p/%d", i), "", ""
		switch {
		case i%1000 == 7:
			status, result, reason = "ambiguous", "", "timeout"
		case i%10 == 3:
			status, result, class, reason = "failed", "", "definitive", "absent"
		}
		id := fmt.Sprintf("act_seed%07d", i)
		if _, err := ins.Exec(id, key, string(in.Payload), status, result, class, reason, at, at, at, at); err != nil {
			return err
		}
		if status == "verified" {
			if _, err := use.Exec(id, at); err != nil {
				return err
			}
		}
	}
	return tx.Commit()
}

// BenchmarkListRunsWith35kRuns lists the newest 20 of 35,000 runs (a
// service's year of passes every 15 minutes), each with a summary of a
// few actions: the index by start time (migration 0011) reads 20 rows
// instead of sorting them all.
func BenchmarkListRunsWith35kRuns(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(benchDir(b), "ledger.db")
	db, err := ledger.Open(ctx, path, ledger.Options{})
	if err != nil {
		b.Fatal(err)
	}
	db.Close()
	raw, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL")
	if err != nil {
		b.Fatal(err)
	}
	tx, err := raw.Begin()
	if err != nil {
		b.Fatal(err)
	}
	summary := `{"outcome":"ok","counts":{"verified":2,"budget_skips":1},"actions":[` +
		`{"action_id":"act_1","entry":"e1","type":"post","status":"verified","result":"http://127.0.0.1/p/1","note":"verified","site":"demo"},` +
		`{"action_id":"","entry":"e2","type":"post","status":"budget_skip","reason":"budget exhausted: post_text allows 5 per 24h0m0s, 5 used and 0 in flight","site":"demo"}]}`
	start := time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC)
	for i := range 35000 {
		at := start.Add(time.Duration(i) * 15 * time.Minute).UnixNano()
		if _, err := tx.Exec(`INSERT INTO runs (id, lease_name, generation, holder, started_at, ended_at, outcome, summary_json)
			VALUES (?, 'browser-operator', ?, 'host:1:2:r', ?, ?, 'ok', ?)`, fmt.Sprintf("run_%08d", i), i+1, at, at+int64(time.Minute), summary); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	raw.Close()
	db, _ = benchOpen(b, path)
	ds := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		rs, err := db.ListRuns(ctx, 20)
		if err != nil {
			b.Fatal(err)
		}
		if len(rs) != 20 || rs[0].ID != "run_00034999" {
			b.Fatalf("got %d runs, the first %v", len(rs), rs[0].ID)
		}
		ds = append(ds, time.Since(t0))
	}
	reportMedian(b, ds)
}
