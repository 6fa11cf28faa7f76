// Package authority is where browserop decides what a task may reach: it
// parses host names and domain patterns, matches them against the
// configured ceiling and a task's contract and grants, and checks an
// intent's site, target and capability. Configuration loading, the ledger,
// the task service and the operator all call it; the REST, MCP and CLI
// layers only translate its errors.
//
// The matching rules, defined here once:
//
//   - a plain host name ("example.com") matches that host only, never its
//     subdomains;
//   - a wildcard ("*.example.com") matches the subdomains of example.com at
//     any depth ("a.example.com", "a.b.example.com"), never example.com
//     itself; it needs at least two labels after "*.";
//   - an IP literal ("127.0.0.1", "::1") matches itself only; there is no
//     wildcard over addresses;
//   - a name that is not a valid host (empty, with a scheme, port, path or
//     space, upper case in a pattern, a label that is not letters, digits
//     and inner hyphens, a last label that is all digits, which browsers
//     read as an IPv4 address) is refused with ErrInvalid.
package authority

import (
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"strings"
)

// ErrInvalid: a host name or domain pattern is malformed.
var ErrInvalid = errors.New("invalid domain")

// ErrDenied: what was asked for is outside the authority (the contract,
// the grants or the ceiling).
var ErrDenied = errors.New("outside the authority")

// Domain is one parsed domain pattern: a host name, an IP literal or a
// wildcard over a domain's subdomains.
type Domain struct {
	host     string // lowercase name or canonical IP, without "*."
	wildcard bool
	ip       bool
}

var labelRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// ParseDomain parses a domain pattern as written in a contract, a grant or
// authority.ceiling: a lowercase host name, "*." and a host name of at least
// two labels, or an IP literal (IPv6 with or without brackets). It returns
// ErrInvalid with a message naming the problem.
func ParseDomain(s string) (Domain, error) {
	if s == "" {
		return Domain{}, fmt.Errorf("%w: a domain must not be empty", ErrInvalid)
	}
	if ip, ok := parseIP(s); ok {
		return Domain{host: ip, ip: true}, nil
	}
	if strings.ContainsAny(s, ":/?#@[] \t\r\n") {
		return Domain{}, fmt.Errorf("%w: %q must be a bare hostname, without scheme, port, path or spaces", ErrInvalid, s)
	}
	if strings.ToLower(s) != s {
		return Domain{}, fmt.Errorf("%w: %q must be lowercase (write %q)", ErrInvalid, s, strings.ToLower(s))
	}
	host, wildcard := strings.CutPrefix(s, "*.")
	if err := checkName(host); err != nil {
		return Domain{}, fmt.Errorf("%w: %q is not a hostname or *.domain pattern: %v", ErrInvalid, s, err)
	}
	if wildcard && strings.Count(host, ".") < 1 {
		return Domain{}, fmt.Errorf("%w: wildcard %q is too broad; name a domain such as \"*.example.com\"", ErrInvalid, s)
	}
	return Domain{host: host, wildcard: wildcard}, nil
}

// ParseHost parses a concrete host, as it appears in a URL: a host name
// (any case, one trailing dot allowed) or an IP literal. It returns the
// host in canonical form (lowercase, no trailing dot, canonical IP), or
// ErrInvalid.
func ParseHost(s string) (string, error) {
	if ip, ok := parseIP(s); ok {
		return ip, nil
	}
	h := strings.TrimSuffix(strings.ToLower(s), ".")
	if h == "" || strings.HasPrefix(h, "*.") {
		return "", fmt.Errorf("%w: %q is not a host name", ErrInvalid, s)
	}
	if err := checkName(h); err != nil {
		return "", fmt.Errorf("%w: %q: %v", ErrInvalid, s, err)
	}
	return h, nil
}

func parseIP(s string) (string, bool) {
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return "", false
	}
	return a.Unmap().String(), true
}

func checkName(h string) error {
	if len(h) > 253 {
		return errors.New("longer than 253 characters")
	}
	labels := strings.Split(h, ".")
	for _, l := range labels {
		if !labelRE.MatchString(l) {
			return fmt.Errorf("label %q is not letters, digits and inner hyphens", l)
		}
	}
	if last := labels[len(labels)-1]; strings.Trim(last, "0123456789") == "" {
		return errors.New("its last label is a number, which browsers read as an IPv4 address")
	}
	return nil
}

// String is the pattern as written canonically.
func (d Domain) String() string {
	if d.wildcard {
		return "*." + d.host
	}
	return d.host
}

// IsZero reports whether d is the zero Domain (parsed from nothing).
func (d Domain) IsZero() bool { return d.host == "" }

// Match reports whether host (canonical, as ParseHost returns it) is
// within d.
func (d Domain) Match(host string) bool {
	if d.host == "" || host == "" {
		return false
	}
	if d.wildcard {
		return strings.HasSuffix(host, "."+d.host)
	}
	return host == d.host
}

// Within reports whether every host d matches is also matched by outer.
func (d Domain) Within(outer Domain) bool {
	switch {
	case d.host == "" || outer.host == "":
		return false
	case !d.wildcard:
		return outer.Match(d.host)
	case !outer.wildcard:
		return false // a wildcard is never inside one host
	}
	return d.host == outer.host || strings.HasSuffix(d.host, "."+outer.host)
}

// Domains is a set of patterns.
type Domains []Domain

// ParseDomains parses every pattern, returning the first error with its
// index.
func ParseDomains(ss []string) (Domains, error) {
	out := make(Domains, 0, len(ss))
	for i, s := range ss {
		d, err := ParseDomain(s)
		if err != nil {
			return nil, fmt.Errorf("[%d]: %w", i, err)
		}
		out = append(out, d)
	}
	return out, nil
}

// Match reports whether host is within any of ds.
func (ds Domains) Match(host string) bool {
	for _, d := range ds {
		if d.Match(host) {
			return true
		}
	}
	return false
}

// Covers reports whether d lies within any of ds.
func (ds Domains) Covers(d Domain) bool {
	for _, o := range ds {
		if d.Within(o) {
			return true
		}
	}
	return false
}

// Strings returns the patterns as written.
func (ds Domains) Strings() []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.String()
	}
	return out
}
