package ledger_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/browserop/browserop/budgets"
	"github.com/browserop/browserop/ledger"
	"github.com/stretchr/testify/require"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// MustOpen opens a fresh ledger file in a temp dir with a test clock.
func MustOpen(tb testing.TB) (*ledger.DB, *clock) {
	tb.Helper()
	c := newClock()
	db := MustOpenAt(tb, filepath.Join(tb.TempDir(), "state", "ledger.db"), c)
	return db, c
}

// MustOpenAt opens the ledger at path and closes it when the test ends.
func MustOpenAt(tb testing.TB, path string, c *clock) *ledger.DB {
	tb.Helper()
	db, err := ledger.Open(context.Background(), path, ledger.Options{Now: c.Now})
	require.NoError(tb, err)
	tb.Cleanup(func() { db.Close() })
	return db
}

// mustLease acquires the default lease for holder.
func mustLease(tb testing.TB, db *ledger.DB, holder string) ledger.Lease {
	tb.Helper()
	l, err := db.AcquireLease(context.Background(), "browser-operator", holder, time.Minute)
	require.NoError(tb, err)
	return l
}

func postIntent(text string) ledger.Intent {
	p, _ := json.Marshal(map[string]any{"text": text})
	return ledger.Intent{Type: "post", Format: budgets.PostText, Site: "demo", Actor: "alice",
		TargetURL: "http://127.0.0.1/compose", Payload: p}
}

func mustReserve(tb testing.TB, db *ledger.DB, f ledger.Fence, in ledger.Intent) ledger.Action {
	tb.Helper()
	a, reserved, err := db.Reserve(context.Background(), f, in)
	require.NoError(tb, err)
	require.True(tb, reserved, "got reserved=false for a new intent")
	return a
}

func mustPolicy(tb testing.TB, formats map[string]budgets.FormatLimit, groups map[string]budgets.GroupLimit) budgets.Policy {
	tb.Helper()
	p, err := budgets.NewPolicy(formats, groups)
	require.NoError(tb, err)
	return p
}
