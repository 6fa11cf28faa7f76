package verify_test

import (
	"strings"
	"testing"
	"time"

	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/verify"
)

var (
	t0   = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	opts = verify.Options{Settle: 2 * time.Minute, Skew: 5 * time.Second}
)

func postIntent() verify.Intent {
	return verify.Intent{Kind: kind.Post, Actor: "@alice", Text: "Hello, world 🚀", NotBefore: t0}
}

// twoImages is what imageIntent attaches.
var twoImages = []verify.Media{{Type: "png", Alt: "A red square"}, {Type: "jpeg"}}

// shown is media as a page that shows alt texts reads them.
func shown(ms []verify.Media) []verify.Media {
	out := make([]verify.Media, len(ms))
	for i, m := range ms {
		out[i] = verify.Media{Type: m.Type, Alt: m.Alt, AltShown: true}
	}
	return out
}

func imageIntent() verify.Intent {
	in := postIntent()
	in.Media = twoImages
	return in
}

func replyIntent() verify.Intent {
	return verify.Intent{Kind: kind.Reply, Actor: "alice", Text: "Agreed.", ExpectedParent: "https://site.test/bob/status/1", NotBefore: t0}
}

// item returns an item that exactly matches postIntent.
func item(url string) verify.Item {
	return verify.Item{Author: "alice", Text: "Hello, world 🚀", URL: url, At: t0.Add(time.Second)}
}

func with(it verify.Item, f func(*verify.Item)) verify.Item { f(&it); return it }

// older is an item of the actor's from well before the action: a complete
// view that shows it shows that it sees the actor's items (docs/design.md
// invariant 12), and it is no item of any action here.
var older = verify.Item{Author: "alice", Text: "An older post", URL: "https://site.test/alice/status/1", At: t0.Add(-3 * time.Hour)}

// complete is a complete view of items, above the actor's older item.
func complete(items ...verify.Item) verify.Search {
	return verify.Search{Items: append(items, older), Complete: true, ObservedAt: t0.Add(10 * time.Minute)}
}

// seenBefore gives in a baseline of the actor's items: urls, then the
// older item, as a complete search showed them before the click.
func seenBefore(in verify.Intent, urls ...string) verify.Intent {
	in.Seen, in.HaveSeen = append(urls, older.URL), true
	return in
}

