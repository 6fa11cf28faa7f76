package sites

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"

	"github.com/browserop/browserop/browser"
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
// origin; {actor} may appear after the origin.
func checkTemplate(p *problems, path, tmpl string, origins map[string]bool, allowTarget bool) {
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
	for _, n := range names {
		switch n {
		case "origin", "actor", "actor.slug":
		case "target":
			p.add(path, "{target} must be the whole template")
			return
		default:
			p.add(path, "unknown placeholder {%s} (use {origin}, {actor}, {actor.slug} or {target})", n)
			return
		}
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
	sample := tmpl
	if strings.HasPrefix(tmpl, "{origin}") {
		for o := range origins {
			sample = strings.Replace(sample, "{origin}", o, 1)
			break
		}
	}
	sample = strings.ReplaceAll(sample, "{actor}", "actor")
	sample = strings.ReplaceAll(sample, "{actor.slug}", "actor")
	if o := browser.Origin(sample); o == "" || !origins[o] {
		p.add(path, "%q leaves the site's origins", tmpl)
		return
	}
	if _, err := url.Parse(sample); err != nil {
		p.add(path, "%q is not a URL template: %v", tmpl, err)
	}
}

// checkSearchTemplate validates a search URL template: a URL template
// that may also be "{target}" (the comments on the target's page) and may
// put the exact text, {text}, in its query.
func checkSearchTemplate(p *problems, path, tmpl string, origins map[string]bool) {
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
	checkTemplate(p, path, tmpl, origins, false)
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

var (
	handleRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)
	valueRE  = regexp.MustCompile(`^[A-Za-z0-9_.~-]{1,200}$`)
)

// expandURL fills a validated URL template for an intent and checks that
// the result stays on the site's origins.
func (d *Declarative) expandURL(tmpl, actor, target string) (string, error) {
	return d.expandSearchURL(tmpl, actor, target, "")
}

// expandSearchURL is expandURL that also puts text, query-escaped, for
// {text}.
func (d *Declarative) expandSearchURL(tmpl, actor, target, text string) (string, error) {
	if tmpl == "{target}" {
		if err := d.onOrigin(target); err != nil {
			return "", hardStop(StopTarget, err, "target")
		}
		return target, nil
	}
	out := strings.Replace(tmpl, "{origin}", d.origins[0], 1)
	if strings.Contains(out, "{actor") {
		if !handleRE.MatchString(actor) {
			return "", hardStop(StopTarget, nil, "actor %q is not a handle", actor)
		}
		out = strings.ReplaceAll(out, "{actor}", url.PathEscape(actor))
		out = strings.ReplaceAll(out, "{actor.slug}", url.PathEscape(d.account(actor).Slug))
	}
	out = strings.ReplaceAll(out, "{text}", url.QueryEscape(text))
	if err := d.onOrigin(out); err != nil {
		return "", hardStop(StopOffsite, err, "template")
	}
	return out, nil
}

// expandValue fills a field template with a value read from the page.
func (d *Declarative) expandValue(tmpl, value string) (string, error) {
	if !valueRE.MatchString(value) {
		return "", fmt.Errorf("value %q does not fit a URL", excerpt(value))
	}
	out := strings.Replace(tmpl, "{origin}", d.origins[0], 1)
	return strings.ReplaceAll(out, "{value}", url.PathEscape(value)), nil
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
// origin, relative to the page it was read on: in its canonical form, and
// as it was before the canonical rule.
func (d *Declarative) resolveRaw(pageURL, ref string) (canonical, raw string, err error) {
	abs, err := absolute(pageURL, ref)
	if err != nil {
		return "", "", err
	}
	raw = abs.String()
	canonical = d.Canonical(raw)
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
