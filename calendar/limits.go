package calendar

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/media"
	"github.com/browserop/browserop/sites"
)

// RefuseMedia returns why site does not take the media of e under its
// limits (sites.MediaLimits of the kind each action is performed as: a
// thread's first part without a target as a post, its other parts as
// thread parts), naming the item at fault and where it was named; nil
// when it takes them.
func RefuseMedia(site sites.Adapter, e Entry) *MediaProblem {
	if !e.Type.IsThread() {
		return checkMediaLimits(site, e.Type.Kind, e.Items, e.MediaAt)
	}
	for i, items := range e.PartItems {
		pk := kind.ThreadPart
		if i == 0 && e.Target == "" {
			pk = kind.Post
		}
		var at []MediaSource
		if i < len(e.PartMediaAt) {
			at = e.PartMediaAt[i]
		}
		if mp := checkMediaLimits(site, pk, items, at); mp != nil {
			return mp
		}
	}
	return nil
}

// checkMediaIndex drops the "media[i]: " a MediaLimits error starts with:
// the problem names the item already.
var checkMediaIndex = regexp.MustCompile(`^media\[\d+\]: `)

// checkMediaLimits checks the media of one action of kind k against the
// site's limits. The item at fault is the first whose list up to it is
// refused: the first over the count, or the first of a type or size the
// site does not take.
func checkMediaLimits(site sites.Adapter, k kind.Kind, items []media.Item, at []MediaSource) *MediaProblem {
	l := site.MediaLimits(k)
	err := l.Check(items)
	if err == nil {
		return nil
	}
	i := 0
	for i < len(items)-1 && l.Check(items[:i+1]) == nil {
		i++
	}
	src := MediaSource{Place: fmt.Sprintf("media[%d]", i), File: items[i].File}
	if i < len(at) {
		src = at[i]
	}
	what := strings.ReplaceAll(string(k), "_", " ")
	return &MediaProblem{src, fmt.Sprintf("site %q does not take it on a %s: %s", site.Name(), what, checkMediaIndex.ReplaceAllString(err.Error(), ""))}
}
