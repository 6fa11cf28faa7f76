package sites

import (
	"slices"
	"testing"
)

// A link is rewritten when the canonical rule changed more than how
// verify compares URLs: a dropped fragment, query parameter or path part,
// never the host's case.
func TestItemRewritten(t *testing.T) {
	for _, c := range []struct {
		raw, link string
		want      bool
	}{
		{"http://h/p/12", "http://h/p/12", false},
		{"HTTP://H/p/12", "http://h/p/12", false},
		{"http://h/p/12", "http://h/p", true},
		{"http://h/post?id=12", "http://h/post", true},
		{"http://h/?p=7#comment-3", "http://h/?p=7", true},
		{"http://h/?p=7&utm_source=x", "http://h/?p=7", true},
		{"", "http://h/p", false},
		{"http://h/p/12", "", false},
	} {
		if got := (Item{Link: c.link, RawLink: c.raw}).Rewritten(); got != c.want {
			t.Errorf("raw %q, link %q: rewritten %v, want %v", c.raw, c.link, got, c.want)
		}
	}
}

// Two items under one canonical link are marked unusable when they differ
// in what they say, and also when they are identical twins the page
// linked apart (a repost of the same text under a rule that drops the
// id): otherwise the baseline would call the new twin the old one. The
// same item read twice (it moved to the next page during the walk) keeps
// its link.
func TestMarkMergedLinks(t *testing.T) {
	twin := func(raw string) Item {
		return Item{Link: "http://h/p", RawLink: raw, Author: "alice", Text: "same"}
	}
	items := []Item{twin("http://h/p/1"), twin("http://h/p/2"), {Link: "http://h/p/9", RawLink: "http://h/p/9", Author: "bob", Text: "other"}}
	markMergedLinks(items)
	for i, it := range items[:2] {
		if !slices.Contains(it.Problems, problemMergedLink) {
			t.Errorf("twin %d linked apart keeps its merged link: %+v", i, it)
		}
	}
	if !items[2].OK() {
		t.Errorf("an item with a link of its own is marked: %+v", items[2])
	}

	again := []Item{twin("http://h/p/1"), twin("http://h/p/1")}
	markMergedLinks(again)
	for i, it := range again {
		if !it.OK() {
			t.Errorf("the same item read twice is marked (%d): %+v", i, it)
		}
	}

	differ := []Item{twin("http://h/p/1"), {Link: "http://h/p", RawLink: "http://h/p/1", Author: "alice", Text: "another text"}}
	markMergedLinks(differ)
	for i, it := range differ {
		if it.OK() {
			t.Errorf("items that differ under one link are not marked (%d): %+v", i, it)
		}
	}
}
