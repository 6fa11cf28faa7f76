package verify

import (
	"errors"
	"fmt"
)

// ErrThreadCorrupt is returned (wrapped) by NextThreadPart when the stored
// parts of a thread contradict each other, so no part may be published
// until a person looks.
var ErrThreadCorrupt = errors.New("thread state is corrupt")

// Part is the stored state of one part of a thread, in thread order.
type Part struct {
	// Verified reports whether the part has been published and verified.
	Verified bool
	// URL is the part's verified canonical URL; required when Verified.
	URL string
	// Parent is the parent recorded for the part. For part 0 it is the
	// thread's root target ("" for a new top-level thread). For a later
	// part it may be empty (not yet known) and otherwise must equal the
	// previous part's URL.
	Parent string
}

// NextThreadPart returns the first unverified part of a thread and the
// parent it must be published under: the previous part's verified URL, or
// part 0's Parent (the thread's root target) for the first part. When every
// part is verified it returns len(parts) and "". It returns an error
// wrapping ErrThreadCorrupt when parts is empty, a verified part has no URL,
// two verified parts share a URL, a recorded parent disagrees with the
// previous part's URL, or a part is verified after an unverified one.
func NextThreadPart(parts []Part) (index int, expectedParent string, err error) {
	if len(parts) == 0 {
		return 0, "", fmt.Errorf("%w: thread has no parts", ErrThreadCorrupt)
	}
	next := len(parts)
	for i, p := range parts {
		if !p.Verified {
			next = i
			break
		}
	}
	seen := make(map[string]int, next)
	for i := 0; i < next; i++ {
		u := NormalizeURL(parts[i].URL)
		if u == "" {
			return 0, "", fmt.Errorf("%w: part %d is verified without a URL", ErrThreadCorrupt, i)
		}
		if j, dup := seen[u]; dup {
			return 0, "", fmt.Errorf("%w: parts %d and %d have the same URL", ErrThreadCorrupt, j, i)
		}
		seen[u] = i
	}
	for i := next + 1; i < len(parts); i++ {
		if parts[i].Verified {
			return 0, "", fmt.Errorf("%w: part %d is verified but part %d is not", ErrThreadCorrupt, i, next)
		}
	}
	for i := 1; i <= next && i < len(parts); i++ {
		if parts[i].Parent != "" && NormalizeURL(parts[i].Parent) != NormalizeURL(parts[i-1].URL) {
			return 0, "", fmt.Errorf("%w: part %d's recorded parent is not part %d's URL", ErrThreadCorrupt, i, i-1)
		}
	}
	switch {
	case next == len(parts):
		return next, "", nil
	case next == 0:
		return 0, parts[0].Parent, nil
	default:
		return next, parts[next-1].URL, nil
	}
}
