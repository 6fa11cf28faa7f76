// Package calendar is the content calendar: its entries, read from YAML
// files in a folder, with the media files they name, each checked where it
// can be without a browser. A bad file or entry is one problem, never the
// end of the others.
package calendar

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/browserop/browserop/intent"
	"github.com/browserop/browserop/internal/regularfile"
	"github.com/browserop/browserop/media"
)

// Entry is one item of the content calendar: a request (something to
// publish or do, through a site, as an actor) at a time, at a place in a
// calendar file.
type Entry struct {
	intent.Request
	// ID is stable across edits and unique across the calendar; it names
	// the entry's task ("calendar:ID").
	ID string
	At time.Time

	File string
	Line int
	// Items are the files Request.Media names, read from the media
	// directory when the entry was loaded (ReadMedia); PartItems[i] those
	// thread part i attaches (shorter than Parts when the last parts take
	// none).
	Items     []media.Item
	PartItems [][]media.Item
	// MediaAt[i] and PartMediaAt[i][j] say where Request.Media[i] and
	// Request.PartMedia[i][j] were named, for problems found when they
	// are read or after (a site's limits).
	MediaAt     []MediaSource
	PartMediaAt [][]MediaSource
	// FieldsAt[NAME] is the line of the calendar file where the entry
	// field NAME was set (none for an agent's intent).
	FieldsAt map[string]int
}

// MediaSource is where a media item was named: its place in the entry
// or intent ("media[0]", "parts[1].media[0]"), the file as written, and
// the line of the calendar file (0 for an agent's intent).
type MediaSource struct {
	Place, File string
	Line        int
}

// MediaProblem is why a media item cannot be used, and where it was named.
type MediaProblem struct {
	At  MediaSource
	Why string
}

func (p *MediaProblem) Error() string { return fmt.Sprintf("%s %q: %s", p.At.Place, p.At.File, p.Why) }

// loadMedia reads the files refs name from dir (media.Load); at[i] is
// where refs[i] was named.
func loadMedia(dir string, refs []intent.Media, at []MediaSource) ([]media.Item, *MediaProblem) {
	var items []media.Item
	for i, ref := range refs {
		src := MediaSource{Place: fmt.Sprintf("media[%d]", i), File: ref.File}
		if i < len(at) {
			src = at[i]
		}
		if dir == "" {
			return nil, &MediaProblem{src, "no media directory is configured (calendar.media_dir)"}
		}
		it, err := media.Load(dir, ref.File, ref.Alt)
		if err != nil {
			// Load names the file as written; the problem names it once.
			why := strings.TrimPrefix(err.Error(), fmt.Sprintf("media %q: ", ref.File))
			return nil, &MediaProblem{src, why}
		}
		items = append(items, it)
	}
	return items, nil
}

// ReadMedia reads the files the entry's request names (its own media and
// each part's) from dir into e.Items and e.PartItems.
func (e *Entry) ReadMedia(dir string) *MediaProblem {
	var mp *MediaProblem
	if e.Items, mp = loadMedia(dir, e.Media, e.MediaAt); mp != nil {
		return mp
	}
	e.PartItems = nil
	for p, refs := range e.PartMedia {
		var at []MediaSource
		if p < len(e.PartMediaAt) {
			at = e.PartMediaAt[p]
		}
		items, mp := loadMedia(dir, refs, at)
		if mp != nil {
			return mp
		}
		e.PartItems = append(e.PartItems, items)
	}
	return nil
}

// MaxFile bounds a calendar file, as adapter files are bounded: a
// larger file (or a link to a device) is that file's problem, never read
// whole.
const MaxFile = 1 << 20

// Error is one problem in a calendar file, with where it is.
type Error struct {
	File    string
	Line    int
	EntryID string
	Problem string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("calendar: ")
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.EntryID != "" {
		fmt.Fprintf(&b, ": entry %q", e.EntryID)
	}
	b.WriteString(": ")
	b.WriteString(e.Problem)
	return b.String()
}

// Calendar is what was read from the calendar directory: the valid
// entries, and a problem for each file or entry that could not be used.
type Calendar struct {
	Entries  []Entry
	Problems []*Error
}

var entryIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// Load reads every *.yaml and *.yml file of dir (not recursively),
// in name order, and the media files its entries name from mediaDir (""
// means dir). A file that does not parse is one problem and contributes
// nothing; an invalid entry, one whose media file cannot be read, is one
// problem and the file's other entries still count. An ID used twice is a
// problem for every use after the first. A missing directory is an empty
// calendar.
func Load(dir, mediaDir string) (Calendar, error) {
	if mediaDir == "" {
		mediaDir = dir
	}
	var cal Calendar
	des, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return cal, nil
	}
	if err != nil {
		return cal, fmt.Errorf("calendar: read %s: %w", dir, err)
	}
	var names []string
	for _, de := range des {
		ext := strings.ToLower(filepath.Ext(de.Name()))
		if !de.IsDir() && (ext == ".yaml" || ext == ".yml") {
			names = append(names, de.Name())
		}
	}
	sort.Strings(names)
	seen := map[string]string{}
	for _, name := range names {
		path := filepath.Join(dir, name)
		// Read without blocking and bounded: a FIFO or a link to a
		// device in the folder is one file's problem, not a hung pass.
		data, err := regularfile.ReadFile(path, MaxFile)
		if err != nil {
			cal.Problems = append(cal.Problems, &Error{File: path, Problem: err.Error()})
			continue
		}
		entries, problems := Parse(path, data, mediaDir)
		cal.Problems = append(cal.Problems, problems...)
		for _, e := range entries {
			if first, dup := seen[e.ID]; dup {
				cal.Problems = append(cal.Problems, &Error{File: e.File, Line: e.Line, EntryID: e.ID,
					Problem: "id is already used in " + first + "; ids must be unique"})
				continue
			}
			seen[e.ID] = fmt.Sprintf("%s:%d", e.File, e.Line)
			cal.Entries = append(cal.Entries, e)
		}
	}
	return cal, nil
}

// calendarFile is the shape of a calendar file.
type calendarFile struct {
	Entries []yaml.Node `yaml:"entries"`
}

type entryYAML struct {
	ID     string    `yaml:"id"`
	Site   string    `yaml:"site"`
	Actor  string    `yaml:"actor"`
	Type   string    `yaml:"type"`
	At     string    `yaml:"at"`
	Text   string    `yaml:"text"`
	Parts  yaml.Node `yaml:"parts"`
	Target string    `yaml:"target"`
	Media  yaml.Node `yaml:"media"`
	Fields yaml.Node `yaml:"fields"`
}

// Parse parses one calendar file. name is used in problems. The
// media files entries name are read from mediaDir (media.Load): an entry
// whose file is outside it, missing, unreadable or not an image is a
// problem at the line of its media item.
func Parse(name string, data []byte, mediaDir string) ([]Entry, []*Error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, []*Error{{File: name, Line: yamlErrorLine(err), Problem: "not valid YAML: " + trimYAMLError(err)}}
	}
	if len(root.Content) == 0 {
		return nil, nil // an empty file
	}
	var f calendarFile
	dec := root.Content[0]
	if dec.Kind != yaml.MappingNode {
		return nil, []*Error{{File: name, Line: dec.Line, Problem: "the file must be a mapping with an 'entries' list"}}
	}
	for i := 0; i+1 < len(dec.Content); i += 2 {
		if k := dec.Content[i].Value; k != "entries" {
			return nil, []*Error{{File: name, Line: dec.Content[i].Line, Problem: fmt.Sprintf("unknown key %q (the file has only 'entries')", k)}}
		}
	}
	if err := dec.Decode(&f); err != nil {
		return nil, []*Error{{File: name, Line: dec.Line, Problem: "'entries' must be a list of entries: " + trimYAMLError(err)}}
	}
	var out []Entry
	var problems []*Error
	for i := range f.Entries {
		n := &f.Entries[i]
		e, err := parseEntry(name, n, mediaDir)
		if err != nil {
			problems = append(problems, err)
			continue
		}
		out = append(out, e)
	}
	return out, problems
}

