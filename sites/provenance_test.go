package sites_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/demosite"
	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/sites"
)

// fieldStore is a FieldStore in memory that keeps the ledger's rule: a
// field recorded user_edited or unknown_external_change keeps that state.
type fieldStore struct {
	mu     sync.Mutex
	states map[string]sites.FieldState
}

func newFieldStore() *fieldStore { return &fieldStore{states: map[string]sites.FieldState{}} }

func (s *fieldStore) FieldState(_ context.Context, fp string) (sites.FieldState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.states[fp], nil
}

func (s *fieldStore) SetFieldState(_ context.Context, fp string, st sites.FieldState) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur := s.states[fp]; cur != "" && cur != sites.FieldAgentFilled && cur != st {
		return fmt.Errorf("field is %s for good", cur)
	}
	s.states[fp] = st
	return nil
}

// composer is the demo adapter's post field and its fingerprint.
var composer = sites.FieldFingerprint(kind.Post, 0, sites.FillSpec{Selector: "textarea#compose-text"})

const draft = "the person's unsent draft"

// A composer holding a draft browserop did not type (the site restored
// it, autofill, the person's own typing) is left exactly as it is: Fill
// types nothing, stops with a hard stop that names the field and not what
// it holds, and records unknown_external_change; with no ledger at all it
// stops the same way. Nothing is submitted.
func TestFillKeepsTheDraftItFinds(t *testing.T) {
	e := setup(t, demosite.Faults{})
	in := sites.Intent{Kind: kind.Post, Actor: "alice", Text: "scheduled post"}
	for name, store := range map[string]*fieldStore{"Ledger": newFieldStore(), "NoLedger": nil} {
		t.Run(name, func(t *testing.T) {
			_, err := e.tab.Navigate(e.ctx, base+"/compose?draft="+url.QueryEscape(draft))
			require.NoError(t, err)
			in := in
			if store != nil {
				in.Provenance = sites.TrackFields(store, sites.NewReadBacks(8), "act_1/1/1")
			}
			_, err = e.site.Fill(e.ctx, e.tab, in)
			hs := sites.AsHardStop(err)
			require.NotNil(t, hs, "%v", err)
			require.Equal(t, sites.StopFieldNotOurs, hs.Kind)
			require.Contains(t, err.Error(), `field 0 ("textarea#compose-text") holds text browserop did not type there (unknown_external_change)`)
			require.NotContains(t, err.Error(), "unsent", "the reason names the field, never what it holds")
			require.NotErrorIs(t, err, sites.ErrReadBackMismatch)
			v, err := e.tab.Value(e.ctx, "textarea#compose-text")
			require.NoError(t, err)
			require.Equal(t, draft, v, "the draft is untouched")
			if store != nil {
				require.Equal(t, map[string]sites.FieldState{composer: sites.FieldUnknownChange}, store.states)
			}
		})
	}
	require.Empty(t, demo.Effects(), "nothing submitted")
}

