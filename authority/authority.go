package authority

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// Site is what the authority needs of a site adapter: its name and the
// origins it acts on. sites.Adapter satisfies it.
type Site interface {
	Name() string
	Origins() []string
}

// Ceiling is the outer bound of every task's authority. Configured
// (authority.ceiling), it bounds contract domains and grants. Empty, it is
// the hosts of the configured sites, each matching itself only, and no
// grant is possible: a grant widens what an agent may reach, so it needs
// a ceiling the person wrote down.
type Ceiling struct {
	domains  Domains
	explicit bool
}

// NewCeiling returns the ceiling of configured (authority.ceiling) over
// sites. It returns ErrInvalid naming a malformed entry, or a site origin
// that is not an absolute http(s) URL.
func NewCeiling(configured []string, sites []Site) (Ceiling, error) {
	if len(configured) > 0 {
		ds, err := ParseDomains(configured)
		if err != nil {
			return Ceiling{}, fmt.Errorf("authority.ceiling%w", err)
		}
		return Ceiling{domains: ds, explicit: true}, nil
	}
	var ds Domains
	for _, s := range sites {
		hosts, err := SiteHosts(s)
		if err != nil {
			return Ceiling{}, err
		}
		for _, h := range hosts {
			d, _ := ParseDomain(h) // a canonical host parses
			if !slices.Contains(ds, d) {
				ds = append(ds, d)
			}
		}
	}
	return Ceiling{domains: ds}, nil
}

// Domains returns the ceiling's patterns.
func (c Ceiling) Domains() Domains { return slices.Clone(c.domains) }

// Explicit reports whether the ceiling was configured (and grants are
// possible).
func (c Ceiling) Explicit() bool { return c.explicit }

func (c Ceiling) describe() string {
	if !c.explicit {
		return fmt.Sprintf("the configured sites' hosts %v (authority.ceiling is empty)", c.domains.Strings())
	}
	return fmt.Sprintf("authority.ceiling %v", c.domains.Strings())
}

// CheckContract checks a contract's domains: each must parse and lie
// within the ceiling. It returns ErrInvalid or ErrDenied naming the domain.
func (c Ceiling) CheckContract(domains []string) error {
	ds, err := ParseDomains(domains)
	if err != nil {
		return fmt.Errorf("contract.domains%w", err)
	}
	for _, d := range ds {
		if !c.domains.Covers(d) {
			return fmt.Errorf("%w: contract domain %q is outside the ceiling: %s", ErrDenied, d, c.describe())
		}
	}
	return nil
}

// CheckGrant parses a domain a person wants to grant and checks it against
// the ceiling. It returns the canonical pattern, ErrInvalid, or ErrDenied
// (also when no ceiling is configured: then no grant is possible).
func (c Ceiling) CheckGrant(domain string) (Domain, error) {
	d, err := ParseDomain(strings.TrimSpace(domain))
	if err != nil {
		return Domain{}, fmt.Errorf("grant: %w", err)
	}
	if !c.explicit {
		return Domain{}, fmt.Errorf("%w: no grant is possible while authority.ceiling is empty; add %q to authority.ceiling to allow it", ErrDenied, d)
	}
	if !c.domains.Covers(d) {
		return Domain{}, fmt.Errorf("%w: %q is outside the ceiling (authority.ceiling %v)", ErrDenied, d, c.domains.Strings())
	}
	return d, nil
}

// Task is the authority one task was given: its contract's capabilities
// and domains, and the domains a person granted it.
type Task struct {
	Capabilities []string
	Domains      []string
	Grants       []string
}

// Effective returns the domains t may reach now: its contract's domains,
// plus its grants while the ceiling allows grants, each kept only while it
// lies within the ceiling.
func (c Ceiling) Effective(t Task) Domains {
	var out Domains
	add := func(ss []string) {
		for _, s := range ss {
			if d, err := ParseDomain(s); err == nil && c.domains.Covers(d) {
				out = append(out, d)
			}
		}
	}
	add(t.Domains)
	if c.explicit {
		add(t.Grants)
	}
	return out
}

