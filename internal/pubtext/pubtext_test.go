package pubtext_test

import (
	"strings"
	"testing"

	"github.com/browserop/browserop/internal/pubtext"
)

func TestCheck(t *testing.T) {
	for _, ok := range []string{"plain", "two\nlines\tand a tab", "שלום \u200Fworld", "👩\u200D💻", "“curly” — dash"} {
		if err := pubtext.Check(ok, true); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for s, want := range map[string]string{
		"bell\a":         "U+0007 at character 5",
		"esc\x1b[31mred": "U+001B at character 4",
		"del\x7f":        "U+007F",
		"csi\u009b31m":   "U+009B at character 4",
		"evil\u202Egnp":  "bidirectional control U+202E at character 5",
		"iso\u2066late":  "bidirectional control U+2066",
		"crlf\r\n":       "carriage return",
	} {
		if err := pubtext.Check(s, true); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", s, err, want)
		}
	}
	if err := pubtext.Check("an alt\ntext", false); err == nil || !strings.Contains(err.Error(), "U+000A") {
		t.Errorf("a line feed in a one-line text: %v", err)
	}
}
