package config

import (
	"fmt"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/budgets"
	"github.com/browserop/browserop/errcode"
	"github.com/browserop/browserop/operator"
)

// The configurations of the packages browserop is made of, in their own
// terms, with the default locations resolved against an environment
// (os.Environ form). Their errors are errcode.ErrConfig.

// ForBrowser returns the browser's configuration: the browser section,
// with the profile directory resolved (Config.ProfileDir). It returns an
// errcode.ErrConfig error when the profile cannot be located.
func (c Config) ForBrowser(env []string) (browser.Config, error) {
	profile, err := c.ProfileDir(env)
	if err != nil {
		return browser.Config{}, fmt.Errorf("%w: %w", errcode.ErrConfig, err)
	}
	b := c.Browser
	return browser.Config{ExecPath: b.ExecPath, ProfileDir: profile, Headless: b.Headless,
		DevToolsURL: b.DevtoolsURL, DevToolsActivePortFile: b.DevtoolsActivePortFile,
		ExtraFlags: b.ExtraFlags, NoSandbox: b.NoSandbox, ActionTimeout: b.ActionTimeout}, nil
}

// ForOperator returns the runner's configuration: the lease, the
// calendar (its directory and the media directory resolved:
// Config.CalendarDir, Config.MediaDir), the planner's quality threshold,
// the browser's action timeout and the authority ceiling. How the browser
// is reached (operator.Config's BrowserRunning and StopIdleBrowser) is the
// caller's, who connects to it. It returns an errcode.ErrConfig error when
// a directory cannot be located.
func (c Config) ForOperator(env []string) (operator.Config, error) {
	calDir, err := c.CalendarDir(env)
	if err != nil {
		return operator.Config{}, fmt.Errorf("%w: %w", errcode.ErrConfig, err)
	}
	mediaDir, err := c.MediaDir(env)
	if err != nil {
		return operator.Config{}, fmt.Errorf("%w: %w", errcode.ErrConfig, err)
	}
	o := c.Operator
	return operator.Config{LeaseName: o.LeaseName, LeaseTTL: o.LeaseTTL, Heartbeat: o.Heartbeat, Skew: o.IdentitySkew,
		CalendarDir: calDir, MediaDir: mediaDir, Grace: c.Calendar.Grace, PublishLate: c.Calendar.PublishLate,
		QualityThreshold: c.Planner.QualityThreshold, ActionTimeout: c.Browser.ActionTimeout, Ceiling: c.Authority.Ceiling}, nil
}

// ForAPI returns the API's configuration: the api section, with the token
// file resolved (Config.TokenFile). It returns an errcode.ErrConfig error
// when the token file cannot be located.
func (c Config) ForAPI(env []string) (APIConfig, error) {
	tok, err := c.TokenFile(env)
	if err != nil {
		return APIConfig{}, fmt.Errorf("%w: %w", errcode.ErrConfig, err)
	}
	a := c.API
	a.TokenFile = tok
	return a, nil
}

// Policy returns the budget policy of the budgets section. It returns an
// errcode.ErrConfig error naming the entry budgets.NewPolicy refuses.
func (c Config) Policy() (budgets.Policy, error) {
	formats := map[string]budgets.FormatLimit{}
	for name, f := range c.Budgets.Formats {
		formats[name] = budgets.FormatLimit{Max: f.Limit, Window: f.Window}
	}
	groups := map[string]budgets.GroupLimit{}
	for name, g := range c.Budgets.Groups {
		groups[name] = budgets.GroupLimit{Formats: g.Formats, Max: g.Limit, Window: g.Window}
	}
	p, err := budgets.NewPolicy(formats, groups)
	if err != nil {
		return budgets.Policy{}, fmt.Errorf("%w: %w", errcode.ErrConfig, err)
	}
	return p, nil
}
