// Package config is browserop's configuration: the schema and its defaults
// (config.go), reading one YAML file and the BROWSEROP_* environment over
// the defaults (load.go; file.go checks the YAML against the schema, env.go
// maps the variables to keys), the rules (validate.go), the XDG locations
// (paths.go), and the configurations of the packages it configures, built
// from it (parts.go). Viper is used here and nowhere else.
package config

import (
	"time"

	"github.com/browserop/browserop/budgets"
)

// Config is browserop's whole configuration: one YAML file, overridden by
// BROWSEROP_* environment variables, on top of Default. Every key is
// documented in bundled/browserop.example.yaml, and each field below says
// its default. Empty paths mean "the default location", resolved by the
// methods in paths.go or by the package that owns the file, never here.
type Config struct {
	Ledger   LedgerConfig   `mapstructure:"ledger"`
	Browser  BrowserConfig  `mapstructure:"browser"`
	Sites    SitesConfig    `mapstructure:"sites"`
	Operator OperatorConfig `mapstructure:"operator"`
	// Schedule is when `browserop serve` runs a pass: a 5-field cron spec
	// or a descriptor such as "@hourly". Default: "*/15 * * * *".
	Schedule string `mapstructure:"schedule"`
	// Jitter is the most random delay added before each scheduled pass.
	// Default: 0 (none).
	Jitter    time.Duration   `mapstructure:"jitter"`
	Calendar  CalendarConfig  `mapstructure:"calendar"`
	Planner   PlannerConfig   `mapstructure:"planner"`
	Budgets   BudgetsConfig   `mapstructure:"budgets"`
	API       APIConfig       `mapstructure:"api"`
	Authority AuthorityConfig `mapstructure:"authority"`
	Log       LogConfig       `mapstructure:"log"`
}

// LedgerConfig locates the SQLite ledger.
type LedgerConfig struct {
	// Path is the database file. Default: "", which lets the ledger
	// package pick $XDG_STATE_HOME/browserop/ledger.db.
	Path string `mapstructure:"path"`
}

// BrowserConfig says how to reach Chrome.
type BrowserConfig struct {
	// ExecPath is the Chrome or Chromium binary: an absolute path or a
	// command name. Default: "", which looks for chromium or google-chrome
	// in PATH.
	ExecPath string `mapstructure:"exec_path"`
	// ProfileDir is the dedicated profile (--user-data-dir). Default: "",
	// which is $XDG_STATE_HOME/browserop/profile (Config.ProfileDir).
	ProfileDir string `mapstructure:"profile_dir"`
	// Headless launches Chrome without a window. Default: true.
	Headless bool `mapstructure:"headless"`
	// DevtoolsURL attaches to a running Chrome at this DevTools URL
	// instead of launching one. Default: "" (launch).
	DevtoolsURL string `mapstructure:"devtools_url"`
	// DevtoolsActivePortFile attaches to the running Chrome that wrote
	// this DevToolsActivePort file. Default: "" (launch). At most one of it
	// and DevtoolsURL is set.
	DevtoolsActivePortFile string `mapstructure:"devtools_active_port_file"`
	// NoSandbox passes --no-sandbox, for containers that cannot sandbox.
	// Default: false.
	NoSandbox bool `mapstructure:"no_sandbox"`
	// ActionTimeout bounds one browser step (navigation, click, read).
	// Default: 15s.
	ActionTimeout time.Duration `mapstructure:"action_timeout"`
	// ExtraFlags are Chrome flags added at launch, each starting with
	// "--". Default: none.
	ExtraFlags []string `mapstructure:"extra_flags"`
}

// SitesConfig locates site adapters.
type SitesConfig struct {
	// Dir is a directory of adapter YAML files. Default: "", the bundled
	// adapters only.
	Dir string `mapstructure:"dir"`
}

// OperatorConfig tunes the operator lease and identity checks.
type OperatorConfig struct {
	// LeaseName names the ledger lease that keeps two operators apart.
	// Default: "browser-operator".
	LeaseName string `mapstructure:"lease_name"`
	// LeaseTTL is how long a lease lives without a heartbeat. Default: 2m.
	LeaseTTL time.Duration `mapstructure:"lease_ttl"`
	// Heartbeat is the lease heartbeat interval, less than half of
	// LeaseTTL. Default: 20s.
	Heartbeat time.Duration `mapstructure:"heartbeat"`
	// IdentitySkew is the clock difference tolerated when comparing the
	// site's timestamps. Default: 5s.
	IdentitySkew time.Duration `mapstructure:"identity_skew"`
}

// CalendarConfig locates the content calendar and says how late an entry
// may still be published.
type CalendarConfig struct {
	// Dir is the content calendar directory. Default: "", which is
	// $XDG_CONFIG_HOME/browserop/calendar (Config.CalendarDir).
	Dir string `mapstructure:"dir"`
	// MediaDir holds the image files calendar entries and agents' intents
	// attach, named relative to it; a file outside it is refused.
	// Default: "", the calendar directory (Config.MediaDir).
	MediaDir string `mapstructure:"media_dir"`
	// Grace is how long after its time an entry still counts as due.
	// Default: 15m.
	Grace time.Duration `mapstructure:"grace"`
	// PublishLate publishes entries older than Grace anyway instead of
	// skipping and reporting them. Default: false.
	PublishLate bool `mapstructure:"publish_late"`
}

