package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	"github.com/spf13/viper"
	"go.yaml.in/yaml/v3"

	"github.com/browserop/browserop/authority"
	"github.com/browserop/browserop/budgets"
)

// Config is browserop's whole configuration: one YAML file, overridden by
// BROWSEROP_* environment variables, on top of DefaultConfig. Every key is
// documented in configs/browserop.example.yaml. Empty paths mean "the
// default location", resolved by the methods below or by the package that
// owns the file, never here.
type Config struct {
	Ledger    LedgerConfig    `mapstructure:"ledger"`
	Browser   BrowserConfig   `mapstructure:"browser"`
	Sites     SitesConfig     `mapstructure:"sites"`
	Operator  OperatorConfig  `mapstructure:"operator"`
	Schedule  string          `mapstructure:"schedule"`
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
	// Path is the database file; "" lets the ledger package pick its XDG
	// state location.
	Path string `mapstructure:"path"`
}

// BrowserConfig says how to reach Chrome.
type BrowserConfig struct {
	ExecPath               string        `mapstructure:"exec_path"`
	ProfileDir             string        `mapstructure:"profile_dir"`
	Headless               bool          `mapstructure:"headless"`
	DevtoolsURL            string        `mapstructure:"devtools_url"`
	DevtoolsActivePortFile string        `mapstructure:"devtools_active_port_file"`
	NoSandbox              bool          `mapstructure:"no_sandbox"`
	ActionTimeout          time.Duration `mapstructure:"action_timeout"`
	ExtraFlags             []string      `mapstructure:"extra_flags"`
}

// SitesConfig locates site adapters.
type SitesConfig struct {
	// Dir is a directory of adapter YAML files; "" means bundled adapters
	// only.
	Dir string `mapstructure:"dir"`
}

// OperatorConfig tunes the operator lease and identity checks.
type OperatorConfig struct {
	LeaseName    string        `mapstructure:"lease_name"`
	LeaseTTL     time.Duration `mapstructure:"lease_ttl"`
	Heartbeat    time.Duration `mapstructure:"heartbeat"`
	IdentitySkew time.Duration `mapstructure:"identity_skew"`
}

// CalendarConfig locates the content calendar and says how late an entry
// may still be published.
type CalendarConfig struct {
	Dir         string        `mapstructure:"dir"`
	Grace       time.Duration `mapstructure:"grace"`
	PublishLate bool          `mapstructure:"publish_late"`
}

// PlannerConfig describes the optional external planner program.
type PlannerConfig struct {
	// Command is the planner's argv; empty means no planner.
	Command          []string      `mapstructure:"command"`
	Timeout          time.Duration `mapstructure:"timeout"`
	QualityThreshold float64       `mapstructure:"quality_threshold"`
	MaxOutput        int           `mapstructure:"max_output"`
}

// BudgetsConfig holds the limits per format and per group of formats.
type BudgetsConfig struct {
	// Formats has one entry per budgets.Formats name.
	Formats map[string]FormatBudget `mapstructure:"formats"`
	// Groups are named sets of formats sharing one limit.
	Groups map[string]GroupBudget `mapstructure:"groups"`
}

// FormatBudget is the limit of one action format: at most Limit verified
// actions per rolling Window; 0 means the format is never performed.
type FormatBudget struct {
	Limit  int           `mapstructure:"limit"`
	Window time.Duration `mapstructure:"window"`
}

// GroupBudget is a limit shared by several formats.
type GroupBudget struct {
	Formats []string      `mapstructure:"formats"`
	Limit   int           `mapstructure:"limit"`
	Window  time.Duration `mapstructure:"window"`
}

// APIConfig configures the loopback REST/MCP listener.
type APIConfig struct {
	Addr      string `mapstructure:"addr"`
	TokenFile string `mapstructure:"token_file"`
	MaxBody   int    `mapstructure:"max_body"`
}

// AuthorityConfig bounds what any task may ever reach.
type AuthorityConfig struct {
	// Ceiling lists host names ("example.com", itself only), wildcards
	// ("*.example.com", its subdomains only) and IP literals (itself only):
	// every contract domain, grant, site and target must lie within it
	// (package authority). Empty, it is the configured sites' hosts and no
	// grant is possible.
	Ceiling []string `mapstructure:"ceiling"`
}

