package sites_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/sites"
)

// FuzzParse: the loader never panics on any input, every error wraps
// ErrInvalid, and whatever it accepts is valid: its origins are origins, its
// templates stay on them, and moving it to its own origins accepts it again.
func FuzzParse(f *testing.F) {
	demo, err := os.ReadFile(demoPath)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(demo)
	f.Add([]byte(""))
	f.Add([]byte("origins: [http://a.example]\n"))
	f.Add([]byte("a: &x [*x]\n"))
	f.Add([]byte(strings.Replace(string(demo), "{origin}/compose", "{origin}@evil/compose", 1)))
	f.Add([]byte(strings.Replace(string(demo), "max_pages: 5", "max_pages: -1", 1)))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := sites.Parse("fuzz.yaml", data)
		if err != nil {
			if !errors.Is(err, sites.ErrInvalid) {
				t.Fatalf("error does not wrap ErrInvalid: %v", err)
			}
			return
		}
		if len(d.Origins()) == 0 {
			t.Fatal("accepted a site without origins")
		}
		for _, o := range d.Origins() {
			if browser.Origin(o) != o {
				t.Fatalf("accepted origin %q that is not canonical", o)
			}
		}
		if _, err := d.WithOrigins(d.Origins()...); err != nil {
			t.Fatalf("accepted spec fails validation again: %v", err)
		}
		configured := false
		for _, k := range kind.All {
			configured = configured || d.Supports(k)
		}
		if !configured {
			t.Fatal("accepted a site without actions")
		}
	})
}