func parseEntry(file string, n *yaml.Node, mediaDir string) (Entry, *Error) {
	fail := func(id string, line int, format string, args ...any) (Entry, *Error) {
		return Entry{}, &Error{File: file, Line: line, EntryID: id, Problem: fmt.Sprintf(format, args...)}
	}
	if n.Kind != yaml.MappingNode {
		return fail("", n.Line, "an entry must be a mapping")
	}
	keyLine := map[string]int{}
	known := map[string]bool{"id": true, "site": true, "actor": true, "type": true, "at": true, "text": true, "parts": true, "target": true, "media": true, "fields": true}
	var id string
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i].Value
		keyLine[k] = n.Content[i].Line
		if k == "id" {
			id = n.Content[i+1].Value
		}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i].Value; !known[k] {
			return fail(id, n.Content[i].Line, "unknown key %q (known: id, site, actor, type, at, text, parts, target, media, fields)", k)
		}
	}
	var y entryYAML
	if err := n.Decode(&y); err != nil {
		return fail(id, n.Line, "%s", trimYAMLError(err))
	}
	e := Entry{Request: intent.Request{Site: y.Site, Actor: strings.TrimPrefix(y.Actor, "@"), Type: intent.ParseType(y.Type), Text: y.Text, Target: y.Target},
		ID: y.ID, File: file, Line: n.Line}
	line := func(k string) int {
		if name, ok := strings.CutPrefix(k, "fields."); ok {
			if l, ok := e.FieldsAt[name]; ok {
				return l
			}
			k = "fields"
		}
		if l, ok := keyLine[k]; ok {
			return l
		}
		return n.Line
	}
	if !entryIDPattern.MatchString(e.ID) {
		return fail(id, line("id"), "id %q must be 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit", e.ID)
	}
	if cerr := parseContent(&e, &y); cerr != nil {
		return fail(id, cerr.Line, "%s", cerr.Problem)
	}
	if cerr := parseFields(&e, &y.Fields); cerr != nil {
		return fail(id, cerr.Line, "%s", cerr.Problem)
	}
	e.Request = e.Request.Normalized()
	e.PartMediaAt = e.PartMediaAt[:len(e.PartMedia)]
	if p := e.Check("parts"); p != nil {
		field := p.Field
		if field == "part_media" {
			field = "parts" // a part's media are written in its item of parts
		}
		return fail(id, line(field), "%v", p)
	}
	at, err := time.Parse(time.RFC3339, y.At)
	if err != nil {
		return fail(id, line("at"), "at %q is not an RFC 3339 time with a zone (e.g. 2026-12-01T09:30:00+01:00)", y.At)
	}
	e.At = at
	if mp := e.ReadMedia(mediaDir); mp != nil {
		return fail(id, mp.At.Line, "%v", mp)
	}
	return e, nil
}

// parseContent reads an entry's parts into e.Parts, and the media its
// parts and the entry name into e.Media and e.PartMedia, with where each
// was named (e.MediaAt, e.PartMediaAt), not yet read.
func parseContent(e *Entry, y *entryYAML) *Error {
	parts, err := seqItems(&y.Parts, "parts")
	if err != nil {
		return err
	}
	for i, pn := range parts {
		text, refs, at, err := parsePart(pn, i)
		if err != nil {
			return err
		}
		e.Parts = append(e.Parts, text)
		e.PartMedia, e.PartMediaAt = append(e.PartMedia, refs), append(e.PartMediaAt, at)
	}
	items, err := seqItems(&y.Media, "media")
	if err != nil {
		return err
	}
	e.Media, e.MediaAt, err = parseMediaList(items, "media")
	return err
}

// parseFields reads an entry's fields: a mapping of names to a text or a
// list of texts, into e.Fields, with the line of each (e.FieldsAt).
func parseFields(e *Entry, n *yaml.Node) *Error {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	switch {
	case n.Kind == 0 || n.Kind == yaml.ScalarNode && n.Tag == "!!null":
		return nil
	case n.Kind != yaml.MappingNode:
		return &Error{Line: n.Line, Problem: "fields must be a mapping of entry field names to a text or a list of texts"}
	}
	e.Fields, e.FieldsAt = intent.Fields{}, map[string]int{}
	for j := 0; j+1 < len(n.Content); j += 2 {
		k, v := n.Content[j], n.Content[j+1]
		name := k.Value
		if _, dup := e.Fields[name]; dup {
			return &Error{Line: k.Line, Problem: fmt.Sprintf("fields: %s is set twice", name)}
		}
		if v.Kind == yaml.AliasNode && v.Alias != nil {
			v = v.Alias
		}
		switch v.Kind {
		case yaml.ScalarNode:
			var s string
			if v.Tag == "!!null" || v.Decode(&s) != nil {
				return &Error{Line: v.Line, Problem: fmt.Sprintf("fields.%s must be a text or a list of texts", name)}
			}
			e.Fields[name] = intent.Text(s)
		case yaml.SequenceNode:
			items := []string{}
			for _, it := range v.Content {
				var s string
				if it.Kind != yaml.ScalarNode || it.Tag == "!!null" || it.Decode(&s) != nil {
					return &Error{Line: it.Line, Problem: fmt.Sprintf("fields.%s: each item is a text", name)}
				}
				items = append(items, s)
			}
			e.Fields[name] = intent.List(items...)
		default:
			return &Error{Line: v.Line, Problem: fmt.Sprintf("fields.%s must be a text or a list of texts", name)}
		}
		e.FieldsAt[name] = k.Line
	}
	return nil
}