// LogConfig configures logging.
type LogConfig struct {
	// Format is "auto" (text on a terminal, JSON otherwise), "text" or
	// "json".
	Format string `mapstructure:"format"`
	// Level is "debug", "info", "warn" or "error".
	Level string `mapstructure:"level"`
}

// DefaultGroupWindow is the window of a budget group the file defines
// without one.
const DefaultGroupWindow = 24 * time.Hour

// DefaultConfig returns the configuration used for every key that neither
// the file nor the environment sets.
func DefaultConfig() Config {
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

// EnvPrefix starts every environment variable that overrides a config key:
// the key upper-cased with "." replaced by "_", e.g. BROWSEROP_LEDGER_PATH
// or BROWSEROP_BUDGETS_FORMATS_POST_TEXT_LIMIT.
const EnvPrefix = "BROWSEROP_"

// nonConfigEnv lists BROWSEROP_* variables that are not config keys, so the
// unknown-variable check leaves them alone.
var nonConfigEnv = map[string]bool{
	"BROWSEROP_CONFIG":            true,
	"BROWSEROP_CRASH_AT":          true, // operator crash points, for the torture harness
	"BROWSEROP_PAUSE_AT":          true, // operator pause points (SIGSTOP), for the tests
	"BROWSEROP_TEST_CHROME":       true, // the browser the tests use
	"BROWSEROP_MCP_INSPECTOR_DIR": true, // where the MCP Inspector test finds its npm install
}

// maxConfigSize bounds the config file; anything larger is a mistake.
const maxConfigSize = 1 << 20

// maxNodes bounds the YAML nodes visited, aliases expanded, so an alias bomb
// is an error rather than a hang.
const maxNodes = 100_000

// DefaultConfigPath returns $XDG_CONFIG_HOME/browserop/config.yaml, or
// ~/.config/browserop/config.yaml when XDG_CONFIG_HOME is unset or not
// absolute, reading both variables from env (os.Environ form). It returns an
// error when neither variable is usable.
func DefaultConfigPath(env []string) (string, error) {
	dir, err := xdgDir(envLookup(env), "XDG_CONFIG_HOME", ".config")
	if err != nil {
		return "", fmt.Errorf("config: locate default config file: %w", err)
	}
	return filepath.Join(dir, "browserop", "config.yaml"), nil
}

// LoadConfig reads the YAML file at path over DefaultConfig, applies the
// BROWSEROP_* variables of env (os.Environ form; nil means none), and
// validates the result. An empty path means DefaultConfigPath(env). A
// missing file means defaults, unless explicit is true (the path came from
// --config), in which case it is an error. Every error names the file, key
// or variable at fault; unknown keys in the file, BROWSEROP_* variables that
// match no key, wrongly typed values, malformed YAML and failed validation
// are all errors, joined so they can be fixed in one go.
func LoadConfig(path string, explicit bool, env []string) (Config, error) {
	if path == "" {
		if explicit {
			return Config{}, errors.New("config: empty config file path given")
		}
		p, err := DefaultConfigPath(env)
		if err != nil {
			return Config{}, err
		}
		path = p
	}
	data, err := readConfigFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !explicit:
		data = nil
	case errors.Is(err, fs.ErrNotExist):
		return Config{}, fmt.Errorf("config: %s: file does not exist", path)
	case err != nil:
		return Config{}, fmt.Errorf("config: %w", err)
	}
	return loadConfigData(path, data, env)
}

func readConfigFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxConfigSize+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > maxConfigSize {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxConfigSize)
	}
	return data, nil
}

