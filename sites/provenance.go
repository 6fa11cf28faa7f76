package sites

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/browserop/browserop/kind"
)

// FieldState says who put a text field's value there: the states of the
// ledger's field provenance (docs/ledger.md, "Field provenance").
type FieldState string

// Field provenance states.
const (
	// FieldAgentFilled: browserop typed the field and read it back.
	FieldAgentFilled FieldState = "agent_filled"
	// FieldUserEdited: the field changed after browserop read it back.
	FieldUserEdited FieldState = "user_edited"
	// FieldUnknownChange: the field held a non-empty value nobody
	// recorded: a site's restored draft, autofill, a person's typing, or
	// browserop's own fill whose read-back it no longer remembers.
	FieldUnknownChange FieldState = "unknown_external_change"
)

// StopFieldNotOurs is the HardStop of a text field that holds a value
// browserop did not put there (or that changed after browserop read it
// back): nothing is typed over it and nothing is submitted, and the
// action waits for a person.
const StopFieldNotOurs HardStopKind = "field_not_ours"

// FieldLedger keeps, for one action in one tab record and inspection
// epoch, who put the value of each text field Fill types into: the
// caller's ledger (the operator's is the ledger's field provenance). A
// field is named by its fingerprint (FieldFingerprint), never by what it
// holds; values are handed over only to be compared with what browserop
// itself read back, and never stored.
type FieldLedger interface {
	// FieldOrigin returns what is known of field fp holding value: the
	// state recorded for it ("" for none), and whether value is (Ours)
	// or is not (Changed) what browserop read back there after its last
	// fill, as far as this process remembers that read-back (neither,
	// when it remembers none: a lost context).
	FieldOrigin(ctx context.Context, fp, value string) (FieldOrigin, error)
	// RecordField records state s for field fp. With FieldAgentFilled,
	// readBack is what browserop read back after typing: remembered by
	// this process, for FieldOrigin, never stored.
	RecordField(ctx context.Context, fp string, s FieldState, readBack string) error
}

// FieldOrigin is what a FieldLedger knows of a field's value.
type FieldOrigin struct {
	State   FieldState
	Ours    bool
	Changed bool
}

// FieldFingerprint names the i-th field an action of kind k fills (of
// ActionSpec.fills) by a hash of its declaration (its kind, place, frame
// and selector): the key of its provenance, which says which field and
// nothing of what it holds.
func FieldFingerprint(k kind.Kind, i int, f FillSpec) string {
	h := sha256.Sum256([]byte(strings.Join([]string{"browserop field", string(k), strconv.Itoa(i), f.Frame, f.Selector}, "\x00")))
	return hex.EncodeToString(h[:])
}

// ReadBacks remembers, in this process only, what browserop read back
// from each field it filled, as a digest keyed with a secret of its own
// (never written anywhere): enough to tell a field still holding
// browserop's own text from one a person changed since. A process that
// restarts remembers nothing, and a field it filled before is then of
// unknown origin. It holds at most max digests, forgetting the oldest
// first (a forgotten one is unknown, the safe way round). Safe for
// concurrent use.
type ReadBacks struct {
	mu     sync.Mutex
	secret [32]byte
	max    int
	m      map[string][32]byte
	order  []string
}

// NewReadBacks returns a ReadBacks holding at most n digests (at least
// one).
func NewReadBacks(n int) *ReadBacks {
	r := &ReadBacks{max: max(1, n), m: map[string][32]byte{}}
	if _, err := rand.Read(r.secret[:]); err != nil {
		panic(fmt.Sprintf("sites: read backs: no randomness: %v", err))
	}
	return r
}

func (r *ReadBacks) digest(key, value string) [32]byte {
	h := sha256.New()
	h.Write(r.secret[:])
	h.Write([]byte(key))
	h.Write([]byte{0})
	h.Write([]byte(value))
	var d [32]byte
	copy(d[:], h.Sum(nil))
	return d
}

// Remember remembers value as what was read back from the field key names.
func (r *ReadBacks) Remember(key, value string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.m[key]; !ok {
		r.order = append(r.order, key)
	}
	r.m[key] = r.digest(key, value)
	for len(r.order) > r.max {
		delete(r.m, r.order[0])
		r.order = r.order[1:]
	}
}

// Compare reports whether a read-back of the field key names is
// remembered, and whether value is that read-back.
func (r *ReadBacks) Compare(key, value string) (remembered, same bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	d, ok := r.m[key]
	if !ok {
		return false, false
	}
	return true, d == r.digest(key, value)
}

// FieldStore keeps the state of each field of one action in one tab
// record and inspection epoch, durably (the operator's is the ledger).
type FieldStore interface {
	// FieldState returns the state recorded for field fp, "" for none.
	FieldState(ctx context.Context, fp string) (FieldState, error)
	// SetFieldState records state s for field fp.
	SetFieldState(ctx context.Context, fp string, s FieldState) error
}

// TrackFields returns the FieldLedger of one action in one tab record and
// inspection epoch (scope names them: the same scope is the same action,
// tab and epoch): states in store, read-backs remembered in rb, in this
// process only.
func TrackFields(store FieldStore, rb *ReadBacks, scope string) FieldLedger {
	return trackFields{store: store, rb: rb, scope: scope}
}

type trackFields struct {
	store FieldStore
	rb    *ReadBacks
	scope string
}

func (t trackFields) key(fp string) string { return t.scope + "\x00" + fp }

// FieldOrigin: the state from the store; the value compared with the
// read-back remembered for the field.
func (t trackFields) FieldOrigin(ctx context.Context, fp, value string) (FieldOrigin, error) {
	s, err := t.store.FieldState(ctx, fp)
	if err != nil {
		return FieldOrigin{}, err
	}
	remembered, same := t.rb.Compare(t.key(fp), value)
	return FieldOrigin{State: s, Ours: s == FieldAgentFilled && remembered && same, Changed: remembered && !same}, nil
}

// RecordField: the state to the store; an agent_filled read-back
// remembered once the store has it.
func (t trackFields) RecordField(ctx context.Context, fp string, s FieldState, readBack string) error {
	if err := t.store.SetFieldState(ctx, fp, s); err != nil {
		return err
	}
	if s == FieldAgentFilled {
		t.rb.Remember(t.key(fp), readBack)
	}
	return nil
}
