package operator

import "testing"

// printable escapes what a terminal would act on, and backslashes so an
// escape always reads as one, but leaves quotes: a reason quotes the
// selectors it names.
func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		`the field "textarea#t" never showed`: `the field "textarea#t" never showed`,
		"clear \x1b[2J and\nnew line":         `clear \x1b[2J and\nnew line`,
		"a\u202eb":                            `a\u202eb`,
		`back\slash`:                          `back\\slash`,
		"bad \xff byte":                       `bad \xff byte`,
		"café ’quotes’":                       "café ’quotes’",
	} {
		if got := printable(in); got != want {
			t.Errorf("printable(%q) = %q, want %q", in, got, want)
		}
	}
}
