package browser_test

import (
	"context"
	"os"
	"testing"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/browser/browsertest"
)

// BenchmarkDevToolsRoundTrip times one page read (Tab.Text: a DOM query
// and an evaluation) on a Chrome driven over its DevTools pipe directly,
// and on one behind the relay (a Persistent launch, as every run and
// serve use): the relay's cost per command is the difference.
func BenchmarkDevToolsRoundTrip(b *testing.B) {
	s := newSite(b)
	for _, mode := range []struct {
		name       string
		persistent bool
	}{{"pipe", false}, {"relay", true}} {
		b.Run(mode.name, func(b *testing.B) {
			dir, err := os.MkdirTemp("", "browserop-bench-")
			if err != nil {
				b.Fatal(err)
			}
			defer func() {
				browser.KillChromeOn(dir)
				_ = browsertest.RemoveAll(dir)
			}()
			cfg := browsertest.Config(dir)
			cfg.ExecPath = browsertest.Executable(b)
			cfg.DevToolsPort = false
			cfg.Persistent = mode.persistent
			ctx := context.Background()
			br, err := browser.Launch(ctx, cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer br.Close()
			tab, err := br.NewTab(ctx, s.URL+"/page")
			if err != nil {
				b.Fatal(err)
			}
			if _, err := tab.Text(ctx, "#whoami"); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := tab.Text(ctx, "#whoami"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