func TestClassify(t *testing.T) {
	t.Parallel()
	const u1, u2 = "https://site.test/alice/status/10", "https://site.test/alice/status/11"
	tests := []struct {
		name    string
		in      verify.Intent
		search  verify.Search
		want    verify.Outcome
		wantURL string
		wantN   int // len(URLs)
	}{
		{name: "VerifiedOneExactMatch", in: postIntent(), search: complete(item(u1)), want: verify.Verified, wantURL: u1, wantN: 1},
		{name: "VerifiedInIncompleteView", in: postIntent(), search: verify.Search{Items: []verify.Item{item(u1)}}, want: verify.Verified, wantURL: u1, wantN: 1},
		{name: "VerifiedInsideSettle", in: postIntent(), search: verify.Search{Items: []verify.Item{item(u1)}, Complete: true, ObservedAt: t0.Add(time.Second)}, want: verify.Verified, wantURL: u1, wantN: 1},
		{name: "VerifiedURLNormalized", in: postIntent(), search: complete(item("HTTPS://Site.test:443/alice/status/10")), want: verify.Verified, wantURL: u1, wantN: 1},
		{name: "VerifiedFragmentKept", in: postIntent(), search: complete(item(u1 + "#comment-3")), want: verify.Verified, wantURL: u1 + "#comment-3", wantN: 1},
		{name: "VerifiedAmongOthers", in: postIntent(), search: complete(
			with(item(u2), func(i *verify.Item) { i.Text = "Something else" }),
			item(u1),
		), want: verify.Verified, wantURL: u1, wantN: 1},
		{name: "VerifiedSameURLTwiceIsOnePost", in: postIntent(), search: complete(item(u1), item("HTTPS://SITE.test:443/alice/status/10")), want: verify.Verified, wantURL: u1, wantN: 1},
		{name: "VerifiedWithinSkew", in: postIntent(), search: complete(with(item(u1), func(i *verify.Item) { i.At = t0.Add(-4 * time.Second) })), want: verify.Verified, wantURL: u1, wantN: 1},
		{name: "VerifiedNBSPAndCRLF", in: verify.Intent{Kind: kind.Post, Actor: "alice", Text: "line one\nline two", NotBefore: t0},
			search: complete(with(item(u1), func(i *verify.Item) { i.Text = "line\u00a0one  \r\nline two" })), want: verify.Verified, wantURL: u1, wantN: 1},
		{name: "VerifiedNFDvsNFC", in: verify.Intent{Kind: kind.Post, Actor: "alice", Text: "caf\u00e9", NotBefore: t0},
			search: complete(with(item(u1), func(i *verify.Item) { i.Text = "cafe\u0301" })), want: verify.Verified, wantURL: u1, wantN: 1},
		{name: "VerifiedReply", in: replyIntent(), search: complete(verify.Item{Author: "@alice", Text: "Agreed.", Parent: "https://SITE.test/bob/status/1", URL: u1, At: t0}), want: verify.Verified, wantURL: u1, wantN: 1},
		{name: "VerifiedMediaOnly", in: verify.Intent{Kind: kind.Post, Actor: "alice", Media: twoImages, NotBefore: t0},
			search: complete(verify.Item{Author: "alice", Media: shown(twoImages), URL: u1, At: t0}), want: verify.Verified, wantURL: u1, wantN: 1},
		{name: "VerifiedMediaAltHidden", in: verify.Intent{Kind: kind.Post, Actor: "alice", Text: "Hello, world 🚀", Media: twoImages, NotBefore: t0},
			search: complete(with(item(u1), func(i *verify.Item) { i.Media = []verify.Media{{Type: "png"}, {Type: "jpeg"}} })), want: verify.Verified, wantURL: u1, wantN: 1},
		{name: "VerifiedMediaAltNormalized", in: verify.Intent{Kind: kind.Post, Actor: "alice", Text: "Hello, world 🚀", Media: twoImages, NotBefore: t0},
			search: complete(with(item(u1), func(i *verify.Item) {
				i.Media = []verify.Media{{Type: "png", Alt: "A  red\u00a0square ", AltShown: true}, {Type: "jpeg", AltShown: true}}
			})), want: verify.Verified, wantURL: u1, wantN: 1},

		{name: "DuplicateTwoExactMatches", in: postIntent(), search: complete(item(u1), item(u2)), want: verify.Duplicate, wantN: 2},
		{name: "DuplicateFragmentsNameTwoComments", in: postIntent(), search: complete(item(u1+"#comment-1"), item(u1+"#comment-2")), want: verify.Duplicate, wantN: 2},
		{name: "DuplicateEvenIncomplete", in: postIntent(), search: verify.Search{Items: []verify.Item{item(u1), item(u2)}}, want: verify.Duplicate, wantN: 2},

		{name: "AbsentCompleteAfterSettle", in: postIntent(), search: complete(), want: verify.Absent},
		{name: "AbsentAtExactSettleEnd", in: postIntent(), search: verify.Search{Items: []verify.Item{older}, Complete: true, ObservedAt: t0.Add(opts.Settle)}, want: verify.Absent},
		{name: "AbsentIdenticalOlderPostIgnored", in: postIntent(), search: complete(with(item(u1), func(i *verify.Item) { i.At = t0.Add(-time.Hour) })), want: verify.Absent},
		{name: "AbsentWrongAuthor", in: postIntent(), search: complete(with(item(u1), func(i *verify.Item) { i.Author = "mallory" })), want: verify.Absent},
		{name: "AbsentAuthorCaseDiffers", in: postIntent(), search: complete(with(item(u1), func(i *verify.Item) { i.Author = "Alice" })), want: verify.Absent},
		{name: "AbsentTextCaseDiffers", in: seenBefore(postIntent(), u1), search: complete(with(item(u1), func(i *verify.Item) { i.Text = "hello, world 🚀" })), want: verify.Absent},
		{name: "AbsentVaguelySimilar", in: seenBefore(postIntent(), u1), search: complete(with(item(u1), func(i *verify.Item) { i.Text = "Hello, world 🚀!" })), want: verify.Absent},
		{name: "AbsentEmojiDiffers", in: seenBefore(postIntent(), u1), search: complete(with(item(u1), func(i *verify.Item) { i.Text = "Hello, world 🚀🚀" })), want: verify.Absent},
		{name: "AbsentRewrittenItemIsAnotherActionsResult", in: func() verify.Intent { in := postIntent(); in.Known = []string{u1}; return in }(),
			search: complete(with(item(u1), func(i *verify.Item) { i.Text = "Hello, world 🚀 (edited)" })), want: verify.Absent},
		// A text the site rewrote in a way nobody predicted (a signature,
		// curly quotes, a shortened link): by the actor, new since the
		// click, so it may be this action's result.
		{name: "AmbiguousUnexplainedRewriteNoBaseline", in: postIntent(), search: complete(with(item(u1), func(i *verify.Item) { i.Text = "Hello, world 🚀 — sent from browserop" })), want: verify.Ambiguous},
		{name: "AmbiguousUnexplainedRewriteWithBaseline", in: seenBefore(postIntent()), search: complete(with(item(u1), func(i *verify.Item) { i.Text = "“Hello, world 🚀”" })), want: verify.Ambiguous},
		// Times read in the wrong zone shift every item alike: the new
		// one is still newer than the items seen before the click.
		{name: "AmbiguousUnexplainedWrongZone", in: seenBefore(postIntent()), search: verify.Search{Items: []verify.Item{
			with(item(u1), func(i *verify.Item) { i.Text = "Hello"; i.At = i.At.Add(-5 * time.Hour) }),
			with(older, func(i *verify.Item) { i.At = i.At.Add(-5 * time.Hour) }),
		}, Complete: true, ObservedAt: t0.Add(10 * time.Minute)}, want: verify.Ambiguous},
		// A list in the other order (a comment thread, oldest first): the
		// new item below the seen ones is still newer than they are.
		{name: "AmbiguousUnexplainedOldestFirst", in: seenBefore(postIntent()), search: verify.Search{Items: []verify.Item{
			older, with(item(u1), func(i *verify.Item) { i.Text = "Hello" }),
		}, Complete: true, ObservedAt: t0.Add(10 * time.Minute)}, want: verify.Ambiguous},
		{name: "AmbiguousUnexplainedOldestFirstNoTimes", in: seenBefore(postIntent()), search: verify.Search{Items: []verify.Item{
			with(older, func(i *verify.Item) { i.At = time.Time{} }), with(item(u1), func(i *verify.Item) { i.Text = "Hello"; i.At = time.Time{} }),
		}, Complete: true, ObservedAt: t0.Add(10 * time.Minute)}, want: verify.Ambiguous},
		{name: "AmbiguousUnexplainedWithoutTime", in: postIntent(), search: complete(with(item(u1), func(i *verify.Item) { i.Text = "Hello"; i.At = time.Time{} })), want: verify.Ambiguous},
		{name: "AbsentOlderBelowSeen", in: seenBefore(postIntent()), search: verify.Search{Items: []verify.Item{older, with(item(u2), func(i *verify.Item) { i.Text = "Older still"; i.At = t0.Add(-4 * time.Hour) })}, Complete: true, ObservedAt: t0.Add(10 * time.Minute)}, want: verify.Absent},
		{name: "AmbiguousNewerBelowSeenByTime", in: seenBefore(postIntent()), search: verify.Search{Items: []verify.Item{older, with(item(u2), func(i *verify.Item) { i.Text = "Out of order" })}, Complete: true, ObservedAt: t0.Add(10 * time.Minute)}, want: verify.Ambiguous},
		{name: "AmbiguousBlindNoItems", in: postIntent(), search: verify.Search{Complete: true, ObservedAt: t0.Add(10 * time.Minute)}, want: verify.Ambiguous},
		{name: "AmbiguousBlindOnlyOthers", in: postIntent(), search: verify.Search{Items: []verify.Item{with(older, func(i *verify.Item) { i.Author = "Alice Liddell" })}, Complete: true, ObservedAt: t0.Add(10 * time.Minute)}, want: verify.Ambiguous},
		{name: "AmbiguousBlindSeenItemsGone", in: seenBefore(postIntent(), u1), search: verify.Search{Complete: true, ObservedAt: t0.Add(10 * time.Minute)}, want: verify.Ambiguous},
		{name: "AmbiguousCountedButNoneOfTheActors", in: postIntent(), search: verify.Search{Items: []verify.Item{with(older, func(i *verify.Item) { i.Author = "Alice Liddell" })}, Complete: true, Counted: true, ObservedAt: t0.Add(10 * time.Minute)}, want: verify.Ambiguous},
		{name: "AbsentEmptyButCounted", in: postIntent(), search: verify.Search{Complete: true, Counted: true, ObservedAt: t0.Add(10 * time.Minute)}, want: verify.Absent},
		{name: "AbsentSeesAnotherActionsResult", in: func() verify.Intent { in := postIntent(); in.Known = []string{u2}; return in }(),
			search: verify.Search{Items: []verify.Item{with(item(u2), func(i *verify.Item) { i.Text = "another action" })}, Complete: true, ObservedAt: t0.Add(10 * time.Minute)}, want: verify.Absent},
		{name: "AmbiguousLandedLinkNotShown", in: func() verify.Intent { in := postIntent(); in.LandedURL = u1; return in }(), search: complete(), want: verify.Ambiguous},
		{name: "AbsentIdenticalTextOtherMediaOlderIgnored", in: postIntent(), search: complete(with(item(u1), func(i *verify.Item) { i.Media = shown(twoImages); i.At = t0.Add(-time.Hour) })), want: verify.Absent},
		{name: "AmbiguousTextMatchButMediaAdded", in: postIntent(), search: complete(with(item(u1), func(i *verify.Item) { i.Media = shown(twoImages) })), want: verify.Ambiguous},
		{name: "AmbiguousMediaReencoded", in: imageIntent(), search: complete(with(item(u1), func(i *verify.Item) {
			i.Media = []verify.Media{{Type: "jpeg", Alt: "A red square", AltShown: true}, {Type: "jpeg", AltShown: true}}
		})), want: verify.Ambiguous},
		{name: "AmbiguousMediaAltDropped", in: imageIntent(), search: complete(with(item(u1), func(i *verify.Item) {
			i.Media = []verify.Media{{Type: "png", AltShown: true}, {Type: "jpeg", AltShown: true}}
		})), want: verify.Ambiguous},
		{name: "AmbiguousMediaMissing", in: imageIntent(), search: complete(item(u1)), want: verify.Ambiguous},
		{name: "AmbiguousOtherMediaShortlyBefore", in: imageIntent(), search: complete(with(item(u1), func(i *verify.Item) { i.At = t0.Add(-5 * time.Minute) })), want: verify.Ambiguous},
		{name: "AmbiguousExactPlusOtherMedia", in: imageIntent(), search: complete(with(item(u1), func(i *verify.Item) {
			i.Media = []verify.Media{{Type: "jpeg", Alt: "A red square", AltShown: true}, {Type: "jpeg", AltShown: true}}
		}), with(item(u2), func(i *verify.Item) { i.Media = shown(twoImages) })), want: verify.Ambiguous, wantN: 1},
		{name: "AmbiguousMediaOtherMatchNoTime", in: imageIntent(), search: complete(with(item(u1), func(i *verify.Item) { i.At = time.Time{} })), want: verify.Ambiguous},
		{name: "AbsentPostVsReply", in: seenBefore(postIntent(), u1), search: complete(with(item(u1), func(i *verify.Item) { i.Parent = "https://site.test/bob/status/1" })), want: verify.Absent},
		{name: "AbsentReplyWrongParent", in: seenBefore(replyIntent(), u1), search: complete(verify.Item{Author: "alice", Text: "Agreed.", Parent: "https://site.test/bob/status/2", URL: u1, At: t0}), want: verify.Absent},
		// A reply the site filed under another parent (or a top-level
		// comment where a nested one was asked for), new since the click.
		{name: "AmbiguousReplyUnexplainedParent", in: seenBefore(replyIntent()), search: complete(verify.Item{Author: "alice", Text: "Agreed.", Parent: "https://site.test/bob/status/2", URL: u1, At: t0}), want: verify.Ambiguous},

		{name: "AmbiguousDelayedVisibilityInsideSettle", in: postIntent(), search: verify.Search{Complete: true, ObservedAt: t0.Add(30 * time.Second)}, want: verify.Ambiguous},
		{name: "AmbiguousIncompleteView", in: postIntent(), search: verify.Search{Complete: false, ObservedAt: t0.Add(time.Hour)}, want: verify.Ambiguous},
		{name: "AmbiguousNoObservedAt", in: postIntent(), search: verify.Search{Complete: true}, want: verify.Ambiguous},
		{name: "AmbiguousMatchWithoutURL", in: postIntent(), search: complete(item("")), want: verify.Ambiguous},
		{name: "AmbiguousMatchWithRelativeURL", in: postIntent(), search: complete(item("/alice/status/10")), want: verify.Ambiguous},
		{name: "AmbiguousMatchWithoutTime", in: postIntent(), search: complete(with(item(u1), func(i *verify.Item) { i.At = time.Time{} })), want: verify.Ambiguous},
		{name: "AmbiguousMatchPlusURLLessMatch", in: postIntent(), search: complete(item(u1), item("")), want: verify.Ambiguous, wantN: 1},
		{name: "AmbiguousLikeIntent", in: verify.Intent{Kind: kind.Like, Actor: "alice", Target: u1, NotBefore: t0}, search: complete(), want: verify.Ambiguous},
		{name: "AmbiguousUnknownType", in: verify.Intent{Kind: "repost", Actor: "alice", Text: "x", NotBefore: t0}, search: complete(), want: verify.Ambiguous},
		{name: "AmbiguousNoActor", in: verify.Intent{Kind: kind.Post, Actor: "@", Text: "x", NotBefore: t0}, search: complete(), want: verify.Ambiguous},
		{name: "AmbiguousNoNotBefore", in: verify.Intent{Kind: kind.Post, Actor: "alice", Text: "x"}, search: complete(), want: verify.Ambiguous},
		{name: "AmbiguousEmptyPayload", in: verify.Intent{Kind: kind.Post, Actor: "alice", Text: "  ", NotBefore: t0}, search: complete(), want: verify.Ambiguous},
		{name: "AmbiguousMediaWithoutType", in: verify.Intent{Kind: kind.Post, Actor: "alice", Text: "x", Media: []verify.Media{{Alt: "a"}}, NotBefore: t0}, search: complete(), want: verify.Ambiguous},
		{name: "AmbiguousReplyWithoutParent", in: verify.Intent{Kind: kind.Reply, Actor: "alice", Text: "x", NotBefore: t0}, search: complete(), want: verify.Ambiguous},
		{name: "AmbiguousPostWithParent", in: verify.Intent{Kind: kind.Post, Actor: "alice", Text: "x", ExpectedParent: u2, NotBefore: t0}, search: complete(), want: verify.Ambiguous},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v := verify.Classify(tt.in, tt.search, opts)
			if v.Outcome != tt.want {
				t.Fatalf("got %v (%s), want %v", v.Outcome, v.Reason, tt.want)
			}
			if v.URL != tt.wantURL {
				t.Errorf("URL: got %q, want %q", v.URL, tt.wantURL)
			}
			if len(v.URLs) != tt.wantN {
				t.Errorf("URLs: got %v, want %d", v.URLs, tt.wantN)
			}
			if v.Reason == "" {
				t.Error("empty reason")
			}
			if len(verify.Normalize(tt.in.Text)) > 3 && strings.Contains(v.Reason, verify.Normalize(tt.in.Text)) {
				t.Errorf("reason %q contains the post text", v.Reason)
			}
		})
	}
}

