// Package sitetest is the adapter conformance suite: one set of tests any
// site adapter runs against its real site, given a browser signed in as an
// account and an object to act on. It checks what the operator relies on
// (docs/sites.md, "What the operator relies on"): the identity read, each
// configured action performed once and read back, the search finding
// exactly what was published (counted on the site's side too), and the
// refusals the site's harness can provoke classified as refusals: each
// the one answer to the one request of its submission, definitive, but a
// duplicate, which is evidence of presence and left to verification.
//
// A site's test calls Run from a test function with a Harness; see
// sites/demo_conformance_test.go and the WordPress tests.
package sitetest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/media"
	"github.com/browserop/browserop/sites"
	"github.com/browserop/browserop/verify"
)

// Harness is what the suite needs from a site's test.
type Harness struct {
	// Adapter is the adapter under test, on the site's origins.
	Adapter sites.Adapter
	// Tab returns a fresh tab browserop owns, signed in as Actor; the
	// suite closes nothing: the harness does at cleanup.
	Tab func(t *testing.T) *browser.Tab
	// Actor is the signed-in account's login.
	Actor string
	// Target returns a fresh object on the site for an action of kind: a
	// post of another account for replies, thread parts and likes, an
	// account the actor does not follow yet for follows.
	Target func(t *testing.T, k kind.Kind) string
	// Count returns how many items of kind with exactly text exist on the
	// site, read from the site's own store (its database), not its pages.
	// The suite compares it with one after each publication.
	Count func(t *testing.T, k kind.Kind, text string) int
	// Done reports, from the site's store, whether the actor's like or
	// follow of target is in place; nil skips that check.
	Done func(t *testing.T, k kind.Kind, target string) bool
	// Refusals provoke the refusal their key names for the submission of
	// the intent, prepared and about to be clicked, and return an undo;
	// missing kinds are skipped.
	Refusals map[sites.RefusalKind]func(t *testing.T, in sites.Intent) (undo func())
	// Media, when set, returns the images (with their alt texts) an action
	// attaches in the media subtests: every creating kind the adapter
	// takes media on publishes a post with them, and the landed result
	// and the search must show them. Nil skips those subtests.
	Media func(t *testing.T) []media.Item
	// TitledReplies says a reply's text, as a post's, keeps its first
	// line apart as a title (UniqueText's): a wiki's talk-page section is
	// headed by it. Without it a reply's text is one line.
	TitledReplies bool
	// Targets, per kind that acts on a target, are more targets the kind
	// is published to, one subtest each (kind_NAME), as its own subtest
	// publishes to Target's: an object of another shape than a fresh one
	// (a page whose replies already hold items of the actor's).
	Targets map[kind.Kind]map[string]func(t *testing.T) string
	// Timeout bounds each subtest (default two minutes).
	Timeout time.Duration
}

// Run runs the suite as subtests of t.
func Run(t *testing.T, h Harness) {
	if h.Timeout == 0 {
		h.Timeout = 2 * time.Minute
	}
	t.Run("Identity", func(t *testing.T) { h.identity(t) })
	for _, k := range kind.All {
		if !h.Adapter.Supports(k) {
			continue
		}
		t.Run(string(k), func(t *testing.T) {
			if k.Creates() {
				h.creates(t, k, nil)
			} else {
				h.toggles(t, k)
			}
		})
		names := slices.Sorted(maps.Keys(h.Targets[k]))
		for _, name := range names {
			target := h.Targets[k][name]
			t.Run(string(k)+"_"+name, func(t *testing.T) {
				h := h
				h.Target = func(t *testing.T, _ kind.Kind) string { return target(t) }
				if k.Creates() {
					h.creates(t, k, nil)
				} else {
					h.toggles(t, k)
				}
			})
		}
		if k.Creates() && h.Media != nil && h.Adapter.MediaLimits(k).Max > 0 {
			t.Run(string(k)+"_media", func(t *testing.T) {
				items := h.Media(t)
				if l := h.Adapter.MediaLimits(k); len(items) > l.Max {
					items = items[:l.Max]
				}
				h.creates(t, k, items)
			})
		}
	}
	for _, r := range sites.RefusalKinds {
		provoke := h.Refusals[r]
		if provoke == nil {
			continue
		}
		t.Run("Refused_"+string(r), func(t *testing.T) { h.refused(t, r, provoke) })
	}
}

func (h Harness) ctx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), h.Timeout)
	t.Cleanup(cancel)
	return ctx
}

