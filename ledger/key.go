package ledger

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/browserop/browserop/intent"
)

// CanonicalJSON re-encodes a JSON value canonically: object keys sorted,
// no insignificant whitespace, strings as UTF-8 (no \u escapes for
// non-ASCII, no HTML escaping), numbers exactly as written. Two documents
// that differ only in key order or spacing have the same canonical form.
//
// It refuses, rather than silently rewriting, what would make two different
// documents one: invalid UTF-8, an escaped lone surrogate (which a decoder
// turns into U+FFFD), and an object with a key twice.
func CanonicalJSON(raw []byte) ([]byte, error) {
	if !utf8.Valid(raw) {
		return nil, fmt.Errorf("canonical json: not valid UTF-8")
	}
	if err := checkSurrogates(raw); err != nil {
		return nil, fmt.Errorf("canonical json: %w", err)
	}
	if err := checkDuplicateKeys(raw); err != nil {
		return nil, fmt.Errorf("canonical json: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("canonical json: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("canonical json: trailing data after the value")
	}
	return encodeCanonical(v)
}

// Canonicalize encodes any Go value as canonical JSON (see CanonicalJSON).
func Canonicalize(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("canonical json: %w", err)
	}
	return CanonicalJSON(raw)
}

func encodeCanonical(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	// encoding/json sorts map keys and writes no insignificant spaces.
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("canonical json: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// IdempotencyKey returns the lowercase hex SHA-256 of the canonical JSON of
// {"action_type", "actor", "target_url", "payload"}. payload must be a JSON
// document (an object for every action browserop makes). It is the only
// way the ledger derives an action's key.
func IdempotencyKey(actionType, actor, targetURL string, payload json.RawMessage) (string, error) {
	if !json.Valid(payload) {
		return "", fmt.Errorf("idempotency key: payload is not valid JSON")
	}
	for _, s := range []string{actionType, actor, targetURL} {
		if !utf8.ValidString(s) {
			return "", fmt.Errorf("idempotency key: %q is not valid UTF-8", s)
		}
	}
	doc, err := json.Marshal(struct {
		ActionType string          `json:"action_type"`
		Actor      string          `json:"actor"`
		TargetURL  string          `json:"target_url"`
		Payload    json.RawMessage `json:"payload"`
	}{actionType, actor, targetURL, payload})
	if err != nil {
		return "", fmt.Errorf("idempotency key: %w", err)
	}
	canon, err := CanonicalJSON(doc)
	if err != nil {
		return "", fmt.Errorf("idempotency key: %w", err)
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:]), nil
}

// Payload is the payload of every action the operator records, as stored
// in Intent.Payload and hashed into the action's idempotency key. Its JSON
// names and omissions are part of every key: changing one would re-key the
// actions already recorded, so the golden vectors in
// testdata/payload_keys.json (computed independently) pin them.
type Payload struct {
	// Intent names whose intent the action serves ("calendar:ID",
	// "task:ID", "planner:HASH"), so that two entries with the same text
	// are two intents, not one.
	Intent string `json:"intent"`
	// Text is the exact text of a post, reply or thread part.
	Text string `json:"text,omitempty"`
	// Parent is the item a reply or thread part answers.
	Parent string `json:"parent,omitempty"`
	// Thread and Position place a thread part in its thread (Position
	// from 0, so it is a pointer: part 0 still names its place).
	Thread   string `json:"thread,omitempty"`
	Position *int   `json:"position,omitempty"`
	// Media lists the attached media items in order, each by the SHA-256
	// of its bytes, its type and its alt text: an image changed after
	// the action was reserved is another intent, as an edited text is.
	Media []PayloadMedia `json:"media,omitempty"`
	// Fields are the entry fields the action sets (a category, tags), by
	// name: absent when it sets none, so that the payloads, and keys, of
	// actions without any are what they always were.
	Fields intent.Fields `json:"fields,omitempty"`
}

// PayloadMedia is one attached media item in a Payload.
type PayloadMedia struct {
	SHA256 string `json:"sha256"`
	Type   string `json:"type"`
	Alt    string `json:"alt"`
}

// JSON returns the payload as stored in Intent.Payload.
func (p Payload) JSON() json.RawMessage {
	raw, _ := json.Marshal(p) // strings and ints: it cannot fail
	return raw
}

// ParsePayload decodes a stored payload. It returns an error, naming the
// payload, for one that is not JSON of Payload's shape; unknown fields are
// ignored and null is the zero Payload (stored rows are read as they are).
func ParsePayload(raw json.RawMessage) (Payload, error) {
	var p Payload
	if err := json.Unmarshal(raw, &p); err != nil {
		return Payload{}, fmt.Errorf("payload: %w", err)
	}
	return p, nil
}

// checkSurrogates refuses \uD800-\uDFFF escapes that are not a high
// surrogate followed by a low one.
func checkSurrogates(raw []byte) error {
	for i := 0; i+5 < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		if raw[i+1] != 'u' {
			i++ // skip the escaped character, which may be a backslash
			continue
		}
		r, ok := hex4(raw[i+2:])
		if !ok || !utf16.IsSurrogate(r) {
			i += 5
			continue
		}
		if r >= 0xDC00 || i+11 >= len(raw) || raw[i+6] != '\\' || raw[i+7] != 'u' {
			return fmt.Errorf("an escaped lone surrogate at byte %d", i)
		}
		if lo, ok := hex4(raw[i+8:]); !ok || lo < 0xDC00 || lo > 0xDFFF {
			return fmt.Errorf("an escaped lone surrogate at byte %d", i)
		}
		i += 11
	}
	return nil
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// checkDuplicateKeys refuses an object that names a key twice.
func checkDuplicateKeys(raw []byte) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	type frame struct {
		object bool
		keys   map[string]bool
		expect bool // next string token in an object is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.expect {
			if key, ok := tok.(string); ok {
				if top.keys[key] {
					return fmt.Errorf("key %q appears twice in one object", key)
				}
				top.keys[key] = true
				top.expect = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			if top != nil && top.object {
				top.expect = true
			}
			stack = append(stack, &frame{object: true, keys: map[string]bool{}, expect: true})
			continue
		case json.Delim('['):
			if top != nil && top.object {
				top.expect = true
			}
			stack = append(stack, &frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			continue
		}
		if top != nil && top.object {
			top.expect = true // a value was read; a key comes next
		}
	}
}
