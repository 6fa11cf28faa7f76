package verify_test

import (
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/verify"
)

// trickyRunes are the characters Normalize treats specially, plus ordinary
// ones, so generated strings hit every rule often.
var trickyRunes = []rune{'a', 'B', 'e', ' ', ' ', '\t', '\n', '\r', '\v', '\u00a0', '\u2000', '\u2001', '\u202f', '\u3000', '\u0085', '\u2028', '\u0301', '\u0308', '\u00e9', '\u200b', '🚀', '\ufeff'}

func TestPropNormalizeIdempotent(t *testing.T) {
	t.Parallel()
	gen := rapid.OneOf(rapid.String(), rapid.StringOf(rapid.SampledFrom(trickyRunes)))
	rapid.Check(t, func(t *rapid.T) {
		s := gen.Draw(t, "s")
		n := verify.Normalize(s)
		if again := verify.Normalize(n); again != n {
			t.Fatalf("Normalize not idempotent: %q -> %q -> %q", s, n, again)
		}
	})
}

// refExact is the exact-match predicate written out from the contract,
// independently of the implementation; it returns the distinct canonical
// URLs of the exact matches.
func refExact(in verify.Intent, items []verify.Item, skew time.Duration) []string {
	var urls []string
	for _, it := range items {
		if strings.TrimPrefix(strings.TrimSpace(it.Author), "@") != strings.TrimPrefix(strings.TrimSpace(in.Actor), "@") {
			continue
		}
		if verify.Normalize(it.Text) != verify.Normalize(in.Text) || !refSameMedia(in.Media, it.Media) {
			continue
		}
		if verify.NormalizeURL(it.Parent) != verify.NormalizeURL(in.ExpectedParent) {
			continue
		}
		if it.At.IsZero() || it.At.Before(in.NotBefore.Add(-skew)) {
			continue
		}
		u, err := url.Parse(it.URL)
		if err != nil || (!strings.EqualFold(u.Scheme, "http") && !strings.EqualFold(u.Scheme, "https")) || u.Host == "" {
			continue
		}
		if n := verify.NormalizeURL(it.URL); !slices.Contains(urls, n) {
			urls = append(urls, n)
		}
	}
	return urls
}

// refSameMedia is the media rule written out: as many items, in order,
// each of the same type, and of the same alt text where the page shows it.
func refSameMedia(want, got []verify.Media) bool {
	if len(want) != len(got) {
		return false
	}
	for i := range want {
		if want[i].Type != got[i].Type || got[i].AltShown && verify.Normalize(got[i].Alt) != verify.Normalize(want[i].Alt) {
			return false
		}
	}
	return true
}

// mediaPool is what an intent attaches.
var mediaPool = [][]verify.Media{nil, {{Type: "png", Alt: "A red square"}}, {{Type: "jpeg", Alt: ""}, {Type: "png", Alt: "Two"}}}

// otherMedia returns media like want but for one change a site could
// make: a re-encoded type, an alt text dropped or hidden, an item lost.
func otherMedia(t *rapid.T, want []verify.Media) []verify.Media {
	got := make([]verify.Media, len(want))
	for i, m := range want {
		got[i] = verify.Media{Type: m.Type, Alt: m.Alt, AltShown: true}
	}
	switch rapid.IntRange(0, 4).Draw(t, "mediaChange") {
	case 0:
		if len(got) > 0 {
			got[0].Type = "jpeg"
			if want[0].Type == "jpeg" {
				got[0].Type = "webp"
			}
		} else {
			got = append(got, verify.Media{Type: "png", AltShown: true})
		}
	case 1:
		if len(got) > 0 {
			got[0].Alt = ""
			if want[0].Alt == "" {
				got[0].Alt = "x"
			}
		} else {
			got = append(got, verify.Media{Type: "gif"})
		}
	case 2:
		for i := range got {
			got[i].Alt, got[i].AltShown = "", false // hidden: still the same media
		}
	case 3:
		if len(got) > 0 {
			got = got[1:]
		} else {
			got = append(got, verify.Media{Type: "png", AltShown: true})
		}
	case 4:
		got = append(got, verify.Media{Type: "png", AltShown: true})
	}
	return got
}