// parsePart reads thread part i: a text, or a mapping of text and media.
func parsePart(n *yaml.Node, i int) (string, []intent.Media, []MediaSource, *Error) {
	place := fmt.Sprintf("parts[%d]", i)
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	switch n.Kind {
	case yaml.ScalarNode:
		var text string
		if err := n.Decode(&text); err != nil {
			return "", nil, nil, &Error{Line: n.Line, Problem: place + ": " + trimYAMLError(err)}
		}
		return text, nil, nil, nil
	case yaml.MappingNode:
	default:
		return "", nil, nil, &Error{Line: n.Line, Problem: place + " must be a text, or a mapping of text and media"}
	}
	var text string
	var refs []intent.Media
	var at []MediaSource
	for j := 0; j+1 < len(n.Content); j += 2 {
		k, v := n.Content[j], n.Content[j+1]
		switch k.Value {
		case "text":
			if v.Kind != yaml.ScalarNode || v.Decode(&text) != nil {
				return "", nil, nil, &Error{Line: v.Line, Problem: place + ".text must be a text"}
			}
		case "media":
			items, err := seqItems(v, place+".media")
			if err == nil {
				refs, at, err = parseMediaList(items, place+".media")
			}
			if err != nil {
				return "", nil, nil, err
			}
		default:
			return "", nil, nil, &Error{Line: k.Line, Problem: fmt.Sprintf("%s: unknown key %q (a part mapping has text and media)", place, k.Value)}
		}
	}
	return text, refs, at, nil
}

// seqItems returns the items of a list node; absent or null, none.
func seqItems(n *yaml.Node, place string) ([]*yaml.Node, *Error) {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	switch {
	case n.Kind == 0 || n.Kind == yaml.ScalarNode && n.Tag == "!!null":
		return nil, nil
	case n.Kind != yaml.SequenceNode:
		return nil, &Error{Line: n.Line, Problem: place + " must be a list"}
	}
	return n.Content, nil
}

// parseMediaList reads a list of media items, each a mapping of file and
// alt; place names the list in problems ("media", "parts[1].media").
func parseMediaList(items []*yaml.Node, place string) ([]intent.Media, []MediaSource, *Error) {
	var refs []intent.Media
	var ats []MediaSource
	for i, n := range items {
		at := MediaSource{Place: fmt.Sprintf("%s[%d]", place, i), Line: n.Line}
		if n.Kind == yaml.AliasNode && n.Alias != nil {
			n = n.Alias
		}
		if n.Kind != yaml.MappingNode {
			return nil, nil, &Error{Line: at.Line, Problem: at.Place + " must be a mapping of file and alt"}
		}
		var alt string
		for j := 0; j+1 < len(n.Content); j += 2 {
			k, v := n.Content[j], n.Content[j+1]
			var dst *string
			switch k.Value {
			case "file":
				dst = &at.File
			case "alt":
				dst = &alt
			default:
				return nil, nil, &Error{Line: k.Line, Problem: fmt.Sprintf("%s: unknown key %q (a media item has file and alt)", at.Place, k.Value)}
			}
			if v.Kind != yaml.ScalarNode || v.Decode(dst) != nil {
				return nil, nil, &Error{Line: v.Line, Problem: fmt.Sprintf("%s.%s must be a text", at.Place, k.Value)}
			}
		}
		if at.File == "" {
			return nil, nil, &Error{Line: at.Line, Problem: at.Place + ".file is required: a path relative to the media directory"}
		}
		refs, ats = append(refs, intent.Media{File: at.File, Alt: alt}), append(ats, at)
	}
	return refs, ats, nil
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

func yamlErrorLine(err error) int {
	m := yamlLine.FindStringSubmatch(err.Error())
	if m == nil {
		return 0
	}
	var n int
	fmt.Sscan(m[1], &n)
	return n
}

func trimYAMLError(err error) string {
	return strings.TrimPrefix(strings.TrimPrefix(err.Error(), "yaml: "), "unmarshal errors:\n  ")
}
