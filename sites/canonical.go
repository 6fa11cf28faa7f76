package sites

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/browserop/browserop/kind"
)

// rewrite is a compiled TransformSpec.
type rewrite struct {
	re      *regexp.Regexp
	replace string
	zone    *time.Location
	// toCase, when set, replaces a match with its cased form.
	toCase func(string) string
}

func compileRewrites(ts []TransformSpec) []rewrite {
	out := make([]rewrite, 0, len(ts))
	for _, t := range ts {
		zone := time.UTC
		if t.Zone != "" {
			zone, _ = time.LoadLocation(t.Zone) // validated
		}
		r := rewrite{re: regexp.MustCompile(t.Match), replace: t.Replace, zone: zone} // validated
		switch t.Case {
		case "upper":
			r.toCase = strings.ToUpper
		case "lower":
			r.toCase = strings.ToLower
		}
		out = append(out, r)
	}
	return out
}

// signer is who a text's transforms name, and when ({actor},
// {actor.name}, {time:LAYOUT}); the zero signer for canonical rewrites,
// which name neither.
type signer struct {
	login, slug, name string
	at                time.Time
}

func applyRewrites(s string, rs []rewrite) string {
	return applySigned(s, rs, signer{})
}

// applySigned applies rs in order, each replacement's placeholders filled
// from by (written so that a "$" in a name is itself, not a group).
func applySigned(s string, rs []rewrite, by signer) string {
	for _, r := range rs {
		if r.toCase != nil {
			s = r.re.ReplaceAllStringFunc(s, r.toCase)
			continue
		}
		s = r.re.ReplaceAllString(s, by.fill(r.replace, r.zone))
	}
	return s
}

// fill puts the signer into a replacement's placeholders.
func (by signer) fill(replace string, zone *time.Location) string {
	if !strings.Contains(replace, "{") {
		return replace
	}
	lit := func(v string) string { return strings.ReplaceAll(v, "$", "$$") }
	var b strings.Builder
	rest := replace
	for {
		i := strings.Index(rest, "{")
		if i < 0 {
			b.WriteString(rest)
			return b.String()
		}
		j := strings.Index(rest[i:], "}") + i
		if i > 0 && rest[i-1] == '$' {
			// ${1}: the group's reference, for ReplaceAllString.
			b.WriteString(rest[:j+1])
			rest = rest[j+1:]
			continue
		}
		b.WriteString(rest[:i])
		switch n := rest[i+1 : j]; {
		case n == "actor":
			b.WriteString(lit(by.login))
		case n == "actor.slug":
			b.WriteString(lit(by.slug))
		case n == "actor.name":
			b.WriteString(lit(by.name))
		case strings.HasPrefix(n, "time:"):
			b.WriteString(lit(by.at.In(zone).Format(strings.TrimPrefix(n, "time:"))))
		}
		rest = rest[j+1:]
	}
}

// canonicalRule is a compiled CanonicalSpec: the site's, or a kind's own.
type canonicalRule struct {
	spec         *CanonicalSpec // nil: the default rule
	keepFragment *regexp.Regexp
	rewrites     []rewrite // canonical.rewrite
}

// compileCanonical compiles a validated CanonicalSpec (nil is the default
// rule).
func compileCanonical(c *CanonicalSpec) canonicalRule {
	r := canonicalRule{spec: c}
	if c == nil {
		return r
	}
	if c.KeepFragment != "" {
		r.keepFragment = regexp.MustCompile("^(?:" + c.KeepFragment + ")$") // validated
	}
	r.rewrites = compileRewrites(c.Rewrite)
	return r
}

// Canonical returns the canonical form of an absolute http(s) URL on the
// site under the site's canonical rule: scheme and host lower-cased, the
// fragment dropped unless it identifies a result (canonical.keep_fragment),
// the query keys canonical.keep_query or drop_query say kept, then
// canonical.rewrite. Anything that is not an absolute http(s) URL comes
// back unchanged. An action's own canonical rule (CanonicalFor) replaces
// it for that kind.
func (d *Declarative) Canonical(raw string) string {
	return d.canonical.apply(raw)
}

// CanonicalFor returns the canonical form of raw under the rule of kind
// k: the action's own canonical rule when it declares one, else the
// site's (Canonical). A kind the site does not configure has the site's.
func (d *Declarative) CanonicalFor(k kind.Kind, raw string) string {
	return d.canonicalOf(k).apply(raw)
}

// canonicalOf returns the canonical rule in effect for kind k.
func (d *Declarative) canonicalOf(k kind.Kind) canonicalRule {
	if r, ok := d.kindCanonical[k]; ok {
		return r
	}
	return d.canonical
}

// apply puts raw in the rule's canonical form (see Canonical).
func (r canonicalRule) apply(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return raw
	}
	u.Scheme = strings.ToLower(u.Scheme)
	u.Host = strings.ToLower(u.Host)
	c := r.spec
	frag := u.Fragment
	u.Fragment, u.RawFragment = "", ""
	if c == nil {
		return u.String()
	}
	if r.keepFragment != nil && frag != "" && r.keepFragment.MatchString(frag) {
		u.Fragment = frag
	}
	if len(c.KeepQuery) > 0 || len(c.DropQuery) > 0 {
		u.RawQuery = filterQuery(u.RawQuery, c.KeepQuery, c.DropQuery)
	}
	return applyRewrites(u.String(), r.rewrites)
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
// body (see splitText). The kind's transforms (its own, else the site's)
// then apply in order, naming actor and the time at where they say so.
func (d *Declarative) Expected(k kind.Kind, actor, text string, at time.Time) string {
	rs := d.transforms
	if a := d.spec.Actions.get(k); a != nil {
		if a.splitsText() {
			title, body := splitText(text)
			text = title + "\n" + body
		}
		if a.Transforms != nil {
			rs = d.kindTransforms[k]
		}
	}
	acct := d.account(actor)
	return applySigned(text, rs, signer{login: actor, slug: acct.Slug, name: acct.Name, at: at})
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
