// Package pubtext says which characters a text browserop publishes may
// hold (a post's or reply's text, a thread's parts, an image's alt text):
// what a person can see and type, never a character that drives a
// terminal or hides how the text reads. See
// docs/decisions/2026-12-02-what-a-published-text-may-contain.md.
package pubtext

import "fmt"

// Check returns nil when s holds only characters a published text may
// hold, and otherwise an error naming the first other one, its code
// point and where it is (counted in characters from 1): C0 controls
// other than the tab (and the line feed, when lines is true), DEL, C1
// controls (U+0080 to U+009F), and the bidirectional embeddings,
// overrides and isolates (U+202A to U+202E, U+2066 to U+2069). The
// direction marks (U+200E, U+200F, U+061C) and joiners are kept: scripts
// and emoji need them. s must be valid UTF-8 (callers check that first).
func Check(s string, lines bool) error {
	n := 0
	for _, r := range s {
		n++
		switch {
		case r == '\t', r == '\n' && lines:
		case r == '\r':
			return fmt.Errorf("holds a carriage return (U+000D) at character %d: end lines with a line feed alone", n)
		case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
			return fmt.Errorf("holds the control character U+%04X at character %d: a published text holds no control characters but %s", r, n, kept(lines))
		case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			return fmt.Errorf("holds the bidirectional control U+%04X at character %d, which makes a text read otherwise than it is stored: remove it (direction marks U+200E and U+200F are kept)", r, n)
		}
	}
	return nil
}

func kept(lines bool) string {
	if lines {
		return "line feeds and tabs"
	}
	return "tabs"
}
