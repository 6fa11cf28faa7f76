// Package calendar is the content calendar: its entries, read from YAML
// files in a folder, with the media files they name, each checked where it
// can be without a browser. A bad file or entry is one problem, never the
// end of the others.
package calendar

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/browserop/browserop/internal/pubtext"
	"github.com/browserop/browserop/internal/regularfile"
	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/media"
)

// Entry is one item of the content calendar: something to publish or do at
// a time, through a site, as an actor.
type Entry struct {
	// ID is stable across edits and unique across the calendar; it names
	// the entry's task ("calendar:ID").
	ID    string
	Site  string
	Actor string
	// Type is post, reply, thread, like or follow (kind.Requests).
	Type string
	At   time.Time
	// Text is the post or reply text; Parts the texts of a thread.
	Text  string
	Parts []string
	// Target is the URL a reply answers, a like likes or a follow follows.
	Target string
	// Media are the images a post or reply attaches, read from the media
	// directory when the calendar was loaded; PartMedia[i] those thread
	// part i attaches (shorter than Parts when the last parts take none).
	Media     []media.Item
	PartMedia [][]media.Item

	File string
	Line int
	// MediaAt[i] and PartMediaAt[i][j] say where Media[i] and
	// PartMedia[i][j] were named, for problems found after they were
	// read (a site's limits).
	MediaAt     []MediaSource
	PartMediaAt [][]MediaSource
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

// MediaRef is a media item as an entry or intent names it, not yet read.
type MediaRef struct {
	At  MediaSource
	Alt string
}

// loadMedia reads the files refs name from dir (media.Load).
func loadMedia(dir string, refs []MediaRef) ([]media.Item, []MediaSource, *MediaProblem) {
	var items []media.Item
	var at []MediaSource
	for _, ref := range refs {
		if dir == "" {
			return nil, nil, &MediaProblem{ref.At, "no media directory is configured (calendar.media_dir)"}
		}
		it, err := media.Load(dir, ref.At.File, ref.Alt)
		if err != nil {
			// Load names the file as written; the problem names it once.
			why := strings.TrimPrefix(err.Error(), fmt.Sprintf("media %q: ", ref.At.File))
			return nil, nil, &MediaProblem{ref.At, why}
		}
		items = append(items, it)
		at = append(at, ref.At)
	}
	return items, at, nil
}

// ReadMedia reads the files refs (the entry's own) and partRefs (thread
// part i's) name from dir into e.Media and e.PartMedia.
func (e *Entry) ReadMedia(dir string, refs []MediaRef, partRefs [][]MediaRef) *MediaProblem {
	var mp *MediaProblem
	if e.Media, e.MediaAt, mp = loadMedia(dir, refs); mp != nil {
		return mp
	}
	e.PartMedia, e.PartMediaAt = nil, nil
	for _, pr := range partRefs {
		items, at, mp := loadMedia(dir, pr)
		if mp != nil {
			return mp
		}
		e.PartMedia, e.PartMediaAt = append(e.PartMedia, items), append(e.PartMediaAt, at)
	}
	return nil
}

// CheckMediaShape checks which media an entry or intent of type typ may
// name: a post or reply its own (hasMedia), a thread per part (partMedia
// lists, at most one per part of parts), a like or follow none. It returns
// the key at fault with the problem.
func CheckMediaShape(typ string, hasMedia bool, partMedia, parts int, partKey string) (key string, err error) {
	switch k, _ := kind.OfRequest(typ); {
	case hasMedia && k == kind.ThreadPart:
		return "media", fmt.Errorf("a thread takes media per part (%s), not media", partKey)
	case hasMedia && k.Toggles():
		return "media", fmt.Errorf("a %s takes no media", typ)
	case partMedia > 0 && k != kind.ThreadPart:
		return partKey, fmt.Errorf("a %s takes no per-part media; only a thread does", typ)
	case partMedia > parts:
		return partKey, fmt.Errorf("media for %d parts, the thread has %d", partMedia, parts)
	}
	return "", nil
}

// MaxTextRunes bounds a calendar text; sites have their own, lower limits.
const MaxTextRunes = 10000

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
	known := map[string]bool{"id": true, "site": true, "actor": true, "type": true, "at": true, "text": true, "parts": true, "target": true, "media": true}
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
			return fail(id, n.Content[i].Line, "unknown key %q (known: id, site, actor, type, at, text, parts, target, media)", k)
		}
	}
	var y entryYAML
	if err := n.Decode(&y); err != nil {
		return fail(id, n.Line, "%s", trimYAMLError(err))
	}
	line := func(k string) int {
		if l, ok := keyLine[k]; ok {
			return l
		}
		return n.Line
	}
	e := Entry{ID: y.ID, Site: y.Site, Actor: strings.TrimPrefix(y.Actor, "@"), Type: y.Type, Text: y.Text,
		Target: y.Target, File: file, Line: n.Line}
	switch {
	case !entryIDPattern.MatchString(e.ID):
		return fail(id, line("id"), "id %q must be 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit", e.ID)
	case e.Site == "":
		return fail(id, line("site"), "site is required")
	case e.Actor == "":
		return fail(id, line("actor"), "actor is required")
	}
	at, err := time.Parse(time.RFC3339, y.At)
	if err != nil {
		return fail(id, line("at"), "at %q is not an RFC 3339 time with a zone (e.g. 2026-12-01T09:30:00+01:00)", y.At)
	}
	e.At = at
	refs, partRefs, cerr := parseContent(&e, &y)
	if cerr != nil {
		return fail(id, cerr.Line, "%s", cerr.Problem)
	}
	if key, err := e.check(); err != nil {
		return fail(id, line(key), "%v", err)
	}
	for len(partRefs) > 0 && len(partRefs[len(partRefs)-1]) == 0 {
		partRefs = partRefs[:len(partRefs)-1]
	}
	if key, err := CheckMediaShape(e.Type, len(refs) > 0, len(partRefs), len(e.Parts), "parts"); err != nil {
		return fail(id, line(key), "%v", err)
	}
	if mp := e.ReadMedia(mediaDir, refs, partRefs); mp != nil {
		return fail(id, mp.At.Line, "%v", mp)
	}
	return e, nil
}