func TestClassifyDuplicateListsAll(t *testing.T) {
	t.Parallel()
	const u1, u2, u3 = "https://site.test/s/1", "https://site.test/s/2", "https://site.test/s/3"
	v := verify.Classify(postIntent(), complete(item(u1), item(u2), item(u3)), opts)
	if v.Outcome != verify.Duplicate {
		t.Fatalf("got %v, want %v", v.Outcome, verify.Duplicate)
	}
	if v.URL != "" {
		t.Errorf("URL: got %q, want empty", v.URL)
	}
	want := []string{u1, u2, u3}
	for i := range want {
		if i >= len(v.URLs) || v.URLs[i] != want[i] {
			t.Fatalf("URLs: got %v, want %v", v.URLs, want)
		}
	}
}

func TestClassifyNegativeOptionsClamp(t *testing.T) {
	t.Parallel()
	// A negative settle must not make absence definitive before NotBefore.
	s := verify.Search{Complete: true, ObservedAt: t0.Add(-time.Minute)}
	v := verify.Classify(postIntent(), s, verify.Options{Settle: -time.Hour, Skew: -time.Hour})
	if v.Outcome != verify.Ambiguous {
		t.Fatalf("got %v, want %v", v.Outcome, verify.Ambiguous)
	}
}

func TestOutcomeString(t *testing.T) {
	t.Parallel()
	var zero verify.Verdict
	if zero.Outcome != verify.Ambiguous {
		t.Fatalf("zero Verdict: got %v, want %v", zero.Outcome, verify.Ambiguous)
	}
	for o, want := range map[verify.Outcome]string{verify.Ambiguous: "ambiguous", verify.Verified: "verified", verify.Absent: "absent", verify.Duplicate: "duplicate", 42: "unknown"} {
		if o.String() != want {
			t.Errorf("got %q, want %q", o.String(), want)
		}
		b, _ := o.MarshalText()
		if string(b) != want {
			t.Errorf("MarshalText: got %q, want %q", b, want)
		}
	}
}

