package sites_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/demosite"
	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/sites"
)

// TestCheckMarksBlindSearches: sites check marks a search that cannot
// prove absence: one whose item selector matches nothing on a page that
// lists items (a theme change), one whose items miss a field it
// compares, and one that reads no item of the actor, unless the site's
// count agreed. The bundled adapter, on a timeline with a post of the
// actor, is not marked.
func TestCheckMarksBlindSearches(t *testing.T) {
	e := setup(t, demosite.Faults{})
	demo.SeedPost("alice", "a post to be seen", time.Now().Add(-time.Hour))
	adapter := func(t *testing.T, old, new string) *sites.Declarative {
		t.Helper()
		d, err := sites.Parse("demo.yaml", demoWith(t, old, new))
		require.NoError(t, err)
		d, err = d.WithOrigins(base)
		require.NoError(t, err)
		return d
	}
	searches := func(t *testing.T, d *sites.Declarative, actor string) map[kind.Kind]sites.SearchCheck {
		t.Helper()
		rep, err := d.Check(e.ctx, e.tab, actor, "", "")
		require.NoError(t, err)
		out := map[kind.Kind]sites.SearchCheck{}
		for _, s := range rep.Searches {
			out[s.Kind] = s
		}
		require.Len(t, out, 3, "post, reply and thread_part searched")
		return out
	}

	t.Run("Bundled", func(t *testing.T) {
		for k, s := range searches(t, e.site, "alice") {
			require.Empty(t, s.Blind, "%s", k)
			require.Equal(t, 1, s.Total)
		}
	})
	t.Run("ItemSelectorMatchesNothing", func(t *testing.T) {
		d := adapter(t, `  item: "#timeline article.post"`, `  item: "#timeline article.entry"`)
		got := searches(t, d, "alice")
		for k, s := range got {
			require.Zero(t, s.Total)
			// Without the demo adapter's count the walk would end on a
			// complete view, which is the danger; the count disagrees.
			require.False(t, s.Counted, "%s", k)
			require.False(t, s.Complete, "%s", k)
			require.Contains(t, s.Blind, "it read no item", "%s", k)
		}
		rep, err := d.Check(e.ctx, e.tab, "alice", "", "")
		require.NoError(t, err)
		require.Len(t, rep.Blind(), 3)
	})
	t.Run("FieldMissing", func(t *testing.T) {
		d := adapter(t, "  author: {attribute: data-author}\n  time:", "  author: {attribute: data-writer}\n  time:")
		for k, s := range searches(t, d, "alice") {
			require.Equal(t, "1 of its 1 items lack a field it compares (author missing: 1): such an item never matches, so its absence proves nothing", s.Blind, "%s", k)
		}
	})
	t.Run("NoItemOfTheActor", func(t *testing.T) {
		// The home feed lists the people alice follows, not alice.
		demo.SeedPost("bob", "bob's", time.Now().Add(-time.Minute))
		_, err := e.tab.Navigate(e.ctx, base+"/u/bob")
		require.NoError(t, err)
		_, err = e.tab.ClickOnceAndWait(e.ctx, "#follow-button")
		require.NoError(t, err)
		d := adapter(t, `url: "{origin}/u/{actor}"`, `url: "{origin}/home"`)
		for k, s := range searches(t, d, "carol") {
			require.Positive(t, s.Total, "%s", k)
			require.Contains(t, s.Blind, "is by @carol", "%s", k)
		}
	})
}

// TestCheckCountMakesUpForEmpty: with the site's own count agreeing, a
// search that reads no item shows it can see an empty list; a count never
// makes up for a field the items miss, nor for items none of which is the
// actor's (it says nothing of how authors are read).
func TestCheckCountMakesUpForEmpty(t *testing.T) {
	home := `<!doctype html><body><span id="whoami" data-handle="alice">@alice</span></body>`
	for _, tc := range []struct {
		name, list, blind string
	}{
		{"EmptyCounted", listPage("0 posts", ""), ""},
		{"OthersCounted", listPage("2 posts", "", "bob", "carol"), "none of its 2 items is by @alice"},
		{"EmptyMiscounted", listPage("1 post", ""), "it read no item"},
		{"OthersNotCounted", listPage("", "", "bob"), "none of its 1 items is by @alice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMini(t, map[string]string{"/home": home, "/compose": composePage("", ""), "/u/alice": tc.list}, http.StatusCreated, `{}`)
			d := miniSite(t, countedYAML(m.URL))
			ctx, tab := miniTab(t)
			rep, err := d.Check(ctx, tab, "alice", "", "")
			require.NoError(t, err)
			require.Equal(t, "alice", rep.Identity)
			require.Len(t, rep.Searches, 1)
			if tc.blind == "" {
				require.Empty(t, rep.Searches[0].Blind)
				require.True(t, rep.Searches[0].Counted)
			} else {
				require.Contains(t, rep.Searches[0].Blind, tc.blind)
			}
		})
	}
}
