package ledger

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// CanonicalJSON re-encodes a JSON value canonically: object keys sorted,
// no insignificant whitespace, strings as UTF-8 (no \u escapes for
// non-ASCII, no HTML escaping), numbers exactly as written. Two documents
// that differ only in key order or spacing have the same canonical form.
func CanonicalJSON(raw []byte) ([]byte, error) {
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
