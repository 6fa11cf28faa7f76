package operator

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/ledger"
)

// TestKeepSetValidate: the cleanup goes on only with complete inventories
// and a keep set that holds every handoff record the ledger holds now, as
// it is now, and no tab to close; an empty, partial or stale set, or a
// partial view, stops it.
func TestKeepSetValidate(t *testing.T) {
	h1 := ledger.Tab{ID: 1, TargetID: "T1", Epoch: 1, State: ledger.TabHandoff}
	h2 := ledger.Tab{ID: 2, TargetID: "T2", Epoch: 1, State: ledger.TabHandoff}
	inv := func(complete bool, ids ...browser.TargetID) browser.Inventory {
		i := browser.Inventory{Complete: complete}
		for _, id := range ids {
			i.Targets = append(i.Targets, browser.Target{ID: id})
		}
		return i
	}
	full := sighting{ctl: inv(true, "T1", "T2", "OWN"), person: inv(true, "T1", "T2", "OWN")}
	current := []ledger.Tab{h1, h2}

	require.Empty(t, keepSetOf(current).validate(full, current, []browser.TargetID{"OWN"}), "every live handed-off tab kept, another closed")
	require.Empty(t, keepSetOf(nil).validate(full, nil, []browser.TargetID{"OWN"}), "no handoff: an empty set is right")

	partialView := sighting{ctl: inv(false, "T1"), person: inv(true, "T1")}
	require.Contains(t, keepSetOf(current).validate(partialView, current, nil), "no complete inventory")

	require.Contains(t, keepSetOf(nil).validate(full, current, []browser.TargetID{"OWN"}), "handoff record 1 is not in the keep set", "empty")
	require.Contains(t, keepSetOf([]ledger.Tab{h1}).validate(full, current, nil), "the live handed-off tab of record 2 is missing from the keep set", "partial")

	moved := h2
	moved.Epoch = 2
	require.Contains(t, keepSetOf(current).validate(full, []ledger.Tab{h1, moved}, nil), "record 2 is stale", "a record changed since the set was built")
	gone := h2
	gone.State = ledger.TabMissing
	require.Contains(t, keepSetOf(current).validate(full, []ledger.Tab{h1, gone}, nil), "record 2 is no handoff record now")

	require.Contains(t, keepSetOf(current).validate(full, current, []browser.TargetID{"T2"}), "a tab to close is the handed-off tab of record 2")
}