func (h Harness) identity(t *testing.T) {
	ctx, tab := h.ctx(t), h.Tab(t)
	status, err := h.Adapter.OpenHome(ctx, tab)
	require.NoError(t, err)
	blk, err := h.Adapter.Blocker(ctx, tab, status)
	require.NoError(t, err)
	require.False(t, blk.Blocked(), "no blocker on the identity page: %s", blk.Detail)
	who, err := h.Adapter.Identity(ctx, tab)
	require.NoError(t, err)
	require.Equal(t, h.Actor, who, "the identity read is the actor's login")
}

// intent builds the intent of kind with a text unique to this run.
func (h Harness) intent(t *testing.T, k kind.Kind, text string) sites.Intent {
	in := sites.Intent{Kind: k, Actor: h.Actor, Text: text}
	if k != kind.Post {
		in.Target = h.Target(t, k)
	}
	return in
}

// prepare opens, checks and fills an intent as the operator does.
func (h Harness) prepare(t *testing.T, ctx context.Context, tab *browser.Tab, in sites.Intent) {
	status, err := h.Adapter.Open(ctx, tab, in)
	require.NoError(t, err)
	require.NoError(t, sites.Preflight(ctx, h.Adapter, tab, h.Actor, status), "preflight on the action's page")
	_, err = h.Adapter.Fill(ctx, tab, in)
	require.NoError(t, err, "fill and read back")
}

// UniqueText returns a text no earlier run used, with a title line and a
// body, for sites that split them.
func UniqueText(what string) string {
	return fmt.Sprintf("%s %d\n\nbrowserop conformance %s, checked once", what, time.Now().UnixNano(), what)
}

// text returns a text unique to this run for an action of kind k: with a
// title line for a post (and for a reply when TitledReplies says so), else
// one line.
func (h Harness) text(k kind.Kind, what string) string {
	text := UniqueText(what)
	if k != kind.Post && !(k == kind.Reply && h.TitledReplies) {
		// A reply has no title: one line.
		text = strings.ReplaceAll(text, "\n\n", " ")
	}
	return text
}

func (h Harness) creates(t *testing.T, k kind.Kind, items []media.Item) {
	ctx, tab := h.ctx(t), h.Tab(t)
	text := h.text(k, string(k))
	in := h.intent(t, k, text)
	in.Media = items
	var want []verify.Media
	for _, m := range items {
		want = append(want, verify.Media{Type: m.Type, Alt: m.Alt})
	}
	before := time.Now()
	var baseline []string
	haveBaseline := false
	if !h.Adapter.Compares(k).Time {
		// A search that reads no time tells the result from an older
		// twin by the baseline, as the operator does: the identical
		// items there before the click.
		res, err := h.Adapter.Search(ctx, tab, sites.Query{Kind: k, Actor: h.Actor, Target: in.Target, Text: text})
		require.NoError(t, err, "the search before the click")
		bin := verify.Intent{Kind: k, Actor: h.Actor, Text: h.Adapter.Expected(k, h.Actor, text, time.Now()), Media: want, NotBefore: before}
		if k.HasParent() {
			bin.ExpectedParent = h.Adapter.CanonicalFor(k, in.Target)
		}
		baseline, haveBaseline = verify.BaselineOf(bin, res.View(time.Now()))
		require.True(t, haveBaseline, "the search before the click reads a baseline")
	}
	h.prepare(t, ctx, tab, in)
	require.Zero(t, h.Count(t, k, h.Adapter.Expected(k, h.Actor, text, time.Now())), "filling publishes nothing")
	require.NoError(t, h.Adapter.Submit(ctx, tab, in), "submit")
	obs, err := h.Adapter.Result(ctx, tab, in)
	require.NoError(t, err, "read the landed result")
	require.NotEmpty(t, obs.URL, "the landed result names the created item")
	require.Equal(t, obs.URL, h.Adapter.CanonicalFor(k, obs.URL), "the landed link is canonical")
	require.False(t, obs.Moderated, "published, not held")
	for _, f := range obs.Read {
		switch f {
		case "text":
			require.Equal(t, verify.Normalize(h.Adapter.Expected(k, h.Actor, text, time.Now())), verify.Normalize(obs.Text), "the landed text")
		case "author":
			require.Equal(t, h.Actor, obs.Author, "the landed author")
		case "media":
			got := obs.LandedResult().Media
			require.True(t, verify.SameMedia(want, got), "the landed media: %+v, want %+v", got, want)
		}
	}
	if len(items) > 0 {
		require.Contains(t, obs.Read, "media", "an action with media reads them on its result")
	}
	require.Equal(t, 1, h.Count(t, k, h.Adapter.Expected(k, h.Actor, text, time.Now())), "published exactly once, counted on the site")

	// The search finds exactly it, as verification reads it.
	var res sites.SearchResult
	vin := verify.Intent{Kind: k, Actor: h.Actor, Text: h.Adapter.Expected(k, h.Actor, text, time.Now()), Media: want, NotBefore: before.Add(-time.Minute),
		Baseline: baseline, HaveBaseline: haveBaseline}
	if k.HasParent() {
		vin.ExpectedParent = h.Adapter.CanonicalFor(k, in.Target)
	}
	deadline := time.Now().Add(h.Timeout / 2)
	var v verify.Verdict
	for {
		res, err = h.Adapter.Search(ctx, tab, sites.Query{Kind: k, Actor: h.Actor, Target: in.Target, Text: text})
		require.NoError(t, err, "search")
		v = verify.Classify(vin, res.View(time.Now()), verify.Options{Settle: res.Settle, Skew: time.Minute})
		if v.Outcome == verify.Verified || time.Now().After(deadline) {
			break
		}
		time.Sleep(res.Settle / 4)
	}
	require.Equal(t, verify.Verified, v.Outcome, "search verdict: %s (%d items, complete %t, problems %v)", v.Reason, len(res.Items), res.Complete, problems(res))
	require.Equal(t, obs.URL, v.URL, "the search finds the landed result")
}