// loadConfigData does LoadConfig's work on file contents already read; name
// is used in messages only. Viper layers defaults, the file and the
// environment; the file is parsed and checked against the Config schema
// here first, so viper only ever sees known keys with typed values.
func loadConfigData(name string, data []byte, env []string) (Config, error) {
	p := &fileParser{name: name}
	fileSettings := p.parse(data)
	if len(p.errs) > 0 {
		return Config{}, errors.Join(p.errs...)
	}

	v := viper.New()
	def := DefaultConfig()
	for key, val := range flatten(reflect.ValueOf(def), "") {
		v.SetDefault(key, val)
	}
	for _, g := range p.newGroups {
		v.SetDefault("budgets.groups."+g+".window", DefaultGroupWindow)
	}
	if err := v.MergeConfigMap(fileSettings); err != nil {
		return Config{}, fmt.Errorf("config: %s: %w", name, err)
	}

	groups := sortedKeys(def.Budgets.Groups)
	for _, g := range p.groups {
		if !slices.Contains(groups, g) {
			groups = append(groups, g)
		}
	}
	if errs := applyEnv(v, env, knownLeaves(groups)); len(errs) > 0 {
		return Config{}, errors.Join(errs...)
	}

	var c Config
	if err := v.UnmarshalExact(&c, viper.DecodeHook(strictHook)); err != nil {
		return Config{}, fmt.Errorf("config: %s: %w", name, err)
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// leaf is one settable key and the Go type of its value.
type leaf struct {
	key string
	typ reflect.Type
}

var (
	durationType = reflect.TypeFor[time.Duration]()
	configType   = reflect.TypeFor[Config]()
)

// mapKeys says, for each map-valued section, how its keys are checked.
var mapKeys = map[string]func(string) error{
	"budgets.formats": checkFormatName,
	"budgets.groups":  checkGroupName,
}

var groupNameRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

func checkFormatName(name string) error {
	if !budgets.KnownFormat(name) {
		return fmt.Errorf("unknown format %q%s (known: %s)", name, suggest(name, budgets.Formats), strings.Join(budgets.Formats, ", "))
	}
	return nil
}

func checkGroupName(name string) error {
	if !groupNameRE.MatchString(name) {
		return fmt.Errorf("group name %q must be lowercase letters, digits and _, starting with a letter", name)
	}
	if budgets.KnownFormat(name) {
		return fmt.Errorf("group name %q is the name of a format", name)
	}
	return nil
}

// knownLeaves lists every settable key: the struct's fields, every format,
// and the given groups.
func knownLeaves(groups []string) []leaf {
	var out []leaf
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		switch {
		case t.Kind() == reflect.Struct && t != durationType:
			for i := range t.NumField() {
				f := t.Field(i)
				walk(f.Type, join(prefix, f.Tag.Get("mapstructure")))
			}
		case t.Kind() == reflect.Map:
			var keys []string
			switch prefix {
			case "budgets.formats":
				keys = budgets.Formats
			case "budgets.groups":
				keys = groups
			default:
				panic("config: map section without key rules: " + prefix)
			}
			for _, k := range keys {
				walk(t.Elem(), join(prefix, k))
			}
		default:
			out = append(out, leaf{key: prefix, typ: t})
		}
	}
	walk(configType, "")
	return out
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// flatten maps every leaf key of a Config value to its value.
func flatten(v reflect.Value, prefix string) map[string]any {
	out := map[string]any{}
	var walk func(v reflect.Value, prefix string)
	walk = func(v reflect.Value, prefix string) {
		switch {
		case v.Kind() == reflect.Struct && v.Type() != durationType:
			for i := range v.NumField() {
				walk(v.Field(i), join(prefix, v.Type().Field(i).Tag.Get("mapstructure")))
			}
		case v.Kind() == reflect.Map:
			for _, k := range v.MapKeys() {
				walk(v.MapIndex(k), join(prefix, k.String()))
			}
		case v.Kind() == reflect.Slice:
			out[prefix] = slices.Clone(v.Interface().([]string))
		default:
			out[prefix] = v.Interface()
		}
	}
	walk(v, prefix)
	return out
}

// EnvName returns the environment variable that overrides key.
func EnvName(key string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// applyEnv sets every BROWSEROP_* variable of env on v, converted to its
// key's type. A variable that matches no key, or whose value does not
// convert, is an error. An empty value counts as unset.
func applyEnv(v *viper.Viper, env []string, leaves []leaf) []error {
	byName := make(map[string]leaf, len(leaves))
	names := make([]string, 0, len(leaves))
	for _, l := range leaves {
		byName[EnvName(l.key)] = l
		names = append(names, EnvName(l.key))
	}
	vars := envLookupMap(env)
	varNames := make([]string, 0, len(vars))
	for k := range vars {
		varNames = append(varNames, k)
	}
	sort.Strings(varNames)

	var errs []error
	for _, name := range varNames {
		if !strings.HasPrefix(name, EnvPrefix) || nonConfigEnv[name] {
			continue
		}
		l, ok := byName[name]
		if !ok {
			hint := suggest(name, names)
			if strings.HasPrefix(name, EnvPrefix+"BUDGETS_GROUPS_") {
				hint += "; new budget groups must be defined in the config file"
			}
			errs = append(errs, fmt.Errorf("config: environment variable %s matches no config key%s", name, hint))
			continue
		}
		raw := vars[name]
		if raw == "" {
			continue
		}
		val, err := parseEnvValue(raw, l.typ)
		if err != nil {
			errs = append(errs, fmt.Errorf("config: environment variable %s (%s): %w", name, l.key, err))
			continue
		}
		v.Set(l.key, val)
	}
	return errs
}

// parseEnvValue converts an environment string to a leaf's type. A list is
// either a YAML flow sequence (`["--a=1,2", "b c"]`) or whitespace-separated
// words.
func parseEnvValue(raw string, t reflect.Type) (any, error) {
	if t == durationType {
		d, err := time.ParseDuration(raw)
		if err != nil {
			return nil, fmt.Errorf("want a duration such as \"15s\" or \"24h\", got %q", raw)
		}
		return d, nil
	}
	switch t.Kind() {
	case reflect.String:
		return raw, nil
	case reflect.Bool:
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return nil, fmt.Errorf("want true or false, got %q", raw)
		}
		return b, nil
	case reflect.Int:
		n, err := strconv.Atoi(strings.TrimSpace(raw))
		if err != nil {
			return nil, fmt.Errorf("want an integer, got %q", raw)
		}
		return n, nil
	case reflect.Float64:
		f, err := strconv.ParseFloat(strings.TrimSpace(raw), 64)
		if err != nil {
			return nil, fmt.Errorf("want a number, got %q", raw)
		}
		return f, nil
	case reflect.Slice:
		if strings.HasPrefix(strings.TrimSpace(raw), "[") {
			var list []string
			if err := yaml.Unmarshal([]byte(raw), &list); err != nil {
				return nil, fmt.Errorf("want a list such as [\"a\", \"b\"]: %v", err)
			}
			if list == nil {
				list = []string{}
			}
			return list, nil
		}
		return strings.Fields(raw), nil
	}
	return nil, fmt.Errorf("unsupported type %s", t)
}

// strictHook refuses any conversion while viper decodes into Config: every
// value was typed when it was read, so a mismatch is a bug, not input to
// coerce.
func strictHook(from, to reflect.Type, data any) (any, error) {
	ok := true
	switch {
	case to == durationType:
		ok = from == durationType
	case to.Kind() == reflect.Struct, to.Kind() == reflect.Map:
		ok = from.Kind() == reflect.Map
	case to.Kind() == reflect.Slice:
		ok = from.Kind() == reflect.Slice
	case to.Kind() == reflect.Interface:
	default:
		ok = from == to
	}
	if !ok {
		return nil, fmt.Errorf("internal: %s value for a %s setting", from, to)
	}
	return data, nil
}

// fileParser checks a YAML document against the Config schema and returns
// its settings as nested maps of lowercase keys and typed values.
type fileParser struct {
	name      string
	errs      []error
	nodes     int
	groups    []string // groups the file defines
	newGroups []string // of those, groups not in DefaultConfig
}

func (p *fileParser) errorf(n *yaml.Node, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if n != nil && n.Line > 0 {
		p.errs = append(p.errs, fmt.Errorf("config: %s:%d: %s", p.name, n.Line, msg))
		return
	}
	p.errs = append(p.errs, fmt.Errorf("config: %s: %s", p.name, msg))
}

func (p *fileParser) parse(data []byte) map[string]any {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return map[string]any{}
		}
		p.errorf(nil, "malformed YAML: %v", err)
		return nil
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			p.errorf(nil, "malformed YAML: %v", err)
		} else {
			p.errorf(&extra, "more than one YAML document; put all settings in one")
		}
		return nil
	}
	root := &doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return map[string]any{}
		}
		root = root.Content[0]
	}
	out := map[string]any{}
	p.mapping(root, configType, "", out)
	return out
}

