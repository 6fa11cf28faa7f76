// Package budgets holds the limits on how many external effects browserop
// may cause: per action format (post_text, post_image, thread, reply, like,
// follow) and per group of formats (original = text + image + thread posts),
// each a count per rolling window.
//
// The package is pure policy. It decides, from counts a store hands it,
// whether one more action fits. The store (package ledger) counts verified
// usage in the window plus actions that may have happened (executing or
// ambiguous), and records usage only for verified actions, in the same
// transaction that marks them verified.
package budgets

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"
)

// The action formats a budget can limit.
const (
	PostText  = "post_text"
	PostImage = "post_image"
	Thread    = "thread"
	Reply     = "reply"
	Like      = "like"
	Follow    = "follow"
)

// Formats lists every known format, in a stable order.
var Formats = []string{PostText, PostImage, Thread, Reply, Like, Follow}

// KnownFormat reports whether f is one of Formats.
func KnownFormat(f string) bool { return slices.Contains(Formats, f) }

// ErrExhausted is returned (wrapped in *Exhausted) when one more action of
// a format would pass a limit.
var ErrExhausted = errors.New("budget exhausted")

// Limit is one count over a rolling window, applied to a set of formats.
// A format limit has Formats of one element and Name equal to it; a group
// limit is named for its group.
type Limit struct {
	Name    string
	Formats []string
	Max     int
	Window  time.Duration
}

// Applies reports whether the limit counts actions of format f.
func (l Limit) Applies(f string) bool { return slices.Contains(l.Formats, f) }

// Usage is how much of a limit is taken: Used counts verified actions in the
// window, InFlight counts actions that may have happened (executing or
// ambiguous) and so must be assumed to.
type Usage struct {
	Limit    Limit
	Used     int
	InFlight int
}

// Remaining is how many more actions fit under the limit, never below 0.
func (u Usage) Remaining() int { return max(0, u.Limit.Max-u.Used-u.InFlight) }

// Exhausted is the error for a limit that one more action would pass. It
// matches ErrExhausted with errors.Is.
type Exhausted struct {
	Usage Usage
}

func (e *Exhausted) Error() string {
	return fmt.Sprintf("budget exhausted: %s allows %d per %s, %d used and %d in flight",
		e.Usage.Limit.Name, e.Usage.Limit.Max, e.Usage.Limit.Window, e.Usage.Used, e.Usage.InFlight)
}

// Is makes errors.Is(err, ErrExhausted) true.
func (e *Exhausted) Is(target error) bool { return target == ErrExhausted }

// FormatLimit is the configured limit of one format.
type FormatLimit struct {
	Max    int
	Window time.Duration
}

// GroupLimit is the configured limit of a group of formats.
type GroupLimit struct {
	Formats []string
	Max     int
	Window  time.Duration
}

// Policy is the set of limits in force. The zero Policy limits nothing.
type Policy struct {
	limits []Limit
}

// NewPolicy builds a Policy from format and group limits. It returns an
// error naming the entry when a format is unknown, a count is negative, a
// window is not positive, a group has no formats, or a group name collides
// with a format name.
func NewPolicy(formats map[string]FormatLimit, groups map[string]GroupLimit) (Policy, error) {
	var p Policy
	var errs []error
	for _, name := range sortedKeys(formats) {
		fl := formats[name]
		if !KnownFormat(name) {
			errs = append(errs, fmt.Errorf("budgets: format %q is unknown (known: %v)", name, Formats))
			continue
		}
		if err := checkCount(name, fl.Max, fl.Window); err != nil {
			errs = append(errs, err)
			continue
		}
		p.limits = append(p.limits, Limit{Name: name, Formats: []string{name}, Max: fl.Max, Window: fl.Window})
	}
	for _, name := range sortedKeys(groups) {
		gl := groups[name]
		if KnownFormat(name) {
			errs = append(errs, fmt.Errorf("budgets: group %q has the name of a format", name))
			continue
		}
		if len(gl.Formats) == 0 {
			errs = append(errs, fmt.Errorf("budgets: group %q lists no formats", name))
			continue
		}
		bad := false
		for _, f := range gl.Formats {
			if !KnownFormat(f) {
				errs = append(errs, fmt.Errorf("budgets: group %q: format %q is unknown (known: %v)", name, f, Formats))
				bad = true
			}
		}
		if err := checkCount(name, gl.Max, gl.Window); err != nil {
			errs = append(errs, err)
			bad = true
		}
		if bad {
			continue
		}
		fs := slices.Clone(gl.Formats)
		slices.Sort(fs)
		p.limits = append(p.limits, Limit{Name: name, Formats: slices.Compact(fs), Max: gl.Max, Window: gl.Window})
	}
	if len(errs) > 0 {
		return Policy{}, errors.Join(errs...)
	}
	return p, nil
}

func checkCount(name string, n int, w time.Duration) error {
	if n < 0 {
		return fmt.Errorf("budgets: %q: limit must be >= 0, got %d", name, n)
	}
	if w <= 0 {
		return fmt.Errorf("budgets: %q: window must be positive, got %s", name, w)
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Limits returns every limit of the policy, formats first, then groups.
func (p Policy) Limits() []Limit { return slices.Clone(p.limits) }

// For returns the limits that count actions of format f. An empty format
// (an action that no budget counts, such as a navigation) has none.
func (p Policy) For(f string) []Limit {
	if f == "" {
		return nil
	}
	var out []Limit
	for _, l := range p.limits {
		if l.Applies(f) {
			out = append(out, l)
		}
	}
	return out
}

// CountFunc reports a limit's usage: verified actions within the window
// ending now, and actions in flight.
type CountFunc func(l Limit) (used, inFlight int, err error)

// Check decides whether one more action of format f fits under every limit
// that applies to it. It returns an *Exhausted error (matching
// ErrExhausted) for the first limit it would pass, or the counter's error.
func (p Policy) Check(f string, count CountFunc) error {
	for _, l := range p.For(f) {
		used, inFlight, err := count(l)
		if err != nil {
			return fmt.Errorf("count budget %s: %w", l.Name, err)
		}
		u := Usage{Limit: l, Used: used, InFlight: inFlight}
		if u.Remaining() < 1 {
			return &Exhausted{Usage: u}
		}
	}
	return nil
}
