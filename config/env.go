package config

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/viper"
	"go.yaml.in/yaml/v3"
)

// EnvPrefix starts every environment variable that overrides a config key:
// the key upper-cased with "." replaced by "_", e.g. BROWSEROP_LEDGER_PATH
// or BROWSEROP_BUDGETS_FORMATS_POST_TEXT_LIMIT.
const EnvPrefix = "BROWSEROP_"

// nonConfigEnv lists BROWSEROP_* variables that are not config keys, so the
// unknown-variable check leaves them alone.
var nonConfigEnv = map[string]bool{
	fileEnv:                       true,
	"BROWSEROP_CRASH_AT":          true, // operator crash points, for the torture harness
	"BROWSEROP_PAUSE_AT":          true, // operator pause points (SIGSTOP), for the tests
	"BROWSEROP_TEST_CHROME":       true, // the browser the tests use
	"BROWSEROP_MCP_INSPECTOR_DIR": true, // where the MCP Inspector test finds its npm install
}

// EnvName returns the environment variable that overrides key.
func EnvName(key string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// IsOverride reports whether the environment variable name is read as a
// config key: it starts with EnvPrefix and is none of the BROWSEROP_*
// variables that are not keys ($BROWSEROP_CONFIG and those of the tests
// and the torture harness). Load refuses one that matches no key.
func IsOverride(name string) bool {
	return strings.HasPrefix(name, EnvPrefix) && !nonConfigEnv[name]
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
		if !IsOverride(name) {
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