// An identical item just before the action is not its result, but under a
// clock further off than the skew it may be: it never lets absence be
// proven (seed 113 of the torture run). One far older is just an older post.
func TestClassifySuspectOlderItem(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	in := verify.Intent{Kind: kind.Post, Actor: "alice", Text: "same text", NotBefore: at}
	opts := verify.Options{Skew: 5 * time.Second, Settle: time.Second}
	item := func(age time.Duration) verify.Search {
		return verify.Search{Complete: true, ObservedAt: at.Add(time.Minute), Items: []verify.Item{
			{Author: "alice", Text: "same text", URL: "http://x.test/p/1", At: at.Add(-age)}}}
	}
	if v := verify.Classify(in, item(10*time.Second), opts); v.Outcome != verify.Ambiguous {
		t.Fatalf("10s older than the action with a 5s skew: got %v, want ambiguous", v.Outcome)
	}
	if v := verify.Classify(in, item(time.Hour), opts); v.Outcome != verify.Absent {
		t.Fatalf("an hour older: got %v, want absent", v.Outcome)
	}
	opts.Suspect = time.Hour + time.Minute
	if v := verify.Classify(in, item(time.Hour), opts); v.Outcome != verify.Ambiguous {
		t.Fatalf("inside a wider suspect window: got %v, want ambiguous", v.Outcome)
	}
}

