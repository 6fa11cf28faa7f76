package config

import (
	"errors"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

const examplePath = "../bundled/browserop.example.yaml"

// writeConfig writes a config file into a temp dir and returns its path.
func writeConfig(tb testing.TB, body string) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "config.yaml")
	require.NoError(tb, os.WriteFile(path, []byte(body), 0o600))
	return path
}

// loadString loads body as an explicitly given config file.
func loadString(tb testing.TB, body string, env ...string) (Config, error) {
	tb.Helper()
	return Load(writeConfig(tb, body), true, env)
}

// fieldErrors unpacks the *FieldError values of a joined validation error.
func fieldErrors(err error) map[string]string {
	out := map[string]string{}
	var walk func(error)
	walk = func(err error) {
		var fe *FieldError
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
		} else if errors.As(err, &fe) {
			out[fe.Field] = fe.Problem
		}
	}
	walk(err)
	return out
}

func TestLoadConfigDefaultsWhenNoFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg, err := Load("", false, []string{"XDG_CONFIG_HOME=" + dir, "HOME=/nonexistent"})
	require.NoError(t, err)
	require.Equal(t, Default(), cfg)
	require.NoError(t, Default().Validate())
}

func TestLoadConfigDefaultFileIsRead(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	path := filepath.Join(home, ".config", "browserop", "config.yaml")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, []byte("log: {level: debug}\n"), 0o600))
	cfg, err := Load("", false, []string{"HOME=" + home, "XDG_CONFIG_HOME=relative/ignored"})
	require.NoError(t, err)
	require.Equal(t, "debug", cfg.Log.Level)
}

func TestLoadConfigMissingExplicitFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "nope.yaml")
	_, err := Load(path, true, nil)
	require.Error(t, err)
	require.Contains(t, err.Error(), path)

	_, err = Load("", true, nil)
	require.Error(t, err)
}

func TestLoadConfigMissingNonExplicitPathMeansDefaults(t *testing.T) {
	t.Parallel()
	cfg, err := Load(filepath.Join(t.TempDir(), "nope.yaml"), false, nil)
	require.NoError(t, err)
	require.Equal(t, Default(), cfg)
}

func TestLoadConfigDirectoryIsError(t *testing.T) {
	t.Parallel()
	_, err := Load(t.TempDir(), false, nil)
	require.Error(t, err)
}

func TestLoadConfigExample(t *testing.T) {
	t.Parallel()
	cfg, err := Load(examplePath, true, nil)
	require.NoError(t, err)
	require.NoError(t, cfg.Validate())
	// The example documents the defaults, value for value.
	require.Equal(t, Default(), cfg)
}

func TestExampleHasEveryKey(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(examplePath)
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, yaml.Unmarshal(data, &doc))
	present := map[string]bool{}
	var walk func(m map[string]any, prefix string)
	walk = func(m map[string]any, prefix string) {
		for k, v := range m {
			if sub, ok := v.(map[string]any); ok {
				walk(sub, join(prefix, k))
				continue
			}
			present[join(prefix, k)] = true
		}
	}
	walk(doc, "")

	leaves := knownLeaves(slices.Sorted(maps.Keys(Default().Budgets.Groups)))
	require.NotEmpty(t, leaves)
	for _, l := range leaves {
		require.True(t, present[l.key], "key %s is missing from %s", l.key, examplePath)
	}
	// And nothing in the example is unknown (Load would fail anyway).
	known := map[string]bool{}
	for _, l := range leaves {
		known[l.key] = true
	}
	for k := range present {
		require.True(t, known[k], "example key %s is not a Config key", k)
	}
}

func TestLoadConfigCustomFile(t *testing.T) {
	t.Parallel()
	cfg, err := Load("testdata/custom.yaml", true, nil)
	require.NoError(t, err)

	want := Default()
	want.Ledger.Path = "/var/lib/browserop/ledger.db"
	want.Browser = BrowserConfig{
		ExecPath:               "chromium",
		ProfileDir:             "/home/u/.local/state/browserop/profile-2",
		Headless:               false,
		DevtoolsActivePortFile: "/home/u/.config/chromium/DevToolsActivePort",
		NoSandbox:              true,
		ActionTimeout:          30 * time.Second,
		ExtraFlags:             []string{"--disable-features=A,B", "--mute-audio"},
	}
	want.Sites.Dir = "/etc/browserop/sites"
	want.Operator = OperatorConfig{LeaseName: "other-operator", LeaseTTL: 5 * time.Minute, Heartbeat: time.Minute, IdentitySkew: 10 * time.Second}
	want.Schedule = "0 9 * * 1-5"
	want.Jitter = 2 * time.Minute
	want.Calendar = CalendarConfig{Dir: "/home/u/calendar", Grace: time.Hour, PublishLate: true}
	want.Planner = PlannerConfig{Command: []string{"/usr/local/bin/planner", "--json"}, Timeout: time.Minute, QualityThreshold: 0.75, MaxOutput: 65536}
	// A limit from the file is kept; the window it does not set stays.
	want.Budgets.Formats["post_text"] = FormatBudget{Limit: 3, Window: 24 * time.Hour}
	want.Budgets.Groups["social"] = GroupBudget{Formats: []string{"reply", "like", "follow"}, Limit: 60, Window: DefaultGroupWindow}
	want.API = APIConfig{Addr: "[::1]:8080", TokenFile: "/run/user/1000/browserop/token", MaxBody: 4096}
	want.Authority.Ceiling = []string{"demo.test", "*.example.com"}
	want.Log = LogConfig{Format: "json", Level: "debug"}
	require.Equal(t, want, cfg)
}