// Check reports whether task t may use capability on site (every origin
// of it) and, when target is not empty, on target, under the ceiling as it
// is now. It returns nil, ErrDenied with the reason, or ErrInvalid for a
// target that is not an absolute http(s) URL.
func (c Ceiling) Check(t Task, site Site, target, capability string) error {
	if !slices.Contains(t.Capabilities, capability) {
		return fmt.Errorf("%w: the contract does not allow %q (it allows %v)", ErrDenied, capability, t.Capabilities)
	}
	eff := c.Effective(t)
	hosts, err := SiteHosts(site)
	if err != nil {
		return err
	}
	given := parsed(t.Domains, t.Grants)
	for _, h := range hosts {
		if err := c.checkHost(eff, given, h, fmt.Sprintf("site %q (%s)", site.Name(), h)); err != nil {
			return err
		}
	}
	if target == "" {
		return nil
	}
	h, err := urlHost(target)
	if err != nil {
		return fmt.Errorf("target: %w", err)
	}
	return c.checkHost(eff, given, h, fmt.Sprintf("target %q", target))
}

// checkHost requires host within the effective domains eff (which lie
// within the ceiling). The reason names the ceiling when the task was
// given the host but the ceiling, or the want of one, takes it away.
func (c Ceiling) checkHost(eff, given Domains, host, what string) error {
	switch {
	case eff.Match(host):
		return nil
	case !c.domains.Match(host) && given.Match(host):
		return fmt.Errorf("%w: %s is outside the ceiling: %s", ErrDenied, what, c.describe())
	case !c.explicit && given.Match(host):
		return fmt.Errorf("%w: %s was granted, but no grant counts while authority.ceiling is empty", ErrDenied, what)
	}
	return fmt.Errorf("%w: %s is outside the task's domains %v", ErrDenied, what, eff.Strings())
}

// parsed is every pattern of the lists that parses.
func parsed(lists ...[]string) Domains {
	var out Domains
	for _, l := range lists {
		for _, s := range l {
			if d, err := ParseDomain(s); err == nil {
				out = append(out, d)
			}
		}
	}
	return out
}

// CheckResult reports whether result, a URL a person says shows an
// action's effect, lies on the action's site: on one of the site's origin
// hosts or on the host of the action's target. It returns ErrInvalid
// naming the hosts otherwise.
func CheckResult(site Site, target, result string) error {
	h, err := urlHost(result)
	if err != nil {
		return err
	}
	var hosts []string
	if site != nil {
		if hosts, err = SiteHosts(site); err != nil {
			return err
		}
	}
	if th, err := urlHost(target); err == nil && !slices.Contains(hosts, th) {
		hosts = append(hosts, th)
	}
	if len(hosts) == 0 {
		return fmt.Errorf("%w: the action's site is not configured, so %q cannot be checked", ErrInvalid, result)
	}
	if !slices.Contains(hosts, h) {
		return fmt.Errorf("%w: %q is not on the action's site (%s)", ErrInvalid, result, strings.Join(hosts, ", "))
	}
	return nil
}

// urlHost returns the canonical host of an absolute http(s) URL.
func urlHost(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%w: %q is not an absolute http(s) URL", ErrInvalid, raw)
	}
	return ParseHost(u.Hostname())
}

// SiteHosts returns the canonical hosts of a site's origins, or
// ErrInvalid for an origin that is not an absolute http(s) URL.
func SiteHosts(s Site) ([]string, error) {
	var out []string
	for _, o := range s.Origins() {
		h, err := urlHost(o)
		if err != nil {
			return nil, fmt.Errorf("site %q: origin: %w", s.Name(), err)
		}
		if !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: site %q has no origins", ErrInvalid, s.Name())
	}
	return out, nil
}
