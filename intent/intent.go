// Package intent is what a person, an agent or the planner asks browserop
// to do: one request (a post, a reply, a thread, a like or a follow) on a
// site as an actor. A calendar entry is a request with a time and a place
// in a file (package calendar), a task's intent is a request as an agent
// submitted it (package tasks), a planner candidate is a request with a
// score. A request is checked in one place, Request.Check; the pass turns
// it into the actions it performs (a thread into one action per part).
package intent

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/browserop/browserop/internal/pubtext"
	"github.com/browserop/browserop/kind"
)

// Request is one intent. Its JSON is the wire form of the API, the MCP
// tools and the task ledger (task_intents.request): the same request
// twice is the same intent, so these names never change.
type Request struct {
	Site  string `json:"site" jsonschema:"the configured site adapter's name, e.g. demo"`
	Actor string `json:"actor" jsonschema:"the handle the site must show as signed in, with or without @"`
	Type  Type   `json:"type" jsonschema:"what to do"`
	// Target is the URL a reply answers, a like likes or a follow
	// follows; for a thread, the post its first part answers ("" for a
	// new thread).
	Target string `json:"target,omitempty" jsonschema:"the absolute URL of the object acted on: the post replied to or liked, the profile followed"`
	// Text is the post or reply text; Parts the texts of a thread.
	Text  string   `json:"text,omitempty" jsonschema:"the exact text of a post or reply"`
	Parts []string `json:"parts,omitempty" jsonschema:"the exact texts of a thread's parts, in order"`
	// Media are the images a post or reply attaches, in order;
	// PartMedia[i] those thread part i attaches (shorter than Parts when
	// the last parts take none).
	Media     []Media   `json:"media,omitempty" jsonschema:"the images a post or reply attaches, in order: files already in browserop's media directory (nothing is uploaded); at most what the site takes"`
	PartMedia [][]Media `json:"part_media,omitempty" jsonschema:"for a thread only: part_media[i] are the images part i attaches ([] for none)"`
	// Fields are the entry fields a post or reply sets (a category,
	// tags), as the site's adapter declares them.
	Fields Fields `json:"fields,omitempty" jsonschema:"for a post or reply: the entry fields the site's adapter declares (actions.KIND.entry_fields), each a text or a list of texts, e.g. {\"category\": \"News\", \"tags\": [\"go\", \"release\"]}"`
}

// Media is one image a request attaches: File, a path relative to the
// media directory (nothing is uploaded: the file must be there already),
// and its alternative text. SHA256 and Type are the file's bytes as they
// were read when the intent was accepted: a task's intent records them
// (a request that sets them is refused), and a pass performs it only
// while the file still has those bytes.
type Media struct {
	File   string `json:"file" jsonschema:"a path relative to browserop's media directory (calendar.media_dir); absolute paths and paths leading outside it are refused"`
	Alt    string `json:"alt,omitempty" jsonschema:"the image's alternative text, for people who cannot see it; strongly recommended"`
	SHA256 string `json:"sha256,omitempty" jsonschema:"set by browserop when the intent is accepted; leave it out"`
	Type   string `json:"type,omitempty" jsonschema:"set by browserop when the intent is accepted; leave it out"`
}

// Type is what a request does, as the kind of the actions it is
// performed as: a thread is kind.ThreadPart (one action per part). Its
// text form (JSON, YAML) is the word a request is written with: post,
// reply, thread, like or follow (kind.Requests). A word that names none
// is kept, so that Check reports it where the request was written.
type Type struct {
	kind.Kind
	word string // the word written, when it names no kind
}

// The types a request can have.
var (
	Post   = Type{Kind: kind.Post}
	Reply  = Type{Kind: kind.Reply}
	Thread = Type{Kind: kind.ThreadPart}
	Like   = Type{Kind: kind.Like}
	Follow = Type{Kind: kind.Follow}
)

// ParseType is the type word names; one that names none is not Known.
func ParseType(word string) Type {
	k, ok := kind.OfRequest(word)
	if !ok {
		return Type{word: word}
	}
	return Type{Kind: k}
}

// String is the word of the type: "thread" for a thread.
func (t Type) String() string {
	switch t.Kind {
	case "":
		return t.word
	case kind.ThreadPart:
		return kind.Thread
	}
	return string(t.Kind)
}

// IsThread reports whether the request is a thread.
func (t Type) IsThread() bool { return t.Kind == kind.ThreadPart }

// MarshalText writes the word of the type.
func (t Type) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText reads a type word (ParseType); any word is accepted here
// and refused by Check.
func (t *Type) UnmarshalText(b []byte) error {
	*t = ParseType(string(b))
	return nil
}