// resolve follows aliases and counts the node against maxNodes.
func (p *fileParser) resolve(n *yaml.Node) (*yaml.Node, bool) {
	for i := 0; n != nil && n.Kind == yaml.AliasNode; i++ {
		if i > 100 {
			p.errorf(n, "alias chain too long")
			return nil, false
		}
		n = n.Alias
	}
	p.nodes++
	if n == nil {
		return nil, false
	}
	if p.nodes > maxNodes {
		if p.nodes == maxNodes+1 {
			p.errorf(n, "document too large or too many alias expansions (over %d nodes)", maxNodes)
		}
		return nil, false
	}
	return n, true
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// mapping reads a mapping node for a struct or map type at path into out.
func (p *fileParser) mapping(n *yaml.Node, t reflect.Type, path string, out map[string]any) {
	n, ok := p.resolve(n)
	if !ok || isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		p.errorf(n, "%s: want a mapping of keys, got %s", displayPath(path), describe(n))
		return
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, ok := p.resolve(n.Content[i])
		if !ok {
			return
		}
		val := n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			p.errorf(k, "%s: keys must be plain names", displayPath(path))
			continue
		}
		if k.Tag == "!!merge" {
			p.errorf(k, "%s: YAML merge keys (<<) are not supported; write the keys out", displayPath(path))
			continue
		}
		name := strings.ToLower(k.Value)
		if line, dup := seen[name]; dup {
			p.errorf(k, "%s: key %q repeats the key on line %d (keys are case-insensitive)", displayPath(path), join(path, k.Value), line)
			continue
		}
		seen[name] = k.Line

		if t.Kind() == reflect.Map {
			if err := mapKeys[path](name); err != nil {
				p.errorf(k, "%s: %v", path, err)
				continue
			}
			if path == "budgets.groups" {
				p.group(name, val)
			}
			child := map[string]any{}
			p.mapping(val, t.Elem(), join(path, name), child)
			if len(child) > 0 {
				out[name] = child
			}
			continue
		}

		f, ok := fieldByKey(t, name)
		if !ok {
			p.errorf(k, "unknown key %q%s", join(path, k.Value), suggest(name, fieldKeys(t)))
			continue
		}
		key := join(path, name)
		if f.Type.Kind() == reflect.Map || (f.Type.Kind() == reflect.Struct && f.Type != durationType) {
			child := map[string]any{}
			p.mapping(val, f.Type, key, child)
			if len(child) > 0 {
				out[name] = child
			}
			continue
		}
		if v, ok := p.value(val, f.Type, key); ok {
			out[name] = v
		}
	}
}