// With a baseline taken before the click, the result is told from older
// identical posts by URL, not by time, so clocks that disagree by hours
// can neither hide the result (seed 264) nor pass an older post off as it
// (seed 1610).
func TestClassifyWithBaseline(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	opts := verify.Options{Skew: 5 * time.Second, Settle: time.Second}
	older := verify.Item{Author: "alice", Text: "twin", URL: "http://x.test/p/1", At: at.Add(3 * time.Hour)} // site clock far ahead
	before := verify.Search{Complete: true, ObservedAt: at, Items: []verify.Item{older}}
	in := verify.Intent{Kind: kind.Post, Actor: "alice", Text: "twin", NotBefore: at}
	base, ok := verify.BaselineOf(in, before)
	if !ok || len(base) != 1 {
		t.Fatalf("baseline: got %v %v, want the one older twin", base, ok)
	}
	in.Baseline, in.HaveBaseline = base, true
	after := before
	after.ObservedAt = at.Add(time.Minute)
	if v := verify.Classify(in, after, opts); v.Outcome != verify.Absent {
		t.Fatalf("only the older twin: got %v (%s), want absent, not a false verified", v.Outcome, v.Reason)
	}
	ours := verify.Item{Author: "alice", Text: "twin", URL: "http://x.test/p/2", At: at.Add(-time.Hour)} // local clock far ahead
	after.Items = append(after.Items, ours)
	if v := verify.Classify(in, after, opts); v.Outcome != verify.Verified || v.URL != "http://x.test/p/2" {
		t.Fatalf("the new twin: got %v %q, want verified p/2", v.Outcome, v.URL)
	}
	if _, ok := verify.BaselineOf(in, verify.Search{Complete: false}); ok {
		t.Fatal("an incomplete search is no baseline")
	}

	// With media: an item with the text and other media that was there
	// before is in the baseline, and the result is told apart by URL.
	img := in
	img.Baseline, img.HaveBaseline = nil, false
	img.Media = []verify.Media{{Type: "png", Alt: "a dot"}}
	base, ok = verify.BaselineOf(img, before)
	if !ok || len(base) != 1 {
		t.Fatalf("baseline with media: got %v %v, want the text-only twin", base, ok)
	}
	img.Baseline, img.HaveBaseline = base, true
	mine := verify.Item{Author: "alice", Text: "twin", URL: "http://x.test/p/3", At: at, Media: []verify.Media{{Type: "png", Alt: "a dot", AltShown: true}}}
	after = verify.Search{Complete: true, ObservedAt: at.Add(time.Minute), Items: []verify.Item{mine, older}}
	if v := verify.Classify(img, after, opts); v.Outcome != verify.Verified || v.URL != "http://x.test/p/3" {
		t.Fatalf("the image post beside the older text-only twin: got %v %q (%s)", v.Outcome, v.URL, v.Reason)
	}
	// An item the baseline could not name makes no baseline: it could never
	// be told from the result.
	noURL := before
	noURL.Items = []verify.Item{{Author: "alice", Text: "twin", At: at}}
	if _, ok := verify.BaselineOf(img, noURL); ok {
		t.Fatal("a baseline with an item without a canonical URL")
	}
}

