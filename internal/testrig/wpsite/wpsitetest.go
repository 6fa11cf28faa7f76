package wpsite

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/browserop/browserop/internal/testrig/rig"
)

// kind is this rig for package rig's ForTest and Shared.
func kind(opts []Option) rig.Kind[*Site] {
	return rig.Kind[*Site]{
		Name: "wpsite", What: "the WordPress test site", NotInstalled: ErrNotInstalled, Timeout: 3 * time.Minute,
		Start: func(ctx context.Context, dir string) (*Site, error) { return Start(ctx, dir, opts...) },
	}
}

// missing skips tb because err (wrapping ErrNotInstalled) says a package is
// missing, or fails it when the CI environment variable is set.
func missing(tb testing.TB, err error) {
	tb.Helper()
	kind(nil).Missing(tb, err)
}

// ForTest starts a site in a temporary directory for tb alone and stops it
// when tb ends. It skips tb when a package is missing (fails under CI).
func ForTest(tb testing.TB, opts ...Option) *Site {
	tb.Helper()
	return kind(opts).ForTest(tb)
}

// Shared is one site for a whole test binary, started by the first test
// that asks for it (see rig.Shared).
type Shared = rig.Shared[*Site]

// NewShared returns a shared site that starts, with opts, on first use.
func NewShared(opts ...Option) *Shared { return rig.NewShared(kind(opts)) }

// ThemeForTest switches s to the theme name for tb (UseTheme) and back to
// the theme it used before when tb ends, so that a test binary's tests
// share one site whatever theme each needs: tests that switch it must not
// run in parallel with tests that use it. It skips tb when the theme's
// package is missing (fails under CI).
func (s *Site) ThemeForTest(tb testing.TB, name string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	before, err := s.Theme(ctx)
	if err != nil {
		tb.Fatalf("wpsite: %v", err)
	}
	err = s.UseTheme(ctx, name)
	if errors.Is(err, ErrNotInstalled) {
		missing(tb, err)
	}
	if err != nil {
		tb.Fatalf("%v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := s.UseTheme(ctx, before); err != nil {
			tb.Errorf("wpsite: switch back to %s: %v", before, err)
		}
	})
}
