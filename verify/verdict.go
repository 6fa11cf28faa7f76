package verify

// Outcome is the classification of an observation against an intent.
type Outcome int

// The outcomes. Ambiguous is the zero value on purpose: a Verdict nobody
// filled in proves nothing.
const (
	// Ambiguous means the observation proves neither that the effect
	// happened nor that it did not. The action must be reconciled (or
	// decided by a person) before anything is retried.
	Ambiguous Outcome = iota
	// Verified means exactly one observed item or state is this action's
	// exact result; Verdict.URL holds its canonical URL.
	Verified
	// Absent means the effect definitely did not happen: a complete view
	// after the settle time shows no exact match, or a fresh control still
	// shows the not-done state. The action may be replanned.
	Absent
	// Duplicate means two or more distinct exact results exist. It is a hard
	// stop: Verdict.URLs lists all of them for a person to resolve.
	Duplicate
)

// String returns the lowercase name of the outcome, as used in logs and the
// ledger.
func (o Outcome) String() string {
	switch o {
	case Ambiguous:
		return "ambiguous"
	case Verified:
		return "verified"
	case Absent:
		return "absent"
	case Duplicate:
		return "duplicate"
	default:
		return "unknown"
	}
}

// MarshalText encodes the outcome as its String form.
func (o Outcome) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// Verdict is the result of a classification. URL is set only for Verified;
// URLs lists the canonical URLs of every distinct exact match (all of them
// for Duplicate). Reason says why in words that never contain post text,
// handles or other observed values, so it is safe to log.
type Verdict struct {
	Outcome Outcome
	URL     string
	URLs    []string
	Reason  string
	// Settling marks an Ambiguous verdict the site alone decides: the view
	// is read inside the settle time, or inside the bound on how late the
	// site shows a submission (SurfaceWithin). A later look, with no
	// person, turns it Verified or Absent.
	Settling bool
	// Unexplained lists the items by the actor that kept a view from
	// proving absence (see Intent.Seen): the caller names them to the
	// person, who settles the action in one step. Unlike Reason, they
	// carry what the page showed.
	Unexplained []Unexplained
}
