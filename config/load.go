package config

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/viper"

	"github.com/browserop/browserop/budgets"
	"github.com/browserop/browserop/errcode"
	"github.com/browserop/browserop/internal/regularfile"
)

// maxConfigSize bounds the config file; anything larger is a mistake.
const maxConfigSize = 1 << 20

// fileEnv names the environment variable that names the configuration
// file when --config does not.
const fileEnv = "BROWSEROP_CONFIG"

// File returns the configuration file a command line names: flagPath (its
// --config), else $BROWSEROP_CONFIG of env (os.Environ form), and explicit
// is true: that file must exist. With neither, it is DefaultPath(env), which
// may be missing, and explicit is false. The error, only for a default file
// that cannot be located, is errcode.ErrConfig.
func File(flagPath string, env []string) (path string, explicit bool, err error) {
	if flagPath != "" {
		return flagPath, true, nil
	}
	if p := envLookup(env)(fileEnv); p != "" {
		return p, true, nil
	}
	p, err := DefaultPath(env)
	if err != nil {
		return "", false, fmt.Errorf("%w: %w", errcode.ErrConfig, err)
	}
	return p, false, nil
}

// Load reads the YAML file at path over Default, applies the BROWSEROP_*
// variables of env (os.Environ form; nil means none), and validates the
// result. An empty path means DefaultPath(env). A missing file means
// defaults, unless explicit is true (the path came from --config or
// $BROWSEROP_CONFIG, see File), in which case it is an error. Every error
// names the file, key or variable at fault; unknown keys in the file,
// BROWSEROP_* variables that match no key, wrongly typed values, malformed
// YAML, a path that is not a regular file and failed validation are all
// errors, joined so they can be fixed in one go. The error is
// errcode.ErrConfig ("configuration error: config: ..."), and the
// *FieldError values of a failed validation are reachable with errors.As.
func Load(path string, explicit bool, env []string) (Config, error) {
	c, err := load(path, explicit, env)
	if err != nil {
		return Config{}, fmt.Errorf("%w: %w", errcode.ErrConfig, err)
	}
	return c, nil
}

// load is Load with the problem unclassified: every error starts with
// "config: ".
func load(path string, explicit bool, env []string) (Config, error) {
	if path == "" {
		if explicit {
			return Config{}, errors.New("config: empty config file path given")
		}
		p, err := DefaultPath(env)
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
	data, err := regularfile.ReadFile(path, maxConfigSize)
	switch {
	case errors.Is(err, regularfile.ErrTooLarge):
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxConfigSize)
	case errors.Is(err, regularfile.ErrNotRegular):
		return nil, fmt.Errorf("%s: %w", path, err)
	case err != nil:
		return nil, err
	}
	return data, nil
}

// loadConfigData does Load's work on file contents already read; name
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
	def := Default()
	for key, val := range flatten(reflect.ValueOf(def), "") {
		v.SetDefault(key, val)
	}
	for _, g := range p.newGroups {
		v.SetDefault("budgets.groups."+g+".window", DefaultGroupWindow)
	}
	if err := v.MergeConfigMap(fileSettings); err != nil {
		return Config{}, fmt.Errorf("config: %s: %w", name, err)
	}

	groups := slices.Sorted(maps.Keys(def.Budgets.Groups))
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
