package browser

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"net"
	"net/url"
	"sort"
	"strings"
)

// TargetID is the raw DevTools id of a tab. It never leaves the machine: it
// may be stored in the local tab table, but never in logs, errors, metrics or
// anything exported. Its String and GoString methods print only a short hash
// (see ShortID), so an accidental %v or %s in a log line leaks nothing; use
// Raw to get the id itself for the local ledger.
type TargetID string

// Raw returns the id itself, for the local tab table only.
func (id TargetID) Raw() string { return string(id) }

// String returns the short hash of the id, never the id.
func (id TargetID) String() string { return ShortID(string(id)) }

// GoString returns the short hash of the id, never the id.
func (id TargetID) GoString() string { return ShortID(string(id)) }

// ShortID returns a short, stable, one-way name for a raw target id, such as
// "tab-3fa94c1e02", for logs and errors.
func ShortID(raw string) string {
	if raw == "" {
		return "tab-none"
	}
	sum := sha256.Sum256([]byte("browserop-tab\x00" + raw))
	return "tab-" + hex.EncodeToString(sum[:5])
}

// BindingHash returns the hex sha256 of the parts, each length-prefixed so
// that ("ab", "c") and ("a", "bc") differ. The tab ledger binds a tab to its
// task, run, site and URL with it.
func BindingHash(parts ...string) string {
	h := sha256.New()
	var n [8]byte
	for _, p := range parts {
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// LooseURL returns the loose form of an http(s) URL, for telling whether a
// live tab (or the page before an action) is on the page a ledger record
// names: lower-case scheme and host, no default port, no user info, no
// fragment, an empty path as "/", and the query parameters sorted by key
// (values keep their order). Anything that does not parse as an absolute
// http(s) URL is returned trimmed but otherwise unchanged, so it never
// compares equal to the loose form of an http(s) URL by accident. It is
// looser than verify.NormalizeURL, which keeps the query and user info
// exactly because it compares permalinks, where over-merging would turn a
// duplicate into a verified effect.
func LooseURL(raw string) string {
	raw = strings.TrimSpace(raw)
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "HTTP" && u.Scheme != "HTTPS") || u.Host == "" {
		return raw
	}
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") { // IPv6 literal
		host = "[" + host + "]"
	}
	if port != "" {
		host = net.JoinHostPort(strings.Trim(host, "[]"), port)
	}
	out := url.URL{Scheme: scheme, Host: host, Path: u.Path, RawPath: u.RawPath}
	if out.Path == "" {
		out.Path = "/"
	}
	if u.RawQuery != "" {
		q := u.Query()
		keys := make([]string, 0, len(q))
		for k := range q {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var b strings.Builder
		for _, k := range keys {
			for _, v := range q[k] {
				if b.Len() > 0 {
					b.WriteByte('&')
				}
				b.WriteString(url.QueryEscape(k))
				b.WriteByte('=')
				b.WriteString(url.QueryEscape(v))
			}
		}
		out.RawQuery = b.String()
	}
	return out.String()
}

// Origin returns scheme://host[:port] of an absolute http(s) URL, lower-cased
// and without a default port, or "" when raw is not one.
func Origin(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return ""
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return ""
	}
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if port != "" {
		return scheme + "://" + net.JoinHostPort(host, port)
	}
	if strings.Contains(host, ":") {
		return scheme + "://[" + host + "]"
	}
	return scheme + "://" + host
}

// IsBlankMarker reports whether raw is about:blank with a fragment, the
// URL a tab can be created on to carry a name from its first moment (the
// operator names a tab's ledger record this way). Only NewTab takes it, as
// the URL a tab is created on; nothing navigates to it.
func IsBlankMarker(raw string) bool {
	rest, ok := strings.CutPrefix(raw, "about:blank#")
	return ok && rest != "" && !strings.ContainsAny(rest, " \t\r\n")
}
