package sites

import (
	"testing"

	"github.com/browserop/browserop/media"
)

// A slot puts its number and its file's name into selectors; the name is
// escaped so that it stays one quoted CSS string whatever it holds.
func TestSlotPut(t *testing.T) {
	for _, tt := range []struct {
		file, sel, want string
	}{
		{"/m/cat.png", "#media-{n}", "#media-3"},
		{"/m/cat.png", `li[aria-label="{name}"]:nth-child({n})`, `li[aria-label="cat"]:nth-child(3)`},
		{"/m/my photo.final.jpg", `[aria-label="{name}"]`, `[aria-label="my photo.final"]`},
		{`/m/a"b\c'd.gif`, `[aria-label="{name}"]`, `[aria-label="a\"b\\c\'d"]`},
		{"/m/line\nbreak.png", `[aria-label="{name}"]`, `[aria-label="line\a break"]`},
		{"/m/noext", `[aria-label="{name}"]`, `[aria-label="noext"]`},
	} {
		got := slotOf(2, media.Item{File: tt.file}).put(tt.sel)
		if got != tt.want {
			t.Errorf("%q in %q: got %q, want %q", tt.file, tt.sel, got, tt.want)
		}
	}
}
