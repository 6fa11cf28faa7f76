package kind_test

import (
	"testing"

	"github.com/browserop/browserop/budgets"
	"github.com/browserop/browserop/kind"
)

// The spellings are part of every idempotency key and of the ledger's
// rows: a change here must fail a test, not re-key every action.
func TestKindSpellings(t *testing.T) {
	want := map[kind.Kind]string{kind.Post: "post", kind.Reply: "reply", kind.ThreadPart: "thread_part",
		kind.Like: "like", kind.Follow: "follow"}
	if len(kind.All) != len(want) {
		t.Fatalf("got %d kinds, want %d", len(kind.All), len(want))
	}
	for _, k := range kind.All {
		if string(k) != want[k] {
			t.Errorf("got %q, want %q", k, want[k])
		}
	}
	if got := kind.Requests; len(got) != 5 || got[0] != "post" || got[1] != "reply" || got[2] != "thread" || got[3] != "like" || got[4] != "follow" {
		t.Errorf("got requests %v, want [post reply thread like follow]", got)
	}
}

func TestKindProperties(t *testing.T) {
	tests := []struct {
		k                           kind.Kind
		creates, toggles, hasParent bool
		capability, format          string
	}{
		{kind.Post, true, false, false, "post", budgets.PostText},
		{kind.Reply, true, false, true, "reply", budgets.Reply},
		{kind.ThreadPart, true, false, true, "thread", budgets.Thread},
		{kind.Like, false, true, false, "like", budgets.Like},
		{kind.Follow, false, true, false, "follow", budgets.Follow},
		{kind.Kind("navigate"), false, false, false, "", ""},
	}
	for _, tc := range tests {
		t.Run(string(tc.k), func(t *testing.T) {
			if got := tc.k.Known(); got != (tc.capability != "") {
				t.Errorf("Known: got %v", got)
			}
			if got := tc.k.Creates(); got != tc.creates {
				t.Errorf("Creates: got %v, want %v", got, tc.creates)
			}
			if got := tc.k.Toggles(); got != tc.toggles {
				t.Errorf("Toggles: got %v, want %v", got, tc.toggles)
			}
			if got := tc.k.HasParent(); got != tc.hasParent {
				t.Errorf("HasParent: got %v, want %v", got, tc.hasParent)
			}
			if got := tc.k.Capability(); got != tc.capability {
				t.Errorf("Capability: got %q, want %q", got, tc.capability)
			}
			if got := tc.k.Format(); got != tc.format {
				t.Errorf("Format: got %q, want %q", got, tc.format)
			}
			if tc.format != "" && !budgets.KnownFormat(tc.format) {
				t.Errorf("Format %q is not a budget format", tc.format)
			}
		})
	}
}

func TestOfRequest(t *testing.T) {
	for _, typ := range kind.Requests {
		k, ok := kind.OfRequest(typ)
		if !ok || !k.Known() || k.Capability() != typ {
			t.Errorf("OfRequest(%q): got %q %v, want a known kind needing capability %q", typ, k, ok, typ)
		}
	}
	for _, typ := range []string{"", "thread_part", "navigate", "Post"} {
		if k, ok := kind.OfRequest(typ); ok {
			t.Errorf("OfRequest(%q): got %q, want none", typ, k)
		}
	}
}