func (h Harness) toggles(t *testing.T, k kind.Kind) {
	ctx, tab := h.ctx(t), h.Tab(t)
	in := h.intent(t, k, "")
	res, err := h.Adapter.Search(ctx, tab, sites.Query{Kind: k, Actor: h.Actor, Target: in.Target})
	require.NoError(t, err)
	require.Len(t, res.Items, 1)
	require.False(t, res.Items[0].Done, "a fresh target is not done yet")
	h.prepare(t, ctx, tab, in)
	require.NoError(t, h.Adapter.Submit(ctx, tab, in))
	obs, err := h.Adapter.Result(ctx, tab, in)
	require.NoError(t, err)
	require.True(t, obs.Done, "the control shows done after the click")
	if h.Done != nil {
		require.True(t, h.Done(t, k, in.Target), "the site records it")
	}
	res, err = h.Adapter.Search(ctx, tab, sites.Query{Kind: k, Actor: h.Actor, Target: in.Target})
	require.NoError(t, err)
	require.True(t, res.Complete && len(res.Items) == 1 && res.Items[0].Done, "the search reads it done")

	// Already in place: nothing is clicked, and it says so.
	h.prepare(t, ctx, tab, in)
	err = h.Adapter.Submit(ctx, tab, in)
	require.ErrorIs(t, err, sites.ErrAlreadyDone)
	require.NotErrorIs(t, err, sites.ErrOutcomeUnknown)
}

func (h Harness) refused(t *testing.T, r sites.RefusalKind, provoke func(*testing.T, sites.Intent) func()) {
	k := kind.Reply
	if !h.Adapter.Supports(k) {
		k = kind.Post
	}
	ctx, tab := h.ctx(t), h.Tab(t)
	text := strings.ReplaceAll(UniqueText("refused "+string(r)), "\n\n", " ")
	if k == kind.Reply && h.TitledReplies {
		text = h.text(k, "refused "+string(r))
	}
	in := h.intent(t, k, text)
	h.prepare(t, ctx, tab, in)
	undo := provoke(t, in)
	defer undo()
	before := h.Count(t, k, h.Adapter.Expected(k, h.Actor, text, time.Now())) // the provocation may add the same text
	err := h.Adapter.Submit(ctx, tab, in)
	ref := sites.AsRefusal(err)
	require.NotNil(t, ref, "a refusal, not %v", err)
	require.Equal(t, r, ref.Kind, "refusal kind (%s)", ref.Detail)
	if r == sites.RefusedDuplicate {
		// The site says it holds the item: evidence of presence, which
		// verification weighs, never proof of absence.
		require.ErrorIs(t, err, sites.ErrOutcomeUnknown, "a duplicate refusal proves nothing was created only to verification")
		require.NotEmpty(t, ref.Doubt)
	} else {
		require.NotErrorIs(t, err, sites.ErrOutcomeUnknown, "a proven refusal is definitive (%s)", ref.Doubt)
		require.Empty(t, ref.Doubt)
	}
	require.Equal(t, before, h.Count(t, k, h.Adapter.Expected(k, h.Actor, text, time.Now())), "the refused submission created nothing")
}

func problems(res sites.SearchResult) []string {
	var out []string
	for _, it := range res.Items {
		out = append(out, it.Problems...)
	}
	return out
}