// parseContent reads an entry's parts into e.Parts, and the media its
// parts and the entry name, not yet read.
func parseContent(e *Entry, y *entryYAML) (refs []MediaRef, partRefs [][]MediaRef, _ *Error) {
	parts, err := seqItems(&y.Parts, "parts")
	if err != nil {
		return nil, nil, err
	}
	for i, pn := range parts {
		text, refs, err := parsePart(pn, i)
		if err != nil {
			return nil, nil, err
		}
		e.Parts = append(e.Parts, text)
		partRefs = append(partRefs, refs)
	}
	items, err := seqItems(&y.Media, "media")
	if err != nil {
		return nil, nil, err
	}
	refs, err = parseMediaList(items, "media")
	return refs, partRefs, err
}

// parsePart reads thread part i: a text, or a mapping of text and media.
func parsePart(n *yaml.Node, i int) (string, []MediaRef, *Error) {
	place := fmt.Sprintf("parts[%d]", i)
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	switch n.Kind {
	case yaml.ScalarNode:
		var text string
		if err := n.Decode(&text); err != nil {
			return "", nil, &Error{Line: n.Line, Problem: place + ": " + trimYAMLError(err)}
		}
		return text, nil, nil
	case yaml.MappingNode:
	default:
		return "", nil, &Error{Line: n.Line, Problem: place + " must be a text, or a mapping of text and media"}
	}
	var text string
	var refs []MediaRef
	for j := 0; j+1 < len(n.Content); j += 2 {
		k, v := n.Content[j], n.Content[j+1]
		switch k.Value {
		case "text":
			if v.Kind != yaml.ScalarNode || v.Decode(&text) != nil {
				return "", nil, &Error{Line: v.Line, Problem: place + ".text must be a text"}
			}
		case "media":
			items, err := seqItems(v, place+".media")
			if err == nil {
				refs, err = parseMediaList(items, place+".media")
			}
			if err != nil {
				return "", nil, err
			}
		default:
			return "", nil, &Error{Line: k.Line, Problem: fmt.Sprintf("%s: unknown key %q (a part mapping has text and media)", place, k.Value)}
		}
	}
	return text, refs, nil
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
func parseMediaList(items []*yaml.Node, place string) ([]MediaRef, *Error) {
	var refs []MediaRef
	for i, n := range items {
		at := MediaSource{Place: fmt.Sprintf("%s[%d]", place, i), Line: n.Line}
		if n.Kind == yaml.AliasNode && n.Alias != nil {
			n = n.Alias
		}
		if n.Kind != yaml.MappingNode {
			return nil, &Error{Line: at.Line, Problem: at.Place + " must be a mapping of file and alt"}
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
				return nil, &Error{Line: k.Line, Problem: fmt.Sprintf("%s: unknown key %q (a media item has file and alt)", at.Place, k.Value)}
			}
			if v.Kind != yaml.ScalarNode || v.Decode(dst) != nil {
				return nil, &Error{Line: v.Line, Problem: fmt.Sprintf("%s.%s must be a text", at.Place, k.Value)}
			}
		}
		if at.File == "" {
			return nil, &Error{Line: at.Line, Problem: at.Place + ".file is required: a path relative to the media directory"}
		}
		refs = append(refs, MediaRef{At: at, Alt: alt})
	}
	return refs, nil
}

