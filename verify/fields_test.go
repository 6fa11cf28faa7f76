package verify_test

import (
	"testing"

	"github.com/browserop/browserop/verify"
)

// fieldsIntent is postIntent filed under a category with two tags.
func fieldsIntent() verify.Intent {
	in := postIntent()
	in.Fields = map[string][]string{"category": {"News"}, "tags": {"go", "release"}}
	return in
}

// TestClassifyEntryFields: an item that shows the intended entry fields,
// in any order, is the result; one that shows other texts for a field is
// never the result and never lets the view prove absence (it may be the
// result as the site set its fields); a field the item does not show is
// not compared.
func TestClassifyEntryFields(t *testing.T) {
	const u = "https://site.test/alice/status/9"
	shows := func(fields map[string][]string) verify.Item {
		return with(item(u), func(it *verify.Item) { it.Fields = fields })
	}
	cases := []struct {
		name   string
		item   verify.Item
		want   verify.Outcome
		reason string
	}{
		{"the same fields, tags in another order", shows(map[string][]string{"category": {"News"}, "tags": {"release", "go"}}), verify.Verified, ""},
		{"a tag shown twice counts once", shows(map[string][]string{"category": {"News"}, "tags": {"go", "release", "go"}}), verify.Verified, ""},
		{"fields not shown are not compared", item(u), verify.Verified, ""},
		{"only the category shown", shows(map[string][]string{"category": {"News"}}), verify.Verified, ""},
		{"another category", shows(map[string][]string{"category": {"Uncategorized"}, "tags": {"go", "release"}}), verify.Ambiguous,
			"no exact match, but an item with the intended text and other entry fields (a category, tags): the site may have set them otherwise on this action's result"},
		{"a tag missing", shows(map[string][]string{"category": {"News"}, "tags": {"go"}}), verify.Ambiguous,
			"no exact match, but an item with the intended text and other entry fields (a category, tags): the site may have set them otherwise on this action's result"},
		{"a field shown empty", shows(map[string][]string{"category": {}}), verify.Ambiguous,
			"no exact match, but an item with the intended text and other entry fields (a category, tags): the site may have set them otherwise on this action's result"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := verify.Classify(fieldsIntent(), complete(c.item), opts)
			if v.Outcome != c.want {
				t.Fatalf("got %s (%s), want %s", v.Outcome, v.Reason, c.want)
			}
			if c.reason != "" && v.Reason != c.reason {
				t.Fatalf("reason %q, want %q", v.Reason, c.reason)
			}
		})
	}

	// One exact match beside an item with the text and other fields: the
	// latter may be this action's result, the former an older twin.
	other := with(item("https://site.test/alice/status/10"), func(it *verify.Item) { it.Fields = map[string][]string{"category": {"Other"}} })
	v := verify.Classify(fieldsIntent(), complete(shows(map[string][]string{"category": {"News"}}), other), opts)
	if v.Outcome != verify.Ambiguous {
		t.Fatalf("got %s (%s), want ambiguous", v.Outcome, v.Reason)
	}

	// An intent without fields compares none: any category is its own.
	v = verify.Classify(postIntent(), complete(other), opts)
	if v.Outcome != verify.Verified {
		t.Fatalf("got %s (%s), want verified", v.Outcome, v.Reason)
	}
}

// TestLandedResultEntryFields: a landed page that shows other texts for
// an entry field contradicts the intent; one that does not read a field
// says nothing of it.
func TestLandedResultEntryFields(t *testing.T) {
	in := fieldsIntent()
	if r := verify.CheckLandedResult(in, verify.LandedResult{Fields: map[string][]string{"tags": {"release", "go"}}}); r != "" {
		t.Fatalf("same tags: %q", r)
	}
	if r := verify.CheckLandedResult(in, verify.LandedResult{}); r != "" {
		t.Fatalf("nothing read: %q", r)
	}
	if r := verify.CheckLandedResult(in, verify.LandedResult{Fields: map[string][]string{"category": {"News", "Other"}}}); r == "" {
		t.Fatal("another category too: no contradiction")
	}
}
