package mwsite

import (
	"context"
	"testing"
	"time"

	"github.com/browserop/browserop/internal/testrig/rig"
)

// kind is this rig for package rig's ForTest and Shared.
func kind(opts []Option) rig.Kind[*Site] {
	return rig.Kind[*Site]{
		Name: "mwsite", What: "the MediaWiki test site", NotInstalled: ErrNotInstalled, Timeout: 2 * time.Minute,
		Start: func(ctx context.Context, dir string) (*Site, error) { return Start(ctx, dir, opts...) },
	}
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
