package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// maxNodes bounds the YAML nodes visited, aliases expanded, so an alias bomb
// is an error rather than a hang.
const maxNodes = 100_000

// fileParser checks a YAML document against the Config schema and returns
// its settings as nested maps of lowercase keys and typed values.
type fileParser struct {
	name      string
	errs      []error
	nodes     int
	groups    []string // groups the file defines
	newGroups []string // of those, groups not in Default
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
	if _, ok := Default().Budgets.Groups[name]; ok {
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
