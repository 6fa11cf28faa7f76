package verify

import (
	"net"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Normalize returns s in the canonical form used to compare an intended text
// with an observed one: NFC, LF line endings, each run of horizontal
// whitespace collapsed to one space, no trailing horizontal whitespace on any
// line, and no leading or trailing whitespace overall. See the package
// documentation for the exact rules. Normalize is idempotent.
func Normalize(s string) string {
	s = norm.NFC.String(s)
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")

	var b strings.Builder
	b.Grow(len(s))
	for i, line := range strings.Split(s, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		pendingSpace := false
		for j := 0; j < len(line); {
			r, size := utf8.DecodeRuneInString(line[j:])
			if isHorizontalSpace(r, size) {
				pendingSpace = true
			} else {
				if pendingSpace {
					b.WriteByte(' ')
					pendingSpace = false
				}
				// Write the original bytes so invalid UTF-8 survives as is.
				b.WriteString(line[j : j+size])
			}
			j += size
		}
		// A pending space at the end of the line is trailing: dropped.
	}
	return strings.TrimFunc(b.String(), unicode.IsSpace)
}

// isHorizontalSpace reports whether r is a tab or a Unicode space separator
// (Zs), which includes the ASCII space and NBSP. A byte that is not valid
// UTF-8 (RuneError of size 1) is not a space.
func isHorizontalSpace(r rune, size int) bool {
	if r == utf8.RuneError && size <= 1 {
		return false
	}
	return r == '\t' || unicode.Is(unicode.Zs, r)
}

// NormalizeURL returns raw in the canonical form used to compare permalinks
// and parent URLs: for an absolute http or https URL the scheme and host are
// lowercased, a default port is dropped and an empty path becomes "/"; the
// path, query, fragment and user information are kept exactly (an empty
// query or fragment, a bare "?" or "#", is dropped). The fragment is kept
// because on some sites it identifies the result (a comment's
// "#comment-12" permalink); the site adapter drops the fragments that do
// not before verify sees a URL (sites.Adapter.CanonicalFor).
// Anything else is returned with surrounding whitespace trimmed. NormalizeURL
// is idempotent.
func NormalizeURL(raw string) string {
	s := strings.TrimSpace(raw)
	out, ok := normalizeURLOnce(s)
	if !ok {
		return s
	}
	// Keep the promise of idempotence even for inputs url.Parse reads in an
	// unusual way: a form that does not reproduce itself is returned as
	// given (trimmed), which then compares exactly.
	if again, ok := normalizeURLOnce(strings.TrimSpace(out)); !ok || again != out {
		return s
	}
	return out
}

// normalizeURLOnce applies the URL rules once; ok is false when s is not an
// absolute http(s) URL.
func normalizeURLOnce(s string) (string, bool) {
	u, err := url.Parse(s)
	if err != nil || u.Opaque != "" || u.Host == "" {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	var defaultPort string
	switch scheme {
	case "http":
		defaultPort = "80"
	case "https":
		defaultPort = "443"
	default:
		return "", false
	}
	host := strings.ToLower(u.Host)
	if h, port, err := net.SplitHostPort(host); err == nil && port == defaultPort {
		host = h
		if strings.Contains(h, ":") {
			host = "[" + h + "]"
		}
	}
	var b strings.Builder
	b.WriteString(scheme)
	b.WriteString("://")
	if u.User != nil {
		b.WriteString(u.User.String())
		b.WriteByte('@')
	}
	b.WriteString(host)
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	b.WriteString(path)
	if u.RawQuery != "" {
		b.WriteByte('?')
		b.WriteString(u.RawQuery)
	}
	if f := u.EscapedFragment(); f != "" {
		b.WriteByte('#')
		b.WriteString(f)
	}
	return b.String(), true
}
