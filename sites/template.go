package sites

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/intent"
	"github.com/browserop/browserop/kind"
)

// placeholders splits a template into its placeholder names, or fails on an
// unbalanced brace.
func placeholders(tmpl string) ([]string, error) {
	var names []string
	rest := tmpl
	for {
		i := strings.IndexAny(rest, "{}")
		if i < 0 {
			return names, nil
		}
		if rest[i] == '}' {
			return nil, fmt.Errorf("unbalanced }")
		}
		j := strings.IndexAny(rest[i+1:], "{}")
		if j < 0 || rest[i+1+j] != '}' {
			return nil, fmt.Errorf("unbalanced {")
		}
		names = append(names, rest[i+1:i+1+j])
		rest = rest[i+2+j:]
	}
}

// checkTemplate validates a URL template: "{target}" alone (when allowed), or
// "{origin}" followed by a path or query, or an absolute URL on a declared
// origin; {actor} and {actor.slug} may appear after the origin, and so may
// the names extra allows ({title}, {target.NAME}).
func checkTemplate(p *problems, path, tmpl string, origins map[string]bool, allowTarget bool, extra ...string) {
	names, err := placeholders(tmpl)
	if err != nil {
		p.add(path, "%q: %v", tmpl, err)
		return
	}
	if tmpl == "{target}" {
		if !allowTarget {
			p.add(path, "{target} is only for actions on an object")
		}
		return
	}
	sample := tmpl
	for _, n := range names {
		switch {
		case n == "origin":
			continue
		case n == "actor", n == "actor.slug", slices.Contains(extra, n):
		case n == "target":
			p.add(path, "{target} must be the whole template (its parts are {target.NAME}, the named groups of the action's target.pattern)")
			return
		case strings.HasPrefix(n, "target."):
			p.add(path, "{%s}: the action's target.pattern has no group (?P<%s>…)", n, strings.TrimPrefix(n, "target."))
			return
		default:
			use := append([]string{"{origin}", "{actor}", "{actor.slug}"}, braced(extra)...)
			p.add(path, "unknown placeholder {%s} (use %s or {target})", n, strings.Join(use, ", "))
			return
		}
		sample = strings.ReplaceAll(sample, "{"+n+"}", "x")
	}
	if strings.Count(tmpl, "{origin}") > 1 || (strings.Contains(tmpl, "{origin}") && !strings.HasPrefix(tmpl, "{origin}")) {
		p.add(path, "{origin} may only start the template")
		return
	}
	if rest, ok := strings.CutPrefix(tmpl, "{origin}"); ok && rest != "" && rest[0] != '/' && rest[0] != '?' {
		p.add(path, "{origin} must be followed by a path or a query")
		return
	}
	if len(origins) == 0 {
		return // the origins themselves are reported
	}
	if strings.HasPrefix(tmpl, "{origin}") {
		for o := range origins {
			sample = strings.Replace(sample, "{origin}", o, 1)
			break
		}
	}
	if o := browser.Origin(sample); o == "" || !origins[o] {
		p.add(path, "%q leaves the site's origins", tmpl)
		return
	}
	if _, err := url.Parse(sample); err != nil {
		p.add(path, "%q is not a URL template: %v", tmpl, err)
	}
}

func braced(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "{" + n + "}"
	}
	return out
}

// checkSearchTemplate validates a search URL template: a URL template
// that may also be "{target}" (the comments on the target's page) and may
// put the exact text, {text}, in its query, and the names extra allows.
func checkSearchTemplate(p *problems, path, tmpl string, origins map[string]bool, extra ...string) {
	if tmpl == "{target}" {
		return
	}
	if i := strings.Index(tmpl, "{text}"); i >= 0 {
		q := strings.Index(tmpl, "?")
		if q < 0 || q > i {
			p.add(path, "{text} may only appear in the query")
			return
		}
		tmpl = strings.ReplaceAll(tmpl, "{text}", "text")
	}
	checkTemplate(p, path, tmpl, origins, false, extra...)
}

// checkFieldTemplate validates a field template: "{origin}/..." with {value}.
func checkFieldTemplate(p *problems, path, tmpl string, origins map[string]bool) {
	names, err := placeholders(tmpl)
	if err != nil {
		p.add(path, "%q: %v", tmpl, err)
		return
	}
	hasValue := false
	for _, n := range names {
		switch n {
		case "origin":
		case "value":
			hasValue = true
		default:
			p.add(path, "unknown placeholder {%s} (use {origin} and {value})", n)
			return
		}
	}
	if !hasValue {
		p.add(path, "must contain {value}")
		return
	}
	if !strings.HasPrefix(tmpl, "{origin}/") || strings.Count(tmpl, "{origin}") > 1 {
		p.add(path, "must start with {origin}/")
	}
}

var handleRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// urlVars are what a URL template is filled with for one intent: the
// actor, the target, the exact text (for {text} and {title}), and the
// action's target.pattern, whose named groups are {target.NAME}.
type urlVars struct {
	actor, target, text string
	pattern             *regexp.Regexp
	// fields are the intent's entry fields ({fields.NAME}).
	fields intent.Fields
}

// expandURL fills a validated URL template for an intent and checks that
// the result stays on the site's origins.
func (d *Declarative) expandURL(tmpl, actor, target string) (string, error) {
	return d.expand(tmpl, urlVars{actor: actor, target: target})
}

// expand fills a validated URL template with v. {target} alone is the
// target, which must be on the site. Every other value is escaped for
// where it stands: as a path segment before the query, as a query value
// in it. {title} is the text's first line; {target.NAME} is what the
// group NAME of the target pattern captured, unescaped first (a target's
// "Team_plan%20p1" is "Team_plan p1", escaped again where it goes), and a
// target the pattern does not match is a HardStop of kind target before
// any navigation.
func (d *Declarative) expand(tmpl string, v urlVars) (string, error) {
	if tmpl == "{target}" {
		if err := d.onOrigin(v.target); err != nil {
			return "", hardStop(StopTarget, err, "target")
		}
		return v.target, nil
	}
	names, _ := placeholders(tmpl) // validated
	var captured []int
	if slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "target.") }) {
		if err := d.onOrigin(v.target); err != nil {
			return "", hardStop(StopTarget, err, "target")
		}
		if v.pattern != nil {
			// Anchored at both ends (TargetSpec.whole): the whole target.
			captured = v.pattern.FindStringSubmatchIndex(v.target)
		}
		if captured == nil {
			return "", hardStop(StopTarget, nil, "the target %q does not match the action's target.pattern", excerpt(v.target))
		}
	}
	out := strings.Replace(tmpl, "{origin}", d.origins[0], 1)
	var b strings.Builder
	rest := out
	// Whether a value is in the query is the template's own text to say:
	// its literal "?" (no escaped value holds one).
	inQuery := false
	for {
		i := strings.Index(rest, "{")
		if i < 0 {
			b.WriteString(rest)
			break
		}
		j := strings.Index(rest[i:], "}") + i
		b.WriteString(rest[:i])
		inQuery = inQuery || strings.Contains(rest[:i], "?")
		name := rest[i+1 : j]
		val, err := d.urlValue(name, v, captured)
		if err != nil {
			return "", err
		}
		b.WriteString(escapeFor(val, inQuery))
		rest = rest[j+1:]
	}
	out = b.String()
	if err := d.onOrigin(out); err != nil {
		return "", hardStop(StopOffsite, err, "template")
	}
	return out, nil
}

// escapeFor escapes a value for a URL: a query value, or a path segment,
// where "." and ".." are written %2E and %2E%2E so that no value is a
// dot segment that climbs the path.
func escapeFor(v string, inQuery bool) string {
	if inQuery {
		return url.QueryEscape(v)
	}
	if v == "." || v == ".." {
		return strings.ReplaceAll(v, ".", "%2E")
	}
	return url.PathEscape(v)
}

// urlValue is the raw value of placeholder name (never {origin}, which
// expand puts first); captured is where the target pattern's groups
// matched in the target.
func (d *Declarative) urlValue(name string, v urlVars, captured []int) (string, error) {
	switch name {
	case "actor", "actor.slug":
		if !handleRE.MatchString(v.actor) {
			return "", hardStop(StopTarget, nil, "actor %q is not a handle", v.actor)
		}
		if name == "actor.slug" {
			return d.account(v.actor).Slug, nil
		}
		return v.actor, nil
	case "text":
		return v.text, nil
	case "title":
		title, _ := splitText(v.text)
		if strings.TrimSpace(title) == "" {
			return "", fmt.Errorf("%w: the text has no title (its first line) for the URL", ErrStepFailed)
		}
		return title, nil
	}
	if n, ok := strings.CutPrefix(name, "fields."); ok {
		f, set := v.fields[n]
		if !set || len(f.Texts) != 1 {
			return "", fmt.Errorf("%w: the intent sets no entry field %s for the URL", ErrStepFailed, n)
		}
		return f.Texts[0], nil
	}
	g := strings.TrimPrefix(name, "target.")
	i := v.pattern.SubexpIndex(g)
	start, end := captured[2*i], captured[2*i+1]
	if start < 0 {
		return "", hardStop(StopTarget, nil, "the target's %s (target.pattern) is empty", g)
	}
	raw := v.target[start:end]
	// Unescaped as the part of the URL it was taken from: "+" is a space
	// in a query, itself in a path.
	unescape := url.PathUnescape
	if q := strings.Index(v.target, "?"); q >= 0 && start > q {
		unescape = url.QueryUnescape
	}
	if u, err := unescape(raw); err == nil {
		raw = u
	}
	if raw == "" {
		return "", hardStop(StopTarget, nil, "the target's %s (target.pattern) is empty", g)
	}
	return raw, nil
}