// A submission that may surface late (the site answered it, or it timed
// out) is never proven absent without a bound from the site; with one, a
// complete view observed after SettleStart + SurfaceWithin proves it
// absent, counted from the later SettleFrom when the clicking tab outlived
// the click.
func TestClassifyMaySurface(t *testing.T) {
	t.Parallel()
	in := postIntent()
	in.MaySurface = true
	at := func(d time.Duration) verify.Search {
		return verify.Search{Items: []verify.Item{older}, Complete: true, ObservedAt: t0.Add(d)}
	}
	// The bound ends "may surface" only where absence could be proven at
	// all: not beside an unexplained item of the actor, not in a blind view.
	rewritten := at(2 * time.Hour)
	rewritten.Items = append([]verify.Item{with(item("https://site.test/alice/status/10"), func(i *verify.Item) { i.Text = "Hello, world 🚀 #signed" })}, rewritten.Items...)
	blind := verify.Search{Complete: true, ObservedAt: t0.Add(2 * time.Hour)}
	bound := opts
	bound.SurfaceWithin = time.Hour
	late := in
	late.SettleFrom = t0.Add(30 * time.Minute)
	tests := []struct {
		name string
		in   verify.Intent
		s    verify.Search
		o    verify.Options
		want verify.Outcome
	}{
		{"NoBoundNeverAbsent", in, at(48 * time.Hour), opts, verify.Ambiguous},
		{"InsideTheBound", in, at(59 * time.Minute), bound, verify.Ambiguous},
		{"AtTheBound", in, at(time.Hour), bound, verify.Absent},
		{"AfterTheBound", in, at(2 * time.Hour), bound, verify.Absent},
		{"AfterTheBoundIncomplete", in, verify.Search{ObservedAt: t0.Add(2 * time.Hour)}, bound, verify.Ambiguous},
		{"AfterTheBoundUnexplained", in, rewritten, bound, verify.Ambiguous},
		{"AfterTheBoundBlind", in, blind, bound, verify.Ambiguous},
		{"BoundCountsFromSettleFrom", late, at(time.Hour + 10*time.Minute), bound, verify.Ambiguous},
		{"AfterTheBoundFromSettleFrom", late, at(time.Hour + 30*time.Minute), bound, verify.Absent},
		{"BoundShorterThanSettle", in, at(time.Minute), verify.Options{Settle: 2 * time.Minute, SurfaceWithin: time.Second}, verify.Ambiguous},
		{"FoundInsideTheBound", in, complete(item("https://site.test/alice/status/10")), bound, verify.Verified},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if v := verify.Classify(tt.in, tt.s, tt.o); v.Outcome != tt.want {
				t.Fatalf("got %v (%s), want %v", v.Outcome, v.Reason, tt.want)
			}
		})
	}
	// Without MaySurface the bound changes nothing.
	if v := verify.Classify(postIntent(), at(3*time.Minute), bound); v.Outcome != verify.Absent {
		t.Fatalf("without MaySurface: got %v (%s), want absent", v.Outcome, v.Reason)
	}
}

