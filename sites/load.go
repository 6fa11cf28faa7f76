package sites

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/browserop/browserop/internal/regularfile"
)

// ErrInvalid is wrapped by every error of Parse, Load and LoadDir about the
// content of a site file.
var ErrInvalid = errors.New("invalid site adapter")

// maxFileSize bounds a site file; adapters are small.
const maxFileSize = 1 << 20

var siteNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// Parse reads a site adapter from YAML. name is the file name or path: the
// site is named after its base name without extension ("bundled/sites/demo.yaml"
// is "demo"), and every error starts with it and names the key, for example
// "bundled/sites/demo.yaml: actions.post.submit.selector: required". Unknown
// keys are errors. The errors wrap ErrInvalid.
func Parse(name string, data []byte) (*Declarative, error) {
	site := strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	if !siteNameRE.MatchString(site) {
		return nil, fmt.Errorf("%w: %s: site name %q must be lower-case letters, digits, - and _", ErrInvalid, name, site)
	}
	if len(data) > maxFileSize {
		return nil, fmt.Errorf("%w: %s: larger than %d bytes", ErrInvalid, name, maxFileSize)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("%w: %s: %s", ErrInvalid, name, cleanYAMLError(err.Error()))
	}
	if root.Kind == 0 || (root.Kind == yaml.DocumentNode && len(root.Content) == 0) {
		return nil, fmt.Errorf("%w: %s: empty file", ErrInvalid, name)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var spec Spec
	if err := dec.Decode(&spec); err != nil {
		return nil, fmt.Errorf("%w: %s: %s", ErrInvalid, name, describeDecodeError(&root, err))
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err != io.EOF {
		return nil, fmt.Errorf("%w: %s: want one YAML document", ErrInvalid, name)
	}
	if p := spec.validate(); len(p) > 0 {
		const most = 20
		errs := make([]error, 0, most+1)
		for i, msg := range p {
			if i == most {
				errs = append(errs, fmt.Errorf("%s: and %d more problems", name, len(p)-most))
				break
			}
			errs = append(errs, fmt.Errorf("%s: %s", name, msg))
		}
		return nil, fmt.Errorf("%w: %w", ErrInvalid, errors.Join(errs...))
	}
	return newDeclarative(site, spec), nil
}

// Load reads the site adapter in the file at path; see Parse.
func Load(path string) (*Declarative, error) {
	data, err := readSiteFile(path)
	switch {
	case errors.Is(err, regularfile.ErrTooLarge):
		return nil, fmt.Errorf("%w: %s: larger than %d bytes", ErrInvalid, path, maxFileSize)
	case err != nil:
		return nil, fmt.Errorf("load site %s: %w", path, err)
	}
	return Parse(path, data)
}

// readSiteFile reads a site file without blocking on it, up to the limit
// (regularfile.ReadFile).
func readSiteFile(path string) ([]byte, error) {
	data, err := regularfile.ReadFile(path, maxFileSize)
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err // the caller names the file
	}
	return data, err
}

// LoadDir reads every *.yaml and *.yml file in dir, sorted by name. Every
// file's problems are reported together; two files naming the same site are
// an error.
func LoadDir(dir string) ([]*Declarative, error) {
	// Each file is read as Load reads it: a FIFO or a device in the
	// folder is refused at once, and no file is read past the limit.
	return loadFS(os.DirFS(dir), ".", dir, func(name string) ([]byte, error) {
		return readSiteFile(filepath.Join(dir, name))
	})
}

// LoadFS is LoadDir for the directory dir of fsys, such as the bundled
// adapters embedded in package bundled (LoadFS(bundled.Sites, "sites")).
func LoadFS(fsys fs.FS, dir string) ([]*Declarative, error) {
	return loadFS(fsys, dir, dir, func(name string) ([]byte, error) {
		return fs.ReadFile(fsys, path.Join(dir, name))
	})
}

func loadFS(fsys fs.FS, dir, shown string, read func(name string) ([]byte, error)) ([]*Declarative, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("load sites: %w", err)
	}
	var names []string
	for _, e := range entries {
		ext := path.Ext(e.Name())
		if !e.IsDir() && (ext == ".yaml" || ext == ".yml") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	var out []*Declarative
	var errs []error
	seen := map[string]string{}
	for _, n := range names {
		display := filepath.Join(shown, n)
		data, err := read(n)
		if errors.Is(err, regularfile.ErrTooLarge) {
			errs = append(errs, fmt.Errorf("%w: %s: larger than %d bytes", ErrInvalid, display, maxFileSize))
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("load site %s: %w", display, err))
			continue
		}
		d, err := Parse(display, data)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if prev, dup := seen[d.Name()]; dup {
			errs = append(errs, fmt.Errorf("%w: %s: site %q is also defined in %s", ErrInvalid, display, d.Name(), prev))
			continue
		}
		seen[d.Name()] = display
		out = append(out, d)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

var (
	lineRE         = regexp.MustCompile(`line (\d+): (.*)`)
	unknownFieldRE = regexp.MustCompile(`^field (\S+) not found in type`)
)

// describeDecodeError rewrites yaml's decode errors so that each names the
// key path: "line 7: actions.post.bogus: unknown key".
func describeDecodeError(root *yaml.Node, err error) string {
	var msgs []string
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs = te.Errors
	} else {
		msgs = []string{err.Error()}
	}
	const most = 20
	if len(msgs) > most {
		msgs = append(msgs[:most:most], fmt.Sprintf("and %d more problems", len(msgs)-most))
	}
	out := make([]string, 0, len(msgs))
	for _, m := range msgs {
		m = cleanYAMLError(m)
		sub := lineRE.FindStringSubmatch(m)
		if sub == nil {
			out = append(out, m)
			continue
		}
		line, _ := strconv.Atoi(sub[1])
		detail := sub[2]
		if f := unknownFieldRE.FindStringSubmatch(detail); f != nil {
			path := keyPath(root, line, f[1])
			out = append(out, fmt.Sprintf("line %d: %s: unknown key", line, path))
			continue
		}
		path := valuePath(root, line)
		if path == "" {
			out = append(out, fmt.Sprintf("line %d: %s", line, detail))
			continue
		}
		out = append(out, fmt.Sprintf("line %d: %s: %s", line, path, strings.ReplaceAll(detail, "sites.", "")))
	}
	return strings.Join(out, "; ")
}

func cleanYAMLError(s string) string {
	s = strings.TrimPrefix(s, "yaml: ")
	s = strings.TrimPrefix(s, "unmarshal errors:\n")
	return strings.TrimSpace(s)
}

// keyPath finds the mapping key named key on line and returns its path.
func keyPath(root *yaml.Node, line int, key string) string {
	var found string
	walk(root, "", func(path string, k, _ *yaml.Node) bool {
		if k != nil && k.Line == line && k.Value == key {
			found = path
			return true
		}
		return false
	})
	if found == "" {
		return key
	}
	return found
}

// valuePath returns the path of the first value that starts on line.
func valuePath(root *yaml.Node, line int) string {
	var found string
	walk(root, "", func(path string, k, v *yaml.Node) bool {
		if v != nil && v.Line == line && (k != nil || path != "") {
			found = path
			return true
		}
		return false
	})
	return found
}

// walk visits each mapping entry and sequence element with its path until
// visit returns true.
func walk(n *yaml.Node, path string, visit func(path string, key, value *yaml.Node) bool) bool {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			if walk(c, path, visit) {
				return true
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := k.Value
			if path != "" {
				p = path + "." + k.Value
			}
			if visit(p, k, v) || walk(v, p, visit) {
				return true
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			if visit(p, nil, c) || walk(c, p, visit) {
				return true
			}
		}
	}
	return false
}