// expandValue fills a field template with a value read from the page,
// escaped for where {value} stands (a path segment, or a query value: a
// page named "Team plan p1" is "Team%20plan%20p1" or "Team+plan+p1"). An
// empty value, one over 200 characters or one with control characters is
// refused: no link is made of it.
func (d *Declarative) expandValue(tmpl, value string) (string, error) {
	if value == "" || len([]rune(value)) > 200 || strings.ContainsFunc(value, unicode.IsControl) {
		return "", fmt.Errorf("value %q does not name a page", excerpt(value))
	}
	out := strings.Replace(tmpl, "{origin}", d.origins[0], 1)
	var b strings.Builder
	for {
		i := strings.Index(out, "{value}")
		if i < 0 {
			b.WriteString(out)
			break
		}
		b.WriteString(out[:i])
		b.WriteString(escapeFor(value, strings.Contains(b.String(), "?")))
		out = out[i+len("{value}"):]
	}
	return b.String(), nil
}

// onOrigin checks that raw is an absolute http(s) URL on a site origin.
func (d *Declarative) onOrigin(raw string) error {
	o := browser.Origin(raw)
	if o == "" {
		return fmt.Errorf("%q is not an absolute http(s) URL", excerpt(raw))
	}
	for _, want := range d.origins {
		if o == want {
			return nil
		}
	}
	return fmt.Errorf("%s is not one of the site's origins", o)
}

// resolveRaw turns a link read from the page into an absolute URL on a site
// origin, relative to the page it was read on: in kind k's canonical form,
// and as it was before the canonical rule.
func (d *Declarative) resolveRaw(k kind.Kind, pageURL, ref string) (canonical, raw string, err error) {
	abs, err := absolute(pageURL, ref)
	if err != nil {
		return "", "", err
	}
	raw = abs.String()
	canonical = d.CanonicalFor(k, raw)
	if err := d.onOrigin(canonical); err != nil {
		return "", "", err
	}
	return canonical, raw, nil
}

// resolvePage turns a link to another page of a list into an absolute URL
// on a site origin. Unlike resolve it keeps the whole query: paging lives
// there.
func (d *Declarative) resolvePage(pageURL, ref string) (string, error) {
	abs, err := absolute(pageURL, ref)
	if err != nil {
		return "", err
	}
	abs.Fragment, abs.RawFragment = "", ""
	s := abs.String()
	if err := d.onOrigin(s); err != nil {
		return "", err
	}
	return s, nil
}

// absolute resolves ref against the page it was read on.
func absolute(pageURL, ref string) (*url.URL, error) {
	base, err := url.Parse(pageURL)
	if err != nil {
		return nil, err
	}
	r, err := url.Parse(strings.TrimSpace(ref))
	if err != nil || ref == "" {
		return nil, fmt.Errorf("link %q is not a URL", excerpt(ref))
	}
	return base.ResolveReference(r), nil
}

// excerpt shortens page text for an error message.
func excerpt(s string) string {
	r := []rune(s)
	if len(r) > 40 {
		return string(r[:40]) + "…"
	}
	return s
}

// compiled is the regular expression pat, which loading validated,
// compiled once for the process: fields and refusals match one per item
// and answer.
func compiled(pat string) *regexp.Regexp {
	if re, ok := regexps.Load(pat); ok {
		return re.(*regexp.Regexp)
	}
	re, _ := regexps.LoadOrStore(pat, regexp.MustCompile(pat))
	return re.(*regexp.Regexp)
}

var regexps sync.Map
