package rig

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"
	"time"
)

// Site is what a rig starts: a site that stops with Close.
type Site interface{ Close() error }

// Kind names a rig and how it starts a site, for ForTest and Shared.
type Kind[S Site] struct {
	// Name prefixes messages and temporary directories ("wpsite").
	Name string
	// What names the site in a message ("the WordPress test site").
	What string
	// Start starts a site in dir, an empty directory.
	Start func(ctx context.Context, dir string) (S, error)
	// NotInstalled is the error Start wraps when a package is missing.
	NotInstalled error
	// Timeout bounds a start.
	Timeout time.Duration
}

// Missing skips tb because err (wrapping k.NotInstalled) says a package is
// missing, or fails it when the CI environment variable is set: CI installs
// them (scripts/setup.sh --tests), so there the test runs.
func (k Kind[S]) Missing(tb testing.TB, err error) {
	tb.Helper()
	if os.Getenv("CI") != "" {
		tb.Fatalf("%s: CI is set but %s cannot run: %v", k.Name, k.What, err)
	}
	tb.Skipf("%s: skipping: %v", k.Name, err)
}

// ForTest starts a site in a temporary directory for tb alone and stops it
// when tb ends. It skips tb when a package is missing (fails under CI).
func (k Kind[S]) ForTest(tb testing.TB) S {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), k.Timeout)
	defer cancel()
	s, err := k.Start(ctx, tb.TempDir())
	if errors.Is(err, k.NotInstalled) {
		k.Missing(tb, err)
	}
	if err != nil {
		tb.Fatalf("%v", err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("%s: close: %v", k.Name, err)
		}
	})
	return s
}

// Shared is one site for a whole test binary, started by the first test
// that asks for it, so that a package's tests do not each pay for an
// install:
//
//	var wp = wpsite.NewShared()
//
//	func TestMain(m *testing.M) {
//		code := m.Run()
//		wp.Close()
//		os.Exit(code)
//	}
//
//	func TestX(t *testing.T) { site := wp.Site(t); ... }
type Shared[S Site] struct {
	kind Kind[S]
	once sync.Once
	dir  string
	site S
	ok   bool
	err  error
}

// NewShared returns a shared site of kind k that starts on first use.
func NewShared[S Site](k Kind[S]) *Shared[S] { return &Shared[S]{kind: k} }

// Site returns the shared site, starting it on the first call. It skips tb
// when a package is missing (fails under CI), and fails tb when the site
// could not start (every later call fails the same way).
func (sh *Shared[S]) Site(tb testing.TB) S {
	tb.Helper()
	sh.once.Do(func() {
		sh.dir, sh.err = os.MkdirTemp("", sh.kind.Name+"-")
		if sh.err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), sh.kind.Timeout)
		defer cancel()
		sh.site, sh.err = sh.kind.Start(ctx, sh.dir)
		sh.ok = sh.err == nil
	})
	if errors.Is(sh.err, sh.kind.NotInstalled) {
		sh.kind.Missing(tb, sh.err)
	}
	if sh.err != nil {
		tb.Fatalf("%s: shared site: %v", sh.kind.Name, sh.err)
	}
	return sh.site
}

// Close stops the shared site, if it started, and removes its directory.
func (sh *Shared[S]) Close() error {
	var err error
	if sh.ok {
		err = sh.site.Close()
	}
	if sh.dir != "" {
		if rerr := os.RemoveAll(sh.dir); rerr != nil && err == nil {
			err = rerr
		}
	}
	return err
}