// The reason of an ambiguous verdict says how many items could not be
// read and why, in fixed form, never with what the page said.
func TestClassifyUnreadSummary(t *testing.T) {
	t.Parallel()
	s := verify.Search{Complete: false, ObservedAt: t0.Add(time.Hour), Unread: [][]string{
		{"author missing"}, {"author missing", "time unparsable"}, {"author missing"},
		{"link: https://evil.test/\"secret text\" is offsite"},
	}}
	v := verify.Classify(postIntent(), s, opts)
	if v.Outcome != verify.Ambiguous {
		t.Fatalf("got %v, want ambiguous", v.Outcome)
	}
	want := "no exact match, but the view does not cover the whole window; " +
		"4 items could not be read (author missing: 3, time unparsable: 1, unreadable field: 1)"
	if v.Reason != want {
		t.Fatalf("reason:\n got %q\nwant %q", v.Reason, want)
	}
	one := verify.Search{ObservedAt: t0.Add(time.Hour), Unread: [][]string{{"time unparsable"}}}
	if v := verify.Classify(postIntent(), one, opts); !strings.HasSuffix(v.Reason, "; 1 item could not be read (time unparsable: 1)") {
		t.Fatalf("reason: got %q", v.Reason)
	}
	// A verdict that is not ambiguous says nothing of them.
	found := verify.Search{Items: []verify.Item{item("https://site.test/alice/status/10")}, ObservedAt: t0.Add(time.Hour), Unread: s.Unread}
	if v := verify.Classify(postIntent(), found, opts); v.Outcome != verify.Verified || strings.Contains(v.Reason, "could not be read") {
		t.Fatalf("got %v (%s), want verified without the count", v.Outcome, v.Reason)
	}
}