func TestPropClassify(t *testing.T) {
	t.Parallel()
	const parent = "https://site.test/bob/status/1"
	texts := []string{"Hello zebra 🚀", "Hello  zebra 🚀 ", "hello zebra 🚀", "Hello zebra", "Hello\u00a0zebra 🚀"}
	authors := []string{"alice", "@alice", "Alice", "bob", ""}
	parents := []string{"", parent, "HTTPS://SITE.test:443/bob/status/1#c", "https://site.test/bob/status/2"}
	urls := []string{"", "/alice/status/9", "https://site.test/alice/status/10", "HTTPS://site.test/alice/status/10#x", "https://site.test/alice/status/11", "https://site.test/alice/status/12", "https://site.test/alice/status/12", "ftp://site.test/x"}
	offsets := []time.Duration{0, -time.Hour, -10 * time.Second, -5 * time.Second, -time.Second, time.Second, time.Minute, 3 * time.Minute}

	rapid.Check(t, func(t *rapid.T) {
		typ := rapid.SampledFrom([]kind.Kind{kind.Post, kind.Reply, kind.ThreadPart}).Draw(t, "type")
		in := verify.Intent{
			Kind:      typ,
			Actor:     rapid.SampledFrom([]string{"alice", "@alice"}).Draw(t, "actor"),
			Text:      texts[0],
			Media:     rapid.SampledFrom(mediaPool).Draw(t, "media"),
			NotBefore: t0,
		}
		if typ != kind.Post {
			in.ExpectedParent = rapid.SampledFrom([]string{parent, ""}).Draw(t, "parent")
		}
		// Each field of an item is usually the intent's (or an equivalent
		// form), sometimes anything from the pool, so every outcome is
		// common.
		pick := func(t *rapid.T, label, same string, pool []string) string {
			if rapid.IntRange(0, 3).Draw(t, label+"Same") > 0 {
				return same
			}
			return rapid.SampledFrom(pool).Draw(t, label)
		}
		items := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) verify.Item {
			it := verify.Item{
				Author: pick(t, "author", in.Actor, authors),
				Text:   pick(t, "text", in.Text, texts),
				Parent: pick(t, "parent", in.ExpectedParent, parents),
				URL:    rapid.SampledFrom(urls).Draw(t, "url"),
			}
			for _, m := range in.Media {
				it.Media = append(it.Media, verify.Media{Type: m.Type, Alt: m.Alt, AltShown: true})
			}
			if rapid.IntRange(0, 3).Draw(t, "otherMedia") == 0 {
				it.Media = otherMedia(t, in.Media)
			}
			if rapid.IntRange(0, 9).Draw(t, "hasTime") > 0 {
				it.At = t0.Add(rapid.SampledFrom(offsets).Draw(t, "at"))
			}
			return it
		}), 0, 4).Draw(t, "items")
		s := verify.Search{
			Items:      items,
			Complete:   rapid.Bool().Draw(t, "complete"),
			ObservedAt: t0.Add(rapid.SampledFrom(offsets).Draw(t, "observed")),
		}
		o := verify.Options{
			Settle: rapid.SampledFrom([]time.Duration{0, time.Minute, 2 * time.Minute}).Draw(t, "settle"),
			Skew:   rapid.SampledFrom([]time.Duration{0, 5 * time.Second}).Draw(t, "skew"),
		}

		v := verify.Classify(in, s, o)
		exact := refExact(in, items, o.Skew)
		invalid := in.Kind == kind.Reply && in.ExpectedParent == ""

		switch v.Outcome {
		case verify.Verified:
			if len(exact) != 1 || v.URL != exact[0] {
				t.Fatalf("Verified %q with reference exact matches %v", v.URL, exact)
			}
			// Beside an item with the intended text and other media (since
			// NotBefore - Skew), which may be the result as the site
			// changed it, one exact match proves nothing.
			for _, it := range items {
				if strings.TrimPrefix(strings.TrimSpace(it.Author), "@") == strings.TrimPrefix(in.Actor, "@") &&
					verify.Normalize(it.Text) == verify.Normalize(in.Text) &&
					verify.NormalizeURL(it.Parent) == verify.NormalizeURL(in.ExpectedParent) &&
					!refSameMedia(in.Media, it.Media) && (it.At.IsZero() || !it.At.Before(in.NotBefore.Add(-o.Skew))) {
					t.Fatalf("Verified beside an item with the intended text and media %v (intended %v)", it.Media, in.Media)
				}
			}
		case verify.Duplicate:
			if len(exact) < 2 || !slices.Equal(v.URLs, exact) {
				t.Fatalf("Duplicate %v with reference exact matches %v", v.URLs, exact)
			}
		case verify.Absent:
			if !s.Complete {
				t.Fatal("Absent from an incomplete view")
			}
			if len(exact) != 0 {
				t.Fatalf("Absent with exact matches %v", exact)
			}
			if s.ObservedAt.Before(in.NotBefore.Add(o.Settle)) {
				t.Fatal("Absent inside the settle window")
			}
			// An item with the intended text and other media may be this
			// action's result, changed by the site: never proof of absence.
			for _, it := range items {
				if strings.TrimPrefix(strings.TrimSpace(it.Author), "@") == strings.TrimPrefix(in.Actor, "@") &&
					verify.Normalize(it.Text) == verify.Normalize(in.Text) &&
					verify.NormalizeURL(it.Parent) == verify.NormalizeURL(in.ExpectedParent) &&
					(it.At.IsZero() || !it.At.Before(in.NotBefore.Add(-o.Skew-verify.DefaultSuspect))) {
					t.Fatalf("Absent beside an item with the intended text and media %v (intended %v)", it.Media, in.Media)
				}
			}
		}
		if !invalid && len(exact) >= 2 && v.Outcome != verify.Duplicate {
			t.Fatalf("got %v with %d distinct exact matches, want Duplicate", v.Outcome, len(exact))
		}
		if invalid && v.Outcome != verify.Ambiguous {
			t.Fatalf("got %v for an invalid intent, want Ambiguous", v.Outcome)
		}
		if strings.Contains(v.Reason, "zebra") || strings.Contains(v.Reason, "alice") {
			t.Fatalf("reason %q carries observed values", v.Reason)
		}
	})
}