func TestLoadConfigFileLimitNotLost(t *testing.T) {
	t.Parallel()
	cfg, err := loadString(t, `
budgets:
  formats:
    reply:
      limit: 3
  groups:
    original:
      limit: 4
`)
	require.NoError(t, err)
	require.Equal(t, FormatBudget{Limit: 3, Window: 24 * time.Hour}, cfg.Budgets.Formats["reply"])
	require.Equal(t, Default().Budgets.Formats["post_text"], cfg.Budgets.Formats["post_text"])
	require.Equal(t, 4, cfg.Budgets.Groups["original"].Limit)
	require.Equal(t, []string{"post_text", "post_image", "thread"}, cfg.Budgets.Groups["original"].Formats)

	// An explicit 0 is kept too (it means "never"), not replaced by a default.
	cfg, err = loadString(t, "budgets: {formats: {like: {limit: 0}}}\n")
	require.NoError(t, err)
	require.Equal(t, 0, cfg.Budgets.Formats["like"].Limit)
}

func TestLoadConfigUnknownKeysInFile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body string
		want       []string
	}{
		{"TopLevel", "schedul: '@hourly'\n", []string{`unknown key "schedul"`, `did you mean "schedule"`, ":1:"}},
		{"Nested", "browser:\n  headles: false\n", []string{`unknown key "browser.headles"`, `did you mean "headless"`, ":2:"}},
		{"FormatTypo", "budgets:\n  formats:\n    post_txt:\n      limit: 3\n", []string{`unknown format "post_txt"`, `did you mean "post_text"`, ":3:"}},
		{"FormatFieldTypo", "budgets:\n  formats:\n    reply:\n      limt: 3\n", []string{`unknown key "budgets.formats.reply.limt"`}},
		{"GroupFieldTypo", "budgets:\n  groups:\n    original:\n      window: 1h\n      limits: 3\n", []string{`unknown key "budgets.groups.original.limits"`}},
		{"GroupBadName", "budgets:\n  groups:\n    My-Group:\n      formats: [reply]\n      limit: 1\n", []string{`group name "my-group"`}},
		{"GroupNamedLikeFormat", "budgets:\n  groups:\n    reply:\n      formats: [reply]\n      limit: 1\n", []string{"is the name of a format"}},
		{"DottedKey", "browser.headless: false\n", []string{`unknown key "browser.headless"`}},
		{"UnderLeaf", "ledger:\n  path:\n    x: 1\n", []string{"ledger.path: want a single value"}},
		{"SectionNotMapping", "browser: true\n", []string{"browser: want a mapping"}},
		{"TopNotMapping", "- a\n- b\n", []string{"top level: want a mapping"}},
		{"CaseDuplicate", "log:\n  level: warn\n  Level: error\n", []string{"repeats the key on line 2"}},
		{"MergeKey", "base: &b {level: warn}\nlog:\n  <<: *b\n", []string{`unknown key "base"`, "merge keys"}},
		{"TwoDocuments", "log: {level: warn}\n---\nlog: {level: error}\n", []string{"more than one YAML document"}},
		{"NonScalarKey", "? [a, b]\n: 1\n", []string{"keys must be plain names"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := writeConfig(t, tt.body)
			_, err := Load(path, true, nil)
			require.Error(t, err)
			require.Contains(t, err.Error(), path)
			for _, w := range tt.want {
				require.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestLoadConfigUnknownKeysReportedTogether(t *testing.T) {
	t.Parallel()
	_, err := Load("testdata/unknown_key.yaml", true, nil)
	require.Error(t, err)
	require.Contains(t, err.Error(), "testdata/unknown_key.yaml:2: unknown key \"browser.headles\"")
	require.Contains(t, err.Error(), "testdata/unknown_key.yaml:5: budgets.formats: unknown format \"post_txt\"")
}

func TestLoadConfigMalformedYAML(t *testing.T) {
	t.Parallel()
	_, err := Load("testdata/malformed.yaml", true, nil)
	require.Error(t, err)
	require.Contains(t, err.Error(), "testdata/malformed.yaml")
	require.Contains(t, err.Error(), "line 3")
}

func TestLoadConfigTypeErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body, want string
	}{
		{"Bool", "browser: {headless: maybe}\n", `browser.headless: want true or false, got "maybe"`},
		{"DurationWithoutUnit", "operator: {lease_ttl: 120}\n", `operator.lease_ttl: want a duration`},
		{"DurationGarbage", "calendar: {grace: soon}\n", `calendar.grace: want a duration`},
		{"QuotedNumberDuration", "jitter: \"5\"\n", `jitter: want a duration`},
		{"IntFromFloat", "budgets: {formats: {reply: {limit: 1.5}}}\n", `budgets.formats.reply.limit: want an integer, got "1.5"`},
		{"IntFromString", "api: {max_body: \"big\"}\n", `api.max_body: want an integer`},
		{"FloatFromString", "planner: {quality_threshold: high}\n", `planner.quality_threshold: want a number`},
		{"ListFromScalar", "browser: {extra_flags: --mute-audio}\n", `browser.extra_flags: want a list`},
		{"ListOfMaps", "planner: {command: [{a: 1}]}\n", `planner.command[0]: want a string`},
		{"ListWithNull", "authority: {ceiling: [a.test, null]}\n", `authority.ceiling[1]: want a string`},
		{"ScalarFromList", "schedule: [a]\n", `schedule: want a single value`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := loadString(t, tt.body)
			require.Error(t, err)
			require.Contains(t, err.Error(), tt.want)
			require.Contains(t, err.Error(), "config.yaml:1:")
		})
	}
}

func TestLoadConfigYAMLForms(t *testing.T) {
	t.Parallel()
	cfg, err := loadString(t, `
# comments only above
Browser:
  Headless: no
operator:
  lease_ttl: &ttl 4m
calendar:
  grace: *ttl
jitter: 0
planner:
  command: &cmd [/bin/planner]
ledger:
  path:
log: ~
`)
	require.NoError(t, err)
	require.False(t, cfg.Browser.Headless)
	require.Equal(t, 4*time.Minute, cfg.Operator.LeaseTTL)
	require.Equal(t, 4*time.Minute, cfg.Calendar.Grace)
	require.Equal(t, time.Duration(0), cfg.Jitter)
	require.Equal(t, []string{"/bin/planner"}, cfg.Planner.Command)
	require.Equal(t, "", cfg.Ledger.Path)
	require.Equal(t, Default().Log, cfg.Log)

	for _, body := range []string{"", "# nothing\n", "---\n", "{}\n", "browser:\n"} {
		cfg, err := loadString(t, body)
		require.NoError(t, err, "body %q", body)
		require.Equal(t, Default(), cfg, "body %q", body)
	}
}

func TestLoadConfigAliasBomb(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 12; i++ {
		b.WriteString("a" + string(rune('a'+i)) + ": &a" + string(rune('a'+i)) + " [")
		prev := "a0"
		if i > 1 {
			prev = "a" + string(rune('a'+i-1))
		}
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*" + prev)
		}
		b.WriteString("]\n")
	}
	b.WriteString("authority:\n  ceiling: *al\n")
	done := make(chan error, 1)
	go func() {
		_, err := loadString(t, b.String())
		done <- err
	}()
	select {
	case err := <-done:
		require.Error(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("alias expansion did not stop")
	}
}

func TestLoadConfigNewGroup(t *testing.T) {
	t.Parallel()
	cfg, err := loadString(t, "budgets:\n  groups:\n    social:\n      formats: [reply, like]\n      limit: 30\n")
	require.NoError(t, err)
	require.Equal(t, GroupBudget{Formats: []string{"reply", "like"}, Limit: 30, Window: 24 * time.Hour}, cfg.Budgets.Groups["social"])
	require.Contains(t, cfg.Budgets.Groups, "original")

	_, err = loadString(t, "budgets:\n  groups:\n    social:\n      formats: [reply]\n")
	require.ErrorContains(t, err, "budgets.groups.social: a new group needs a limit")

	_, err = loadString(t, "budgets:\n  groups:\n    social:\n      limit: 3\n")
	require.ErrorContains(t, err, "config: budgets.groups.social.formats: must list at least one format")

	_, err = loadString(t, "budgets:\n  groups:\n    social:\n      formats: [reply, likes]\n      limit: 3\n")
	require.ErrorContains(t, err, `budgets.groups.social.formats[1]: unknown format "likes"`)
}

func TestLoadConfigEnvOverrides(t *testing.T) {
	t.Parallel()
	path := writeConfig(t, `
operator:
  lease_ttl: 10m
budgets:
  formats:
    reply:
      limit: 5
  groups:
    social:
      formats: [like]
      limit: 7
`)
	cfg, err := Load(path, true, []string{
		"HOME=/home/u",
		"BROWSEROP_CONFIG=/ignored.yaml",
		"BROWSEROP_LEDGER_PATH=/tmp/l.db",
		"BROWSEROP_BROWSER_HEADLESS=false",
		"BROWSEROP_BROWSER_EXTRA_FLAGS=--mute-audio  --disable-gpu",
		`BROWSEROP_PLANNER_COMMAND=["/bin/plan", "--name=a b,c"]`,
		"BROWSEROP_AUTHORITY_CEILING=",
		"BROWSEROP_OPERATOR_LEASE_TTL=3m",
		"BROWSEROP_BUDGETS_FORMATS_REPLY_WINDOW=12h",
		"BROWSEROP_BUDGETS_FORMATS_LIKE_LIMIT=9",
		"BROWSEROP_BUDGETS_GROUPS_SOCIAL_LIMIT=11",
		"BROWSEROP_BUDGETS_GROUPS_ORIGINAL_FORMATS=post_text thread",
		"BROWSEROP_PLANNER_QUALITY_THRESHOLD=0.9",
	})
	require.NoError(t, err)
	require.Equal(t, "/tmp/l.db", cfg.Ledger.Path)
	require.False(t, cfg.Browser.Headless)
	require.Equal(t, []string{"--mute-audio", "--disable-gpu"}, cfg.Browser.ExtraFlags)
	require.Equal(t, []string{"/bin/plan", "--name=a b,c"}, cfg.Planner.Command)
	require.Equal(t, []string{}, cfg.Authority.Ceiling, "an empty variable counts as unset")
	require.Equal(t, 3*time.Minute, cfg.Operator.LeaseTTL, "env beats file")
	// A nested duration from env; the file's limit next to it survives.
	require.Equal(t, FormatBudget{Limit: 5, Window: 12 * time.Hour}, cfg.Budgets.Formats["reply"])
	require.Equal(t, 9, cfg.Budgets.Formats["like"].Limit)
	require.Equal(t, 11, cfg.Budgets.Groups["social"].Limit)
	require.Equal(t, []string{"post_text", "thread"}, cfg.Budgets.Groups["original"].Formats)
	require.Equal(t, 0.9, cfg.Planner.QualityThreshold)
}

func TestLoadConfigUnknownEnv(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  []string
		want string
	}{
		{"Typo", []string{"BROWSEROP_BROWSER_HEADLES=false"}, "BROWSEROP_BROWSER_HEADLES matches no config key; did you mean \"BROWSEROP_BROWSER_HEADLESS\"?"},
		{"Section", []string{"BROWSEROP_BUDGETS=1"}, "BROWSEROP_BUDGETS matches no config key"},
		{"UnknownFormat", []string{"BROWSEROP_BUDGETS_FORMATS_POST_TXT_LIMIT=1"}, "BROWSEROP_BUDGETS_FORMATS_POST_TXT_LIMIT matches no config key"},
		{"UndefinedGroup", []string{"BROWSEROP_BUDGETS_GROUPS_SOCIAL_LIMIT=1"}, "new budget groups must be defined in the config file"},
		{"BadBool", []string{"BROWSEROP_BROWSER_HEADLESS=nope"}, `BROWSEROP_BROWSER_HEADLESS (browser.headless): want true or false, got "nope"`},
		{"BadDuration", []string{"BROWSEROP_OPERATOR_HEARTBEAT=20"}, `BROWSEROP_OPERATOR_HEARTBEAT (operator.heartbeat): want a duration`},
		{"BadInt", []string{"BROWSEROP_API_MAX_BODY=1MB"}, `want an integer`},
		{"BadFloat", []string{"BROWSEROP_PLANNER_QUALITY_THRESHOLD=x"}, `want a number`},
		{"BadList", []string{"BROWSEROP_PLANNER_COMMAND=[unclosed"}, `BROWSEROP_PLANNER_COMMAND (planner.command): want a list`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Load(filepath.Join(t.TempDir(), "none.yaml"), false, tt.env)
			require.Error(t, err)
			require.Contains(t, err.Error(), tt.want)
		})
	}

	// Other variables, and BROWSEROP_CONFIG, are not config keys and are fine.
	_, err := Load(filepath.Join(t.TempDir(), "none.yaml"), false, []string{"PATH=/bin", "BROWSEROPX=1", "BROWSEROP_CONFIG=/x", "=weird", "NOEQUALS"})
	require.NoError(t, err)
}