// What the landed page read is compared; what it did not read proves
// nothing.
func TestCheckLanded(t *testing.T) {
	t.Parallel()
	in := postIntent()
	tests := []struct {
		name string
		l    verify.LandedResult
		ok   bool
	}{
		{"NothingRead", verify.LandedResult{Text: "other", Author: "mallory"}, true},
		{"SameText", verify.LandedResult{Text: " Hello,\u00a0world 🚀 ", ReadText: true}, true},
		{"OtherText", verify.LandedResult{Text: "Hello, world", ReadText: true}, false},
		{"TextReadEmpty", verify.LandedResult{ReadText: true}, false},
		{"SameAuthor", verify.LandedResult{Author: "@alice", ReadAuthor: true}, true},
		{"OtherAuthor", verify.LandedResult{Author: "mallory", ReadAuthor: true}, false},
		{"AuthorCaseDiffers", verify.LandedResult{Author: "Alice", ReadAuthor: true}, false},
		{"BothRight", verify.LandedResult{Text: "Hello, world 🚀", ReadText: true, Author: "alice", ReadAuthor: true}, true},
		{"MediaNotRead", verify.LandedResult{Media: shown(twoImages)}, true},
		{"NoMediaRead", verify.LandedResult{ReadMedia: true}, true},
		{"MediaWhereNoneIntended", verify.LandedResult{Media: shown(twoImages), ReadMedia: true}, false},
	}
	images := []struct {
		name string
		l    verify.LandedResult
		ok   bool
	}{
		{"SameMedia", verify.LandedResult{Media: shown(twoImages), ReadMedia: true}, true},
		{"AltHidden", verify.LandedResult{Media: []verify.Media{{Type: "png"}, {Type: "jpeg"}}, ReadMedia: true}, true},
		{"Reencoded", verify.LandedResult{Media: []verify.Media{{Type: "jpeg", Alt: "A red square", AltShown: true}, {Type: "jpeg", AltShown: true}}, ReadMedia: true}, false},
		{"AltDropped", verify.LandedResult{Media: []verify.Media{{Type: "png", AltShown: true}, {Type: "jpeg", AltShown: true}}, ReadMedia: true}, false},
		{"OneLost", verify.LandedResult{Media: shown(twoImages)[:1], ReadMedia: true}, false},
	}
	for _, tt := range images {
		t.Run("Image"+tt.name, func(t *testing.T) {
			t.Parallel()
			if why := verify.CheckLandedResult(imageIntent(), tt.l); (why == "") != tt.ok {
				t.Fatalf("got %q, want ok=%v", why, tt.ok)
			}
		})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			why := verify.CheckLandedResult(in, tt.l)
			if (why == "") != tt.ok {
				t.Fatalf("got %q, want ok=%v", why, tt.ok)
			}
			if strings.Contains(why, "Hello") || strings.Contains(why, "mallory") {
				t.Fatalf("reason %q carries page text", why)
			}
		})
	}
}

// An unexplained item is handed to the caller with what differs, so the
// person reads which item to check (docs/design.md invariant 12).
func TestClassifyNamesUnexplained(t *testing.T) {
	t.Parallel()
	const u = "https://site.test/alice/status/10"
	rewritten := with(item(u), func(i *verify.Item) { i.Text = "Hello, world 🚀\n-- alice" })
	v := verify.Classify(seenBefore(postIntent()), complete(rewritten), opts)
	if v.Outcome != verify.Ambiguous || len(v.Unexplained) != 1 {
		t.Fatalf("got %v with %d unexplained (%s), want ambiguous with one", v.Outcome, len(v.Unexplained), v.Reason)
	}
	if got := v.Unexplained[0]; got.Item.URL != u || got.Why != "its text differs from the intended text" {
		t.Fatalf("unexplained: got %+v", got)
	}
	if strings.Contains(v.Reason, "alice") {
		t.Fatalf("the reason carries page text: %q", v.Reason)
	}
	// Another account's item is no unexplained item of the actor's.
	other := with(rewritten, func(i *verify.Item) { i.Author = "bob" })
	if v := verify.Classify(seenBefore(postIntent()), complete(other), opts); v.Outcome != verify.Absent {
		t.Fatalf("another author's item: got %v (%s), want absent", v.Outcome, v.Reason)
	}
}
