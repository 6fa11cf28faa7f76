package mwsite

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"
	"time"
)

// startTimeout bounds a start for a test: install.php on SQLite takes a
// second, a 2-core machine under the race detector and other tests a few.
const startTimeout = 2 * time.Minute

// missing skips tb because err (wrapping ErrNotInstalled) says a package is
// missing, or fails it when the CI environment variable is set: CI installs
// them (scripts/setup.sh --tests), so there the test runs.
func missing(tb testing.TB, err error) {
	tb.Helper()
	if os.Getenv("CI") != "" {
		tb.Fatalf("mwsite: CI is set but the MediaWiki test site cannot run: %v", err)
	}
	tb.Skipf("mwsite: skipping: %v", err)
}

// ForTest starts a site in a temporary directory for tb alone and stops it
// when tb ends. It skips tb when a package is missing (fails under CI).
func ForTest(tb testing.TB, opts ...Option) *Site {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	s, err := Start(ctx, tb.TempDir(), opts...)
	if errors.Is(err, ErrNotInstalled) {
		missing(tb, err)
	}
	if err != nil {
		tb.Fatalf("%v", err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("mwsite: close: %v", err)
		}
	})
	return s
}

// Shared is one site for a whole test binary, started by the first test
// that asks for it, so that a package's tests do not each pay for an
// install:
//
//	var mw = mwsite.NewShared()
//
//	func TestMain(m *testing.M) {
//		code := m.Run()
//		mw.Close()
//		os.Exit(code)
//	}
//
//	func TestX(t *testing.T) { site := mw.Site(t); ... }
type Shared struct {
	opts []Option
	once sync.Once
	dir  string
	site *Site
	err  error
}

// NewShared returns a shared site that starts, with opts, on first use.
func NewShared(opts ...Option) *Shared { return &Shared{opts: opts} }

// Site returns the shared site, starting it on the first call. It skips tb
// when a package is missing (fails under CI), and fails tb when the site
// could not start (every later call fails the same way).
func (sh *Shared) Site(tb testing.TB) *Site {
	tb.Helper()
	sh.once.Do(func() {
		sh.dir, sh.err = os.MkdirTemp("", "mwsite-")
		if sh.err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
		defer cancel()
		sh.site, sh.err = Start(ctx, sh.dir, sh.opts...)
	})
	if errors.Is(sh.err, ErrNotInstalled) {
		missing(tb, sh.err)
	}
	if sh.err != nil {
		tb.Fatalf("mwsite: shared site: %v", sh.err)
	}
	return sh.site
}

// Close stops the shared site, if it started, and removes its directory.
func (sh *Shared) Close() error {
	var err error
	if sh.site != nil {
		err = sh.site.Close()
	}
	if sh.dir != "" {
		if rerr := os.RemoveAll(sh.dir); rerr != nil && err == nil {
			err = rerr
		}
	}
	return err
}
