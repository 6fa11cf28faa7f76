package intent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Fields are the named entry fields a request sets, beyond its text: a
// post's category, its tags, a page's excerpt. Which names a site takes,
// and of which type, its adapter declares (sites: actions.KIND.entry_fields);
// a request that sets one it does not declare is refused before anything
// is done. They are part of the request, so of the action's idempotency
// payload: the same text under another category is another intent.
type Fields map[string]FieldValue

// FieldValue is one entry field's value: a text, or a list of texts. Its
// JSON (and YAML) form is a string or an array of strings.
type FieldValue struct {
	// Texts holds the value's texts in order: exactly one for a text.
	Texts []string
	// IsList says the value was written as a list.
	IsList bool
}

// Text is the value of a text field.
func Text(s string) FieldValue { return FieldValue{Texts: []string{s}} }

// List is the value of a list field.
func List(items ...string) FieldValue { return FieldValue{Texts: items, IsList: true} }

// String writes the value as a person reads it: a text as itself, a list
// as its items joined by ", ".
func (v FieldValue) String() string { return strings.Join(v.Texts, ", ") }

// MarshalJSON writes a text as a JSON string, a list as an array.
func (v FieldValue) MarshalJSON() ([]byte, error) {
	if v.IsList {
		items := v.Texts
		if items == nil {
			items = []string{}
		}
		return json.Marshal(items)
	}
	if len(v.Texts) != 1 {
		return nil, fmt.Errorf("entry field: a text value holds %d texts", len(v.Texts))
	}
	return json.Marshal(v.Texts[0])
}

// UnmarshalJSON reads a JSON string (a text) or an array of strings (a
// list); anything else is an error naming what was found.
func (v *FieldValue) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*v = Text(s)
		return nil
	case len(b) > 0 && b[0] == '[':
		var items []string
		if err := json.Unmarshal(b, &items); err != nil {
			return errors.New("an entry field's list holds only texts")
		}
		*v = List(items...)
		return nil
	}
	return errors.New("an entry field is a text or a list of texts")
}

// FieldNamePattern is what an entry field's name looks like: lowercase
// letters, digits and "_", starting with a letter, at most 32 long.
var FieldNamePattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)

// Bounds of entry fields: how many a request sets, how many texts a list
// holds, and how long each text is.
const (
	MaxFields        = 16
	MaxFieldItems    = 50
	MaxFieldTextRune = 200
)

// Names are the names set, sorted.
func (f Fields) Names() []string {
	names := make([]string, 0, len(f))
	for n := range f {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Check returns why f cannot be a request's fields, naming the field at
// fault, or "" and nil. A name is FieldNamePattern; a text is not empty,
// neither starts nor ends with a space, is valid UTF-8 of at most MaxFieldTextRune characters on one line; a
// list holds 1 to MaxFieldItems distinct texts.
func (f Fields) Check() (string, error) {
	if len(f) > MaxFields {
		return "", fmt.Errorf("sets %d entry fields, at most %d", len(f), MaxFields)
	}
	for _, name := range f.Names() {
		v := f[name]
		if !FieldNamePattern.MatchString(name) {
			return name, fmt.Errorf("entry field name %q must be lowercase letters, digits and _, starting with a letter (at most 32)", name)
		}
		switch {
		case v.IsList && len(v.Texts) == 0:
			return name, fmt.Errorf("entry field %s is an empty list: leave it out to set nothing", name)
		case v.IsList && len(v.Texts) > MaxFieldItems:
			return name, fmt.Errorf("entry field %s lists %d texts, at most %d", name, len(v.Texts), MaxFieldItems)
		case !v.IsList && len(v.Texts) != 1:
			return name, fmt.Errorf("entry field %s is not one text", name)
		}
		for i, s := range v.Texts {
			where := name
			if v.IsList {
				where = fmt.Sprintf("%s[%d]", name, i)
			}
			switch {
			case strings.TrimSpace(s) == "":
				return name, fmt.Errorf("entry field %s is empty", where)
			case strings.TrimSpace(s) != s:
				// Exact, as a text is: "News " would be another intent
				// than "News", and a page shows neither space.
				return name, fmt.Errorf("entry field %s starts or ends with a space", where)
			case !utf8.ValidString(s):
				return name, fmt.Errorf("entry field %s is not valid UTF-8", where)
			case utf8.RuneCountInString(s) > MaxFieldTextRune:
				return name, fmt.Errorf("entry field %s is longer than %d characters", where, MaxFieldTextRune)
			case strings.ContainsFunc(s, unicode.IsControl) || strings.ContainsAny(s, "\u2028\u2029"):
				return name, fmt.Errorf("entry field %s holds a line break or a control character", where)
			}
			if v.IsList && slices.Contains(v.Texts[:i], s) {
				return name, fmt.Errorf("entry field %s lists %q twice", name, s)
			}
		}
	}
	return "", nil
}