// browserop's own fill is agent_filled; its own retry in the same tab and
// epoch may type over its own text; a person's edit after its read-back
// is recorded user_edited and never typed over, on this attempt or any
// later one; and a process that lost the memory of its read-back (a new
// ReadBacks) treats its own earlier text as unknown.
func TestFillProvenance(t *testing.T) {
	e := setup(t, demosite.Faults{})
	ctx := e.ctx
	value := func() string {
		t.Helper()
		v, err := e.tab.Value(ctx, "textarea#compose-text")
		require.NoError(t, err)
		return v
	}
	post := func(text string) sites.Intent {
		return sites.Intent{Kind: kind.Post, Actor: "alice", Text: text}
	}

	t.Run("AgentFilledThenUserEdited", func(t *testing.T) {
		_, err := e.tab.Navigate(ctx, base+"/compose")
		require.NoError(t, err)
		store := newFieldStore()
		in := post("scheduled post")
		in.Provenance = sites.TrackFields(store, sites.NewReadBacks(8), "act_2/1/1")
		got, err := e.site.Fill(ctx, e.tab, in)
		require.NoError(t, err)
		require.Equal(t, "scheduled post", got)
		require.Equal(t, sites.FieldAgentFilled, store.states[composer])

		// The person edits the field browserop filled (typed into the
		// tab, here through DevTools, as an input method does).
		const edited = "scheduled post, and the person's own words"
		_, err = e.tab.Fill(ctx, "textarea#compose-text", edited)
		require.NoError(t, err)
		for attempt := range 2 {
			_, err = e.site.Fill(ctx, e.tab, in)
			require.Equal(t, sites.StopFieldNotOurs, sites.AsHardStop(err).Kind, "attempt %d: %v", attempt, err)
			require.NotContains(t, err.Error(), "own words")
			require.Equal(t, sites.FieldUserEdited, store.states[composer])
			require.Equal(t, edited, value(), "attempt %d: the person's text is kept", attempt)
		}
		require.Contains(t, err.Error(), "(user_edited)")

		// The person clears it: still theirs to decide, never refilled.
		_, err = e.tab.Fill(ctx, "textarea#compose-text", "")
		require.NoError(t, err)
		_, err = e.site.Fill(ctx, e.tab, in)
		require.Equal(t, sites.StopFieldNotOurs, sites.AsHardStop(err).Kind, "%v", err)
		require.Equal(t, "", value())
	})

	t.Run("OwnRetryRefills", func(t *testing.T) {
		_, err := e.tab.Navigate(ctx, base+"/compose")
		require.NoError(t, err)
		store, rb := newFieldStore(), sites.NewReadBacks(8)
		first := post("first attempt")
		first.Provenance = sites.TrackFields(store, rb, "act_3/1/1")
		_, err = e.site.Fill(ctx, e.tab, first)
		require.NoError(t, err)
		// The same action's next attempt in the same tab and epoch finds
		// its own text (here another text, as after a page that changed
		// what it typed): its own to replace.
		second := post("second attempt")
		second.Provenance = sites.TrackFields(store, rb, "act_3/1/1")
		got, err := e.site.Fill(ctx, e.tab, second)
		require.NoError(t, err)
		require.Equal(t, "second attempt", got)
		require.Equal(t, sites.FieldAgentFilled, store.states[composer])

		// Another scope (another action, tab or epoch) never owns it.
		other := post("another action")
		other.Provenance = sites.TrackFields(newFieldStore(), rb, "act_4/1/1")
		_, err = e.site.Fill(ctx, e.tab, other)
		require.Equal(t, sites.StopFieldNotOurs, sites.AsHardStop(err).Kind, "%v", err)
		require.Equal(t, "second attempt", value())

		// A lost context: the ledger says agent_filled, but nothing
		// remembers what was read back. The text is unknown, and kept.
		lost := post("after a restart")
		lost.Provenance = sites.TrackFields(store, sites.NewReadBacks(8), "act_3/1/1")
		_, err = e.site.Fill(ctx, e.tab, lost)
		require.Equal(t, sites.StopFieldNotOurs, sites.AsHardStop(err).Kind, "%v", err)
		require.Equal(t, sites.FieldUnknownChange, store.states[composer])
		require.Equal(t, "second attempt", value())
	})
	require.Empty(t, demo.Effects(), "nothing submitted")
}

// A person's edit after browserop read back what it typed, before the
// click (here while a step runs: the step waits until the composer's
// counter shows the person's text, looking every 50ms), is caught by the read-back after the
// steps: recorded user_edited, the action stopped before its click, and
// the person's text kept.
func TestFillEditedDuringTheSteps(t *testing.T) {
	e := setup(t, demosite.Faults{})
	const intended = "scheduled post"
	const edited = "scheduled post, and the person's own words"
	raw, err := os.ReadFile(demoPath)
	require.NoError(t, err)
	const field = "    fill:\n      selector: \"textarea#compose-text\"\n"
	require.Equal(t, 1, strings.Count(string(raw), field+"    # Images"), "the post's field")
	spec := strings.Replace(string(raw), field, field+fmt.Sprintf("    steps:\n      - if: '#compose-count:text(\"%d\")'\n        click: '#compose-count'\n        timeout: 60s\n",
		utf8.RuneCountInString(edited)), 1)
	d, err := sites.Parse("demo.yaml", []byte(spec))
	require.NoError(t, err)
	d, err = d.WithOrigins(base)
	require.NoError(t, err)
	_, err = e.tab.Navigate(e.ctx, base+"/compose")
	require.NoError(t, err)

	person := make(chan error, 1)
	go func() {
		// The person types once browserop's text is in the composer.
		for e.ctx.Err() == nil {
			v, err := e.tab.Value(e.ctx, "textarea#compose-text")
			if err != nil {
				person <- err
				return
			}
			if v == intended {
				_, err = e.tab.Fill(e.ctx, "textarea#compose-text", edited)
				person <- err
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		person <- e.ctx.Err()
	}()
	store := newFieldStore()
	in := sites.Intent{Kind: kind.Post, Actor: "alice", Text: intended,
		Provenance: sites.TrackFields(store, sites.NewReadBacks(8), "act_5/1/1")}
	_, err = d.Fill(e.ctx, e.tab, in)
	require.NoError(t, <-person)
	require.NotNil(t, sites.AsHardStop(err), "%v", err)
	require.Equal(t, sites.StopFieldNotOurs, sites.AsHardStop(err).Kind, "%v", err)
	require.Contains(t, err.Error(), "changed after browserop read back what it typed there (user_edited)")
	require.NotContains(t, err.Error(), "own words")
	require.Equal(t, sites.FieldUserEdited, store.states[composer])
	v, err := e.tab.Value(e.ctx, "textarea#compose-text")
	require.NoError(t, err)
	require.Equal(t, edited, v)
	require.Empty(t, demo.Effects(), "nothing submitted")
}