// PlannerConfig describes the optional external planner program.
type PlannerConfig struct {
	// Command is the planner's argv (no shell). Default: empty, no
	// planner.
	Command []string `mapstructure:"command"`
	// Timeout bounds one planner call. Default: 30s.
	Timeout time.Duration `mapstructure:"timeout"`
	// QualityThreshold (0..1): candidates scoring below it are quality
	// skips. Default: 0.5.
	QualityThreshold float64 `mapstructure:"quality_threshold"`
	// MaxOutput is the largest planner output accepted, in bytes.
	// Default: 1048576 (1 MiB).
	MaxOutput int `mapstructure:"max_output"`
}

// BudgetsConfig holds the limits per format and per group of formats.
type BudgetsConfig struct {
	// Formats has one entry per budgets.Formats name. Default, each per
	// 24h: post_text 8, post_image 4, thread 2, reply 20, like 50,
	// follow 20.
	Formats map[string]FormatBudget `mapstructure:"formats"`
	// Groups are named sets of formats sharing one limit. Default: one
	// group, "original" (post_text, post_image, thread), limit 10 per 24h.
	Groups map[string]GroupBudget `mapstructure:"groups"`
}

// FormatBudget is the limit of one action format: at most Limit verified
// actions per rolling Window; 0 means the format is never performed.
type FormatBudget struct {
	// Limit is the most verified actions per Window; 0 means never.
	// Default: per format, see BudgetsConfig.Formats.
	Limit int `mapstructure:"limit"`
	// Window is the rolling window. Default: 24h.
	Window time.Duration `mapstructure:"window"`
}

// GroupBudget is a limit shared by several formats.
type GroupBudget struct {
	// Formats are the formats the group counts together. Default: none
	// for a new group, which must list them.
	Formats []string `mapstructure:"formats"`
	// Limit is the most verified actions of those formats per Window; 0
	// means never. Default: none for a new group, which must set it.
	Limit int `mapstructure:"limit"`
	// Window is the rolling window. Default: 24h (DefaultGroupWindow).
	Window time.Duration `mapstructure:"window"`
}

// APIConfig configures the loopback REST/MCP listener.
type APIConfig struct {
	// Addr is the listen address; its host must be loopback or
	// localhost. Default: "127.0.0.1:7465".
	Addr string `mapstructure:"addr"`
	// TokenFile is the bearer token file. Default: "", which is
	// $XDG_STATE_HOME/browserop/token (Config.TokenFile).
	TokenFile string `mapstructure:"token_file"`
	// MaxBody is the largest request body accepted, in bytes. Default:
	// 1048576 (1 MiB).
	MaxBody int `mapstructure:"max_body"`
}

// AuthorityConfig bounds what any task may ever reach.
type AuthorityConfig struct {
	// Ceiling lists host names ("example.com", itself only), wildcards
	// ("*.example.com", its subdomains only) and IP literals (itself only):
	// every contract domain, grant, site and target must lie within it
	// (package authority). Default: empty, which is the configured sites'
	// hosts, and no grant is possible.
	Ceiling []string `mapstructure:"ceiling"`
}

// LogConfig configures logging.
type LogConfig struct {
	// Format is "auto" (text on a terminal, JSON otherwise), "text" or
	// "json". Default: "auto".
	Format string `mapstructure:"format"`
	// Level is "debug", "info", "warn" or "error". Default: "info".
	Level string `mapstructure:"level"`
}

// DefaultGroupWindow is the window of a budget group the file defines
// without one.
const DefaultGroupWindow = 24 * time.Hour

// Default returns the configuration used for every key that neither the
// file nor the environment sets.
func Default() Config {
	day := 24 * time.Hour
	return Config{
		Browser: BrowserConfig{
			Headless:      true,
			ActionTimeout: 15 * time.Second,
			ExtraFlags:    []string{},
		},
		Operator: OperatorConfig{
			LeaseName:    "browser-operator",
			LeaseTTL:     2 * time.Minute,
			Heartbeat:    20 * time.Second,
			IdentitySkew: 5 * time.Second,
		},
		Schedule: "*/15 * * * *",
		Calendar: CalendarConfig{Grace: 15 * time.Minute},
		Planner: PlannerConfig{
			Command:          []string{},
			Timeout:          30 * time.Second,
			QualityThreshold: 0.5,
			MaxOutput:        1 << 20,
		},
		Budgets: BudgetsConfig{
			Formats: map[string]FormatBudget{
				budgets.PostText:  {Limit: 8, Window: day},
				budgets.PostImage: {Limit: 4, Window: day},
				budgets.Thread:    {Limit: 2, Window: day},
				budgets.Reply:     {Limit: 20, Window: day},
				budgets.Like:      {Limit: 50, Window: day},
				budgets.Follow:    {Limit: 20, Window: day},
			},
			Groups: map[string]GroupBudget{
				"original": {Formats: []string{budgets.PostText, budgets.PostImage, budgets.Thread}, Limit: 10, Window: day},
			},
		},
		API:       APIConfig{Addr: "127.0.0.1:7465", MaxBody: 1 << 20},
		Authority: AuthorityConfig{Ceiling: []string{}},
		Log:       LogConfig{Format: "auto", Level: "info"},
	}
}