// group records a budget group the file defines; a group that is not one
// of the defaults must set its limit, since 0 would silently mean "never".
func (p *fileParser) group(name string, val *yaml.Node) {
	p.groups = append(p.groups, name)
	if _, ok := DefaultConfig().Budgets.Groups[name]; ok {
		return
	}
	p.newGroups = append(p.newGroups, name)
	n, ok := p.resolve(val)
	if !ok || n.Kind != yaml.MappingNode {
		return // mapping reports the shape
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if strings.EqualFold(n.Content[i].Value, "limit") && !isNull(n.Content[i+1]) {
			return
		}
	}
	p.errorf(n, "budgets.groups.%s: a new group needs a limit", name)
}

// value reads a leaf of type t; ok is false for null (unset) or an error.
func (p *fileParser) value(n *yaml.Node, t reflect.Type, key string) (any, bool) {
	n, ok := p.resolve(n)
	if !ok || isNull(n) {
		return nil, false
	}
	if t.Kind() == reflect.Slice {
		if n.Kind != yaml.SequenceNode {
			p.errorf(n, "%s: want a list, got %s", key, describe(n))
			return nil, false
		}
		list := make([]string, 0, len(n.Content))
		good := true
		for i, e := range n.Content {
			e, ok := p.resolve(e)
			if !ok {
				return nil, false
			}
			if e.Kind != yaml.ScalarNode || isNull(e) {
				p.errorf(e, "%s[%d]: want a string, got %s", key, i, describe(e))
				good = false
				continue
			}
			list = append(list, e.Value)
		}
		return list, good
	}
	if n.Kind != yaml.ScalarNode {
		p.errorf(n, "%s: want a single value, got %s", key, describe(n))
		return nil, false
	}
	if t == durationType {
		if n.Tag == "!!int" && n.Value == "0" {
			return time.Duration(0), true
		}
		d, err := time.ParseDuration(n.Value)
		if err != nil || n.Tag != "!!str" {
			p.errorf(n, "%s: want a duration such as \"15s\" or \"24h\", got %q", key, n.Value)
			return nil, false
		}
		return d, true
	}
	var want string
	switch t.Kind() {
	case reflect.String:
		return n.Value, true
	case reflect.Bool:
		var b bool
		if err := n.Decode(&b); err == nil {
			return b, true
		}
		want = "true or false"
	case reflect.Int:
		var i int
		if err := n.Decode(&i); err == nil && n.Tag == "!!int" {
			return i, true
		}
		want = "an integer"
	case reflect.Float64:
		var f float64
		if err := n.Decode(&f); err == nil && (n.Tag == "!!int" || n.Tag == "!!float") {
			return f, true
		}
		want = "a number"
	default:
		panic("config: unsupported field type " + t.String())
	}
	p.errorf(n, "%s: want %s, got %q", key, want, n.Value)
	return nil, false
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	if isNull(n) {
		return "null"
	}
	return strconv.Quote(n.Value)
}

