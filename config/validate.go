package config

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/browserop/browserop/authority"
	"github.com/browserop/browserop/budgets"
)

// FieldError is one validation problem: the dotted key at fault and what is
// wrong with it.
type FieldError struct {
	Field   string
	Problem string
}

// Error formats the problem as "config: <field>: <problem>".
func (e *FieldError) Error() string { return "config: " + e.Field + ": " + e.Problem }

type problems []error

func (p *problems) add(field, format string, args ...any) {
	*p = append(*p, &FieldError{Field: field, Problem: fmt.Sprintf(format, args...)})
}

// Validate checks every rule on c and returns all problems joined
// (errors.Join of *FieldError, in the order the example file lists the keys), or nil.
func (c Config) Validate() error {
	var p problems
	p.absPath("ledger.path", c.Ledger.Path)

	b := c.Browser
	if b.ExecPath != "" && !filepath.IsAbs(b.ExecPath) && strings.ContainsRune(b.ExecPath, filepath.Separator) {
		p.add("browser.exec_path", "must be an absolute path or a command name looked up in PATH, got %q", b.ExecPath)
	}
	p.absPath("browser.profile_dir", b.ProfileDir)
	if b.DevtoolsURL != "" {
		u, err := url.Parse(b.DevtoolsURL)
		if err != nil || u.Host == "" || !slices.Contains([]string{"http", "https", "ws", "wss"}, u.Scheme) {
			p.add("browser.devtools_url", "must be an http(s) or ws(s) URL with a host, got %q", b.DevtoolsURL)
		}
		if b.DevtoolsActivePortFile != "" {
			p.add("browser.devtools_url", "set only one of browser.devtools_url and browser.devtools_active_port_file")
		}
	}
	p.absPath("browser.devtools_active_port_file", b.DevtoolsActivePortFile)
	p.positive("browser.action_timeout", b.ActionTimeout)
	for i, f := range b.ExtraFlags {
		field := fmt.Sprintf("browser.extra_flags[%d]", i)
		name, _, _ := strings.Cut(f, "=")
		switch {
		case !strings.HasPrefix(f, "--") || len(f) == 2:
			p.add(field, "must be a flag starting with \"--\", got %q", f)
		case name == "--user-data-dir":
			p.add(field, "must not set --user-data-dir; use browser.profile_dir")
		case strings.HasPrefix(name, "--remote-debugging-"):
			p.add(field, "must not set %s; browserop manages the DevTools connection", name)
		}
	}

	p.absPath("sites.dir", c.Sites.Dir)

	o := c.Operator
	if strings.TrimSpace(o.LeaseName) == "" {
		p.add("operator.lease_name", "must not be empty")
	}
	p.positive("operator.lease_ttl", o.LeaseTTL)
	p.positive("operator.heartbeat", o.Heartbeat)
	if o.Heartbeat > 0 && o.LeaseTTL > 0 && 2*o.Heartbeat >= o.LeaseTTL {
		p.add("operator.heartbeat", "must be less than half of operator.lease_ttl (%s), got %s", o.LeaseTTL, o.Heartbeat)
	}
	p.nonNegative("operator.identity_skew", o.IdentitySkew)

	if strings.TrimSpace(c.Schedule) == "" {
		p.add("schedule", "must be a cron spec such as \"*/15 * * * *\"")
	} else if _, err := cron.ParseStandard(c.Schedule); err != nil {
		p.add("schedule", "not a valid cron spec (minute hour day-of-month month day-of-week): %v", err)
	}
	p.nonNegative("jitter", c.Jitter)

	p.absPath("calendar.dir", c.Calendar.Dir)
	p.absPath("calendar.media_dir", c.Calendar.MediaDir)
	p.nonNegative("calendar.grace", c.Calendar.Grace)

	pl := c.Planner
	if len(pl.Command) > 0 && strings.TrimSpace(pl.Command[0]) == "" {
		p.add("planner.command", "the program (first element) must not be empty")
	}
	p.positive("planner.timeout", pl.Timeout)
	if !(pl.QualityThreshold >= 0 && pl.QualityThreshold <= 1) {
		p.add("planner.quality_threshold", "must be between 0 and 1, got %v", pl.QualityThreshold)
	}
	if pl.MaxOutput <= 0 {
		p.add("planner.max_output", "must be > 0, got %d", pl.MaxOutput)
	}

	c.Budgets.validate(&p)

	p.loopbackAddr("api.addr", c.API.Addr)
	p.absPath("api.token_file", c.API.TokenFile)
	if c.API.MaxBody <= 0 {
		p.add("api.max_body", "must be > 0, got %d", c.API.MaxBody)
	}

	for i, d := range c.Authority.Ceiling {
		if _, err := authority.ParseDomain(d); err != nil {
			p.add(fmt.Sprintf("authority.ceiling[%d]", i), "%v", strings.TrimPrefix(err.Error(), authority.ErrInvalid.Error()+": "))
		}
	}

	if !slices.Contains([]string{"auto", "text", "json"}, c.Log.Format) {
		p.add("log.format", "must be auto, text or json, got %q", c.Log.Format)
	}
	if !slices.Contains([]string{"debug", "info", "warn", "error"}, c.Log.Level) {
		p.add("log.level", "must be debug, info, warn or error, got %q", c.Log.Level)
	}
	return errors.Join(p...)
}

func (b BudgetsConfig) validate(p *problems) {
	for _, name := range slices.Sorted(maps.Keys(b.Formats)) {
		f := b.Formats[name]
		field := "budgets.formats." + name
		if err := checkFormatName(name); err != nil {
			p.add(field, "%v", err)
			continue
		}
		if f.Limit < 0 {
			p.add(field+".limit", "must be >= 0, got %d", f.Limit)
		}
		p.positive(field+".window", f.Window)
	}
	for _, name := range budgets.Formats {
		if _, ok := b.Formats[name]; !ok {
			p.add("budgets.formats."+name, "missing; every format needs a limit")
		}
	}
	for _, name := range slices.Sorted(maps.Keys(b.Groups)) {
		g := b.Groups[name]
		field := "budgets.groups." + name
		if err := checkGroupName(name); err != nil {
			p.add(field, "%v", err)
			continue
		}
		if len(g.Formats) == 0 {
			p.add(field+".formats", "must list at least one format")
		}
		for i, f := range g.Formats {
			if err := checkFormatName(f); err != nil {
				p.add(fmt.Sprintf("%s.formats[%d]", field, i), "%v", err)
			} else if slices.Index(g.Formats, f) < i {
				p.add(fmt.Sprintf("%s.formats[%d]", field, i), "format %q is listed twice", f)
			}
		}
		if g.Limit < 0 {
			p.add(field+".limit", "must be >= 0, got %d", g.Limit)
		}
		p.positive(field+".window", g.Window)
	}
}

func (p *problems) absPath(field, path string) {
	if path != "" && !filepath.IsAbs(path) {
		p.add(field, "must be an absolute path (~ is not expanded), got %q", path)
	}
}

func (p *problems) positive(field string, d time.Duration) {
	if d <= 0 {
		p.add(field, "must be > 0, got %s", d)
	}
}

func (p *problems) nonNegative(field string, d time.Duration) {
	if d < 0 {
		p.add(field, "must be >= 0, got %s", d)
	}
}

func (p *problems) loopbackAddr(field, addr string) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		p.add(field, "must be host:port, got %q", addr)
		return
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		p.add(field, "port must be a number from 0 to 65535, got %q", port)
	}
	if host == "localhost" {
		return
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		p.add(field, "host must be a loopback address (127.0.0.1, ::1) or localhost, got %q", host)
	}
}
