package rig

import (
	"context"
	"errors"
	"testing"
	"time"
)

type fakeSite struct{ closed *int }

func (f fakeSite) Close() error { *f.closed++; return nil }

// A shared site starts once, for every test that asks, and closes once; a
// missing package skips the test (outside CI).
func TestShared(t *testing.T) {
	t.Setenv("CI", "")
	starts, closed := 0, 0
	k := Kind[fakeSite]{Name: "fake", What: "a fake site", NotInstalled: errors.New("not installed"), Timeout: time.Second,
		Start: func(ctx context.Context, dir string) (fakeSite, error) { starts++; return fakeSite{&closed}, nil }}
	sh := NewShared(k)
	sh.Site(t)
	sh.Site(t)
	if starts != 1 {
		t.Fatalf("started %d times, want 1", starts)
	}
	if err := sh.Close(); err != nil || closed != 1 {
		t.Fatalf("Close: %v, closed %d times", err, closed)
	}

	missing := Kind[fakeSite]{Name: "fake", What: "a fake site", NotInstalled: errors.New("not installed"), Timeout: time.Second}
	missing.Start = func(ctx context.Context, dir string) (fakeSite, error) {
		return fakeSite{}, missing.NotInstalled
	}
	skipped := false
	t.Run("missing", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		NewShared(missing).Site(t)
	})
	if !skipped {
		t.Fatal("a missing package skips the test")
	}
	if err := NewShared(missing).Close(); err != nil {
		t.Fatalf("closing a site that never started: %v", err)
	}
}