func displayPath(path string) string {
	if path == "" {
		return "top level"
	}
	return path
}

func fieldByKey(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		if f := t.Field(i); f.Tag.Get("mapstructure") == key {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func fieldKeys(t reflect.Type) []string {
	keys := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		keys = append(keys, t.Field(i).Tag.Get("mapstructure"))
	}
	return keys
}

// suggest returns `; did you mean "x"?` for the closest candidate within
// two edits, or "".
func suggest(name string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		if d := editDistance(strings.ToLower(name), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf("; did you mean %q?", best)
}

func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return math.MaxInt
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

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
	for _, name := range sortedKeys(b.Formats) {
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
	for _, name := range sortedKeys(b.Groups) {
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

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
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

// ProfileDir returns the Chrome profile directory: browser.profile_dir, or
// $XDG_STATE_HOME/browserop/profile (~/.local/state/browserop/profile). It
// returns an error when neither XDG_STATE_HOME nor HOME is set.
func (c Config) ProfileDir() (string, error) {
	return c.profileDir(os.Getenv)
}

func (c Config) profileDir(getenv func(string) string) (string, error) {
	return orStateFile(c.Browser.ProfileDir, getenv, "profile")
}

// TokenFile returns the API token file: api.token_file, or
// $XDG_STATE_HOME/browserop/token. It returns an error when neither
// XDG_STATE_HOME nor HOME is set.
func (c Config) TokenFile() (string, error) {
	return orStateFile(c.API.TokenFile, os.Getenv, "token")
}

// CalendarDir returns the content calendar directory: calendar.dir, or
// $XDG_CONFIG_HOME/browserop/calendar (~/.config/browserop/calendar). It
// returns an error when neither XDG_CONFIG_HOME nor HOME is set.
func (c Config) CalendarDir() (string, error) {
	return c.calendarDir(os.Getenv)
}

func (c Config) calendarDir(getenv func(string) string) (string, error) {
	if c.Calendar.Dir != "" {
		return c.Calendar.Dir, nil
	}
	dir, err := xdgDir(getenv, "XDG_CONFIG_HOME", ".config")
	if err != nil {
		return "", fmt.Errorf("config: locate calendar directory: %w", err)
	}
	return filepath.Join(dir, "browserop", "calendar"), nil
}

func orStateFile(set string, getenv func(string) string, name string) (string, error) {
	if set != "" {
		return set, nil
	}
	dir, err := xdgDir(getenv, "XDG_STATE_HOME", filepath.Join(".local", "state"))
	if err != nil {
		return "", fmt.Errorf("config: locate %s: %w", name, err)
	}
	return filepath.Join(dir, "browserop", name), nil
}

// xdgDir returns $variable when it is an absolute path (the XDG spec says
// to ignore relative ones), else $HOME/fallback.
func xdgDir(getenv func(string) string, variable, fallback string) (string, error) {
	if d := getenv(variable); filepath.IsAbs(d) {
		return d, nil
	}
	home := getenv("HOME")
	if !filepath.IsAbs(home) {
		return "", fmt.Errorf("neither $%s nor $HOME is set to an absolute path", variable)
	}
	return filepath.Join(home, fallback), nil
}

// envLookupMap indexes env (os.Environ form); a later entry wins.
func envLookupMap(env []string) map[string]string {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			m[k] = v
		}
	}
	return m
}

func envLookup(env []string) func(string) string {
	m := envLookupMap(env)
	return func(k string) string { return m[k] }
}