func TestLoadConfigEnvValidated(t *testing.T) {
	t.Parallel()
	_, err := load(filepath.Join(t.TempDir(), "none.yaml"), false, []string{"BROWSEROP_BUDGETS_FORMATS_POST_TEXT_LIMIT=-1"})
	require.EqualError(t, err, "config: budgets.formats.post_text.limit: must be >= 0, got -1")
}

func TestEnvNamesUnique(t *testing.T) {
	t.Parallel()
	seen := map[string]string{}
	for _, l := range knownLeaves([]string{"original", "social", "a", "a_limit", "x_formats"}) {
		name := EnvName(l.key)
		other, dup := seen[name]
		require.False(t, dup, "%s and %s share %s", l.key, other, name)
		seen[name] = l.key
	}
	require.Equal(t, "BROWSEROP_BROWSER_DEVTOOLS_ACTIVE_PORT_FILE", EnvName("browser.devtools_active_port_file"))
}

func TestValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		mutate func(*Config)
		field  string
		want   string // substring of the problem; "" = valid
	}{
		{"LedgerRelative", func(c *Config) { c.Ledger.Path = "ledger.db" }, "ledger.path", "must be an absolute path"},
		{"LedgerAbsolute", func(c *Config) { c.Ledger.Path = "/x/ledger.db" }, "", ""},
		{"ExecPathName", func(c *Config) { c.Browser.ExecPath = "google-chrome" }, "", ""},
		{"ExecPathRelative", func(c *Config) { c.Browser.ExecPath = "bin/chrome" }, "browser.exec_path", "absolute path or a command name"},
		{"ProfileRelative", func(c *Config) { c.Browser.ProfileDir = "~/profile" }, "browser.profile_dir", "~ is not expanded"},
		{"DevtoolsURLOK", func(c *Config) { c.Browser.DevtoolsURL = "ws://127.0.0.1:9222/devtools/browser/x" }, "", ""},
		{"DevtoolsURLBadScheme", func(c *Config) { c.Browser.DevtoolsURL = "ftp://127.0.0.1:9222" }, "browser.devtools_url", "http(s) or ws(s)"},
		{"DevtoolsURLNoHost", func(c *Config) { c.Browser.DevtoolsURL = "127.0.0.1:9222" }, "browser.devtools_url", "with a host"},
		{"DevtoolsBoth", func(c *Config) {
			c.Browser.DevtoolsURL = "http://127.0.0.1:9222"
			c.Browser.DevtoolsActivePortFile = "/x/DevToolsActivePort"
		}, "browser.devtools_url", "set only one"},
		{"PortFileRelative", func(c *Config) { c.Browser.DevtoolsActivePortFile = "DevToolsActivePort" }, "browser.devtools_active_port_file", "absolute"},
		{"ActionTimeoutZero", func(c *Config) { c.Browser.ActionTimeout = 0 }, "browser.action_timeout", "must be > 0, got 0s"},
		{"ExtraFlagNoDashes", func(c *Config) { c.Browser.ExtraFlags = []string{"--ok", "mute-audio"} }, "browser.extra_flags[1]", `starting with "--"`},
		{"ExtraFlagUserDataDir", func(c *Config) { c.Browser.ExtraFlags = []string{"--user-data-dir=/x"} }, "browser.extra_flags[0]", "browser.profile_dir"},
		{"ExtraFlagRemoteDebugging", func(c *Config) { c.Browser.ExtraFlags = []string{"--remote-debugging-port=9222"} }, "browser.extra_flags[0]", "DevTools"},
		{"SitesDirRelative", func(c *Config) { c.Sites.Dir = "sites" }, "sites.dir", "absolute"},
		{"LeaseNameEmpty", func(c *Config) { c.Operator.LeaseName = " " }, "operator.lease_name", "must not be empty"},
		{"LeaseTTLZero", func(c *Config) { c.Operator.LeaseTTL = 0 }, "operator.lease_ttl", "must be > 0"},
		{"HeartbeatZero", func(c *Config) { c.Operator.Heartbeat = 0 }, "operator.heartbeat", "must be > 0"},
		{"HeartbeatHalfTTL", func(c *Config) { c.Operator.Heartbeat = time.Minute }, "operator.heartbeat", "less than half of operator.lease_ttl (2m0s), got 1m0s"},
		{"HeartbeatJustUnderHalf", func(c *Config) { c.Operator.Heartbeat = time.Minute - time.Second }, "", ""},
		{"IdentitySkewNegative", func(c *Config) { c.Operator.IdentitySkew = -time.Second }, "operator.identity_skew", "must be >= 0"},
		{"ScheduleEmpty", func(c *Config) { c.Schedule = "" }, "schedule", "cron spec"},
		{"ScheduleSixFields", func(c *Config) { c.Schedule = "0 */15 * * * *" }, "schedule", "not a valid cron spec"},
		{"ScheduleGarbage", func(c *Config) { c.Schedule = "every day" }, "schedule", "not a valid cron spec"},
		{"ScheduleDescriptor", func(c *Config) { c.Schedule = "@hourly" }, "", ""},
		{"JitterNegative", func(c *Config) { c.Jitter = -time.Second }, "jitter", "must be >= 0"},
		{"CalendarDirRelative", func(c *Config) { c.Calendar.Dir = "cal" }, "calendar.dir", "absolute"},
		{"MediaDirRelative", func(c *Config) { c.Calendar.MediaDir = "media" }, "calendar.media_dir", "absolute"},
		{"MediaDirAbsolute", func(c *Config) { c.Calendar.MediaDir = "/srv/media" }, "", ""},
		{"GraceNegative", func(c *Config) { c.Calendar.Grace = -time.Minute }, "calendar.grace", "must be >= 0"},
		{"PlannerEmptyProgram", func(c *Config) { c.Planner.Command = []string{"", "x"} }, "planner.command", "must not be empty"},
		{"PlannerTimeoutZero", func(c *Config) { c.Planner.Timeout = 0 }, "planner.timeout", "must be > 0"},
		{"QualityAboveOne", func(c *Config) { c.Planner.QualityThreshold = 1.5 }, "planner.quality_threshold", "between 0 and 1, got 1.5"},
		{"QualityNegative", func(c *Config) { c.Planner.QualityThreshold = -0.1 }, "planner.quality_threshold", "between 0 and 1"},
		{"QualityNaN", func(c *Config) { c.Planner.QualityThreshold = math.NaN() }, "planner.quality_threshold", "between 0 and 1"},
		{"QualityBounds", func(c *Config) { c.Planner.QualityThreshold = 1 }, "", ""},
		{"MaxOutputZero", func(c *Config) { c.Planner.MaxOutput = 0 }, "planner.max_output", "must be > 0"},
		{"FormatLimitNegative", func(c *Config) { c.Budgets.Formats["post_text"] = FormatBudget{Limit: -1, Window: time.Hour} }, "budgets.formats.post_text.limit", "must be >= 0, got -1"},
		{"FormatLimitZero", func(c *Config) { c.Budgets.Formats["post_text"] = FormatBudget{Limit: 0, Window: time.Hour} }, "", ""},
		{"FormatWindowZero", func(c *Config) { c.Budgets.Formats["like"] = FormatBudget{Limit: 1} }, "budgets.formats.like.window", "must be > 0"},
		{"FormatUnknown", func(c *Config) { c.Budgets.Formats["post_txt"] = FormatBudget{Limit: 1, Window: time.Hour} }, "budgets.formats.post_txt", "unknown format"},
		{"FormatMissing", func(c *Config) { delete(c.Budgets.Formats, "follow") }, "budgets.formats.follow", "missing"},
		{"GroupNoFormats", func(c *Config) { c.Budgets.Groups["g"] = GroupBudget{Limit: 1, Window: time.Hour} }, "budgets.groups.g.formats", "at least one"},
		{"GroupUnknownFormat", func(c *Config) {
			c.Budgets.Groups["g"] = GroupBudget{Formats: []string{"reply", "retweet"}, Limit: 1, Window: time.Hour}
		}, "budgets.groups.g.formats[1]", "unknown format"},
		{"GroupDuplicateFormat", func(c *Config) {
			c.Budgets.Groups["g"] = GroupBudget{Formats: []string{"reply", "reply"}, Limit: 1, Window: time.Hour}
		}, "budgets.groups.g.formats[1]", "listed twice"},
		{"GroupLimitNegative", func(c *Config) {
			c.Budgets.Groups["g"] = GroupBudget{Formats: []string{"reply"}, Limit: -2, Window: time.Hour}
		}, "budgets.groups.g.limit", "must be >= 0, got -2"},
		{"GroupWindowZero", func(c *Config) { c.Budgets.Groups["g"] = GroupBudget{Formats: []string{"reply"}, Limit: 2} }, "budgets.groups.g.window", "must be > 0"},
		{"GroupBadName", func(c *Config) {
			c.Budgets.Groups["G!"] = GroupBudget{Formats: []string{"reply"}, Limit: 2, Window: time.Hour}
		}, "budgets.groups.G!", "group name"},
		{"GroupFormatName", func(c *Config) {
			c.Budgets.Groups["like"] = GroupBudget{Formats: []string{"like"}, Limit: 2, Window: time.Hour}
		}, "budgets.groups.like", "name of a format"},
		{"AddrLocalhost", func(c *Config) { c.API.Addr = "localhost:0" }, "", ""},
		{"AddrIPv6Loopback", func(c *Config) { c.API.Addr = "[::1]:7465" }, "", ""},
		{"AddrLoopbackRange", func(c *Config) { c.API.Addr = "127.0.0.2:7465" }, "", ""},
		{"AddrAllInterfaces", func(c *Config) { c.API.Addr = ":7465" }, "api.addr", "loopback"},
		{"AddrZeroes", func(c *Config) { c.API.Addr = "0.0.0.0:7465" }, "api.addr", "loopback"},
		{"AddrPublic", func(c *Config) { c.API.Addr = "192.168.1.2:7465" }, "api.addr", "loopback"},
		{"AddrHostname", func(c *Config) { c.API.Addr = "example.com:7465" }, "api.addr", "loopback"},
		{"AddrNoPort", func(c *Config) { c.API.Addr = "127.0.0.1" }, "api.addr", "host:port"},
		{"AddrBadPort", func(c *Config) { c.API.Addr = "127.0.0.1:http" }, "api.addr", "port must be a number"},
		{"AddrPortRange", func(c *Config) { c.API.Addr = "127.0.0.1:70000" }, "api.addr", "port must be a number"},
		{"TokenFileRelative", func(c *Config) { c.API.TokenFile = "token" }, "api.token_file", "absolute"},
		{"MaxBodyZero", func(c *Config) { c.API.MaxBody = 0 }, "api.max_body", "must be > 0"},
		{"CeilingOK", func(c *Config) {
			c.Authority.Ceiling = []string{"example.com", "*.example.com", "127.0.0.1", "localhost", "a-b.c0.test"}
		}, "", ""},
		{"CeilingUppercase", func(c *Config) { c.Authority.Ceiling = []string{"Example.com"} }, "authority.ceiling[0]", `write "example.com"`},
		{"CeilingURL", func(c *Config) { c.Authority.Ceiling = []string{"https://example.com"} }, "authority.ceiling[0]", "bare hostname"},
		{"CeilingPort", func(c *Config) { c.Authority.Ceiling = []string{"example.com:443"} }, "authority.ceiling[0]", "bare hostname"},
		{"CeilingBareStar", func(c *Config) { c.Authority.Ceiling = []string{"*"} }, "authority.ceiling[0]", "not a hostname"},
		{"CeilingTLDWildcard", func(c *Config) { c.Authority.Ceiling = []string{"*.com"} }, "authority.ceiling[0]", "too broad"},
		{"CeilingInnerWildcard", func(c *Config) { c.Authority.Ceiling = []string{"a.*.com"} }, "authority.ceiling[0]", "not a hostname"},
		{"CeilingEmpty", func(c *Config) { c.Authority.Ceiling = []string{"ok.test", ""} }, "authority.ceiling[1]", "must not be empty"},
		{"CeilingTrailingDot", func(c *Config) { c.Authority.Ceiling = []string{"example.com."} }, "authority.ceiling[0]", "not a hostname"},
		{"CeilingDashLabel", func(c *Config) { c.Authority.Ceiling = []string{"-a.com"} }, "authority.ceiling[0]", "not a hostname"},
		{"LogFormat", func(c *Config) { c.Log.Format = "yaml" }, "log.format", `got "yaml"`},
		{"LogLevel", func(c *Config) { c.Log.Level = "verbose" }, "log.level", `got "verbose"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := Default()
			tt.mutate(&c)
			err := c.Validate()
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			got := fieldErrors(err)
			require.Contains(t, got, tt.field, "problems: %v", err)
			require.Contains(t, got[tt.field], tt.want)
			require.True(t, strings.HasPrefix(err.Error(), "config: "))
		})
	}
}

func TestValidateReportsAllProblems(t *testing.T) {
	t.Parallel()
	c := Default()
	c.Log.Level = "loud"
	c.API.Addr = "0.0.0.0:1"
	c.Budgets.Formats["reply"] = FormatBudget{Limit: -1, Window: time.Hour}
	err := c.Validate()
	require.Error(t, err)
	got := fieldErrors(err)
	require.Len(t, got, 3)
	require.Contains(t, err.Error(), "config: budgets.formats.reply.limit: must be >= 0, got -1")
	require.Contains(t, err.Error(), "config: api.addr:")
	require.Contains(t, err.Error(), "config: log.level:")
}

func TestLoadConfigValidationErrorsJoined(t *testing.T) {
	t.Parallel()
	_, err := loadString(t, "log: {level: loud, format: xml}\napi: {addr: '0.0.0.0:80'}\n")
	require.Error(t, err)
	require.Len(t, fieldErrors(err), 3)
}

func TestDefaultConfigPath(t *testing.T) {
	t.Parallel()
	p, err := DefaultPath([]string{"XDG_CONFIG_HOME=/xdg", "HOME=/home/u"})
	require.NoError(t, err)
	require.Equal(t, "/xdg/browserop/config.yaml", p)

	p, err = DefaultPath([]string{"XDG_CONFIG_HOME=", "HOME=/home/u"})
	require.NoError(t, err)
	require.Equal(t, "/home/u/.config/browserop/config.yaml", p)

	_, err = DefaultPath(nil)
	require.Error(t, err)
	_, err = Load("", false, nil)
	require.Error(t, err, "no way to find the default file is an error, not silent defaults")
}

func TestResolvedDirs(t *testing.T) {
	t.Parallel()
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

	c := Default()
	dir, err := c.profileDir(env(map[string]string{"XDG_STATE_HOME": "/state", "HOME": "/home/u"}))
	require.NoError(t, err)
	require.Equal(t, "/state/browserop/profile", dir)

	dir, err = c.profileDir(env(map[string]string{"HOME": "/home/u"}))
	require.NoError(t, err)
	require.Equal(t, "/home/u/.local/state/browserop/profile", dir)

	_, err = c.profileDir(env(nil))
	require.Error(t, err)

	dir, err = c.calendarDir(env(map[string]string{"HOME": "/home/u"}))
	require.NoError(t, err)
	require.Equal(t, "/home/u/.config/browserop/calendar", dir)

	tok, err := orStateFile("", env(map[string]string{"XDG_STATE_HOME": "/state"}), "token")
	require.NoError(t, err)
	require.Equal(t, "/state/browserop/token", tok)

	c.Browser.ProfileDir = "/p"
	c.Calendar.Dir = "/c"
	c.API.TokenFile = "/t"
	dir, err = c.ProfileDir(nil)
	require.NoError(t, err)
	require.Equal(t, "/p", dir)
	dir, err = c.CalendarDir(nil)
	require.NoError(t, err)
	require.Equal(t, "/c", dir)
	tok, err = c.TokenFile(nil)
	require.NoError(t, err)
	require.Equal(t, "/t", tok)
}

// calendar.media_dir: from the file or the environment; unset, the
// calendar directory.
func TestMediaDir(t *testing.T) {
	t.Parallel()
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	home := env(map[string]string{"HOME": "/home/u"})

	c := Default()
	require.Equal(t, "", c.Calendar.MediaDir)
	dir, err := c.mediaDir(home)
	require.NoError(t, err)
	require.Equal(t, "/home/u/.config/browserop/calendar", dir, "the calendar directory by default")
	_, err = c.mediaDir(env(nil))
	require.Error(t, err)
	c.Calendar.Dir = "/c"
	dir, err = c.mediaDir(env(nil))
	require.NoError(t, err)
	require.Equal(t, "/c", dir, "calendar.dir set")

	cfg, err := loadString(t, "calendar:\n  dir: /cal\n  media_dir: /srv/media\n")
	require.NoError(t, err)
	require.Equal(t, "/srv/media", cfg.Calendar.MediaDir)
	dir, err = cfg.MediaDir(nil)
	require.NoError(t, err)
	require.Equal(t, "/srv/media", dir)

	cfg, err = loadString(t, "", "BROWSEROP_CALENDAR_MEDIA_DIR=/env/media")
	require.NoError(t, err)
	require.Equal(t, "/env/media", cfg.Calendar.MediaDir)

	_, err = loadString(t, "calendar:\n  media_dir: media\n")
	require.Error(t, err)
	require.Contains(t, fieldErrors(err)["calendar.media_dir"], "absolute")
}

func TestLoadConfigTooLarge(t *testing.T) {
	t.Parallel()
	body := "# " + strings.Repeat("x", maxConfigSize) + "\n"
	_, err := loadString(t, body)
	require.ErrorContains(t, err, "larger than")
}

func FuzzLoadConfig(f *testing.F) {
	for _, path := range []string{examplePath, "testdata/custom.yaml", "testdata/malformed.yaml", "testdata/unknown_key.yaml"} {
		data, err := os.ReadFile(path)
		require.NoError(f, err)
		f.Add(data)
	}
	for _, s := range []string{
		"", "---\n", "browser: {headless: yes}\n", "budgets: {groups: {g: {formats: [reply], limit: 1}}}\n",
		"a: &a [*a]\n", "jitter: 0\n", "planner: {quality_threshold: .nan}\n", "operator: {heartbeat: 1m, lease_ttl: 2m}\n",
		"log: {level: ~}\n", "Budgets: {Formats: {Reply: {Limit: 2}}}\n", "? x\n", "api: {addr: '[::1]:1'}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := loadConfigData("fuzz.yaml", data, nil)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "config: ") {
				t.Fatalf("error without the config prefix: %v", err)
			}
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("loaded a config that does not validate: %v", err)
		}
	})
}
