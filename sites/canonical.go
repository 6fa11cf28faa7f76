package sites

import (
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/browserop/browserop/kind"
)

// rewrite is a compiled TransformSpec.
type rewrite struct {
	re      *regexp.Regexp
	replace string
}

func compileRewrites(ts []TransformSpec) []rewrite {
	out := make([]rewrite, 0, len(ts))
	for _, t := range ts {
		out = append(out, rewrite{regexp.MustCompile(t.Match), t.Replace}) // validated
	}
	return out
}

func applyRewrites(s string, rs []rewrite) string {
	for _, r := range rs {
		s = r.re.ReplaceAllString(s, r.replace)
	}
	return s
}

// Canonical returns the canonical form of an absolute http(s) URL on the
// site: scheme and host lower-cased, the fragment dropped unless it
// identifies a result (canonical.keep_fragment), the query keys
// canonical.keep_query or drop_query say kept, then canonical.rewrite.
// Anything that is not an absolute http(s) URL comes back unchanged.
func (d *Declarative) Canonical(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return raw
	}
	u.Scheme = strings.ToLower(u.Scheme)
	u.Host = strings.ToLower(u.Host)
	c := d.spec.Canonical
	frag := u.Fragment
	u.Fragment, u.RawFragment = "", ""
	if c == nil {
		return u.String()
	}
	if d.keepFragment != nil && frag != "" && d.keepFragment.MatchString(frag) {
		u.Fragment = frag
	}
	if len(c.KeepQuery) > 0 || len(c.DropQuery) > 0 {
		u.RawQuery = filterQuery(u.RawQuery, c.KeepQuery, c.DropQuery)
	}
	return applyRewrites(u.String(), d.rewrites)
}

// filterQuery keeps the parameters of a raw query whose key is in keep
// (when keep is set) and not in drop, in their order and spelling.
func filterQuery(raw string, keep, drop []string) string {
	if raw == "" {
		return ""
	}
	var out []string
	for _, part := range strings.Split(raw, "&") {
		key, _, _ := strings.Cut(part, "=")
		if k, err := url.QueryUnescape(key); err == nil {
			key = k
		}
		if len(keep) > 0 && !slices.Contains(keep, key) || slices.Contains(drop, key) {
			continue
		}
		out = append(out, part)
	}
	return strings.Join(out, "&")
}

// Expected returns the intended text as the site shows it. An action that
// fills a title and a body shows them as two lines: the title, then the
// body (see splitText). The site's transforms then apply in order.
func (d *Declarative) Expected(k kind.Kind, text string) string {
	if a := d.spec.Actions.get(k); a != nil && a.splitsText() {
		title, body := splitText(text)
		text = title + "\n" + body
	}
	return applyRewrites(text, d.transforms)
}

// splitText splits a text into its title, the first line, and its body,
// the rest without the blank lines that start it. "\r\n" counts as "\n".
func splitText(text string) (title, body string) {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	title, body, _ = strings.Cut(text, "\n")
	return title, strings.TrimLeft(body, "\n")
}

// fillValue returns what a field gets for an intent's text.
func fillValue(f FillSpec, text string) string {
	title, body := splitText(text)
	switch f.Value {
	case "", "{text}":
		return text
	case "{title}":
		return title
	case "{body}":
		return body
	}
	return f.Value
}
