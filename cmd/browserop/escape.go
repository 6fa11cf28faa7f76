package main

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// clean returns s fit to print on a terminal: every character a terminal
// would act on is written as an escape instead. That is C0 controls
// (ESC, BEL, CR, LF, TAB: a title must not start a new line or a table
// cell), DEL, C1 controls (CSI U+009B, OSC U+009D...), the bidirectional
// overrides and isolates that reorder what a reader sees, and bytes that
// are not UTF-8. Every text that comes from an agent, a page or a site
// (titles, reasons, page text, results, site error messages) goes through
// it before a table, a show or a summary prints it; text logs are safe by
// themselves (slog quotes such values).
func clean(s string) string {
	if !needsCleaning(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case unsafeRune(r) && r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}

func needsCleaning(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	for _, r := range s {
		if unsafeRune(r) {
			return true
		}
	}
	return false
}

func unsafeRune(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	}
	return false
}

// cleanAll is clean over a list.
func cleanAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = clean(s)
	}
	return out
}