// MaxTextRunes bounds a request's text and each of its parts; sites have
// their own, lower limits.
const MaxTextRunes = 10000

// Problem is what is wrong with a request: Field names the part at fault
// by its JSON name (site, actor, type, target, text, parts, media,
// part_media, or fields.NAME for one entry field), so that a calendar can point at its line.
type Problem struct {
	Field string
	Err   error
}

func (p *Problem) Error() string { return p.Err.Error() }

func (p *Problem) Unwrap() error { return p.Err }

// Normalized is r as it is recorded and checked: trailing empty lists of
// part media dropped, and empty media lists nil. The actor is kept as
// written (a leading "@" included): it is part of the recorded request.
func (r Request) Normalized() Request {
	for len(r.PartMedia) > 0 && len(r.PartMedia[len(r.PartMedia)-1]) == 0 {
		r.PartMedia = r.PartMedia[:len(r.PartMedia)-1]
	}
	if len(r.PartMedia) == 0 {
		r.PartMedia = nil
	}
	if len(r.Media) == 0 {
		r.Media = nil
	}
	if len(r.Fields) == 0 {
		r.Fields = nil
	}
	return r
}

// Check checks what r (Normalized) asks for: a site and an actor, a known
// type, the target and texts that type takes, and which media it may
// name: a post or reply its own, a thread per part, a like or follow
// none. partMedia is the name that per-part media have where r was
// written ("part_media" in JSON, "parts" in a calendar file), used in the
// problem's text. Media files are not read here (calendar.Entry.ReadMedia).
func (r Request) Check(partMedia string) *Problem {
	fail := func(field, format string, args ...any) *Problem {
		return &Problem{Field: field, Err: fmt.Errorf(format, args...)}
	}
	t := r.Type
	switch {
	case r.Site == "":
		return fail("site", "site is required")
	case strings.TrimPrefix(r.Actor, "@") == "":
		return fail("actor", "actor is required")
	case !t.Known():
		return fail("type", "type %q is not one of %s", t, strings.Join(kind.Requests, ", "))
	}
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
	thread := t.IsThread()
	needTarget := t.Kind == kind.Reply || t.Toggles()
	switch {
	case needTarget && !isHTTPURL(r.Target):
		return fail("target", "a %s needs target: the absolute http(s) URL it acts on", t)
	case !needTarget && r.Target != "" && !thread:
		return fail("target", "a %s takes no target", t)
	case thread && r.Target != "" && !isHTTPURL(r.Target):
		return fail("target", "target %q is not an absolute http(s) URL", r.Target)
	}
	switch t.Kind {
	case kind.Post, kind.Reply:
		if err := checkText(r.Text); err != nil {
			return fail("text", "text %v", err)
		}
		if len(r.Parts) > 0 {
			return fail("parts", "a %s takes text, not parts", t)
		}
	case kind.ThreadPart:
		if r.Text != "" {
			return fail("text", "a thread takes parts, not text")
		}
		if len(r.Parts) < 2 {
			return fail("parts", "a thread needs at least 2 parts, got %d", len(r.Parts))
		}
		for i, p := range r.Parts {
			if err := checkText(p); err != nil {
				return fail("parts", "parts[%d] %v", i, err)
			}
		}
	case kind.Like, kind.Follow:
		if r.Text != "" || len(r.Parts) > 0 {
			return fail("text", "a %s takes no text", t)
		}
	}
	pm := 0
	for i, items := range r.PartMedia {
		if len(items) > 0 {
			pm = i + 1
		}
	}
	switch {
	case len(r.Media) > 0 && thread:
		return fail("media", "a thread takes media per part (%s), not media", partMedia)
	case len(r.Media) > 0 && t.Toggles():
		return fail("media", "a %s takes no media", t)
	case pm > 0 && !thread:
		return fail("part_media", "a %s takes no per-part media; only a thread does", t)
	case pm > len(r.Parts):
		return fail("part_media", "media for %d parts, the thread has %d", pm, len(r.Parts))
	}
	if len(r.Fields) > 0 {
		if t.Kind != kind.Post && t.Kind != kind.Reply {
			return fail("fields", "a %s takes no entry fields; only a post or a reply does", t)
		}
		if name, err := r.Fields.Check(); err != nil {
			field := "fields"
			if name != "" {
				field += "." + name
			}
			return fail(field, "%v", err)
		}
	}
	return nil
}

// Effects is how many side effects r makes: a thread one per part, any
// other request one.
func (r Request) Effects() int {
	if r.Type.IsThread() && len(r.Parts) > 0 {
		return len(r.Parts)
	}
	return 1
}

func isHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}