// Validate checks what an entry (or a planner candidate) asks for:
// its type, target and texts.
func (e Entry) Validate() error {
	_, err := e.check()
	return err
}

// check returns the key at fault with the problem.
func (e Entry) check() (key string, err error) {
	k, ok := kind.OfRequest(e.Type)
	if !ok {
		return "type", fmt.Errorf("type %q is not one of %s", e.Type, strings.Join(kind.Requests, ", "))
	}
	thread := k == kind.ThreadPart // a thread is performed as thread parts
	checkText := func(s string) error {
		switch {
		case strings.TrimSpace(s) == "":
			return errors.New("is empty")
		case !utf8.ValidString(s):
			return errors.New("is not valid UTF-8")
		case utf8.RuneCountInString(s) > MaxTextRunes:
			return fmt.Errorf("is longer than %d characters", MaxTextRunes)
		}
		return pubtext.Check(s, true)
	}
	needTarget := k == kind.Reply || k.Toggles()
	switch {
	case needTarget && !isHTTPURL(e.Target):
		return "target", fmt.Errorf("a %s needs target: the absolute http(s) URL it acts on", e.Type)
	case !needTarget && e.Target != "" && !thread:
		return "target", fmt.Errorf("a %s takes no target", e.Type)
	case thread && e.Target != "" && !isHTTPURL(e.Target):
		return "target", fmt.Errorf("target %q is not an absolute http(s) URL", e.Target)
	}
	switch k {
	case kind.Post, kind.Reply:
		if err := checkText(e.Text); err != nil {
			return "text", fmt.Errorf("text %v", err)
		}
		if len(e.Parts) > 0 {
			return "parts", fmt.Errorf("a %s takes text, not parts", e.Type)
		}
	case kind.ThreadPart:
		if e.Text != "" {
			return "text", errors.New("a thread takes parts, not text")
		}
		if len(e.Parts) < 2 {
			return "parts", fmt.Errorf("a thread needs at least 2 parts, got %d", len(e.Parts))
		}
		for i, p := range e.Parts {
			if err := checkText(p); err != nil {
				return "parts", fmt.Errorf("parts[%d] %v", i, err)
			}
		}
	case kind.Like, kind.Follow:
		if e.Text != "" || len(e.Parts) > 0 {
			return "text", fmt.Errorf("a %s takes no text", e.Type)
		}
	}
	return "", nil
}

func isHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
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

// Capability is the contract capability an entry type needs.
func (e Entry) Capability() string { return e.Type }
