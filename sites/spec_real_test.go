package sites_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/sites"
)

// realKeys adds the keys of real sites to the demo adapter.
func realKeys(t *testing.T, extra string) *sites.Declarative {
	t.Helper()
	d, err := sites.Parse("real.yaml", append(mustRead(t, demoPath), []byte("\n"+extra)...))
	require.NoError(t, err)
	return d
}

func TestCanonical(t *testing.T) {
	plain := realKeys(t, "")
	require.Equal(t, "http://127.0.0.1:8787/p/1?a=1", plain.Canonical("HTTP://127.0.0.1:8787/p/1?a=1#comment-3"),
		"by default the fragment goes and the query stays")
	require.Equal(t, "not a url", plain.Canonical("not a url"))

	d := realKeys(t, `canonical:
  keep_fragment: 'comment-\d+'
  keep_query: [p, title, oldid]
  rewrite:
    - match: '\?title=([^&]+)&oldid=\d+'
      replace: '/wiki/$1'
`)
	for _, tc := range []struct{ in, want string }{
		{"http://127.0.0.1:8787/?p=5&unapproved=7&moderation-hash=x#comment-7", "http://127.0.0.1:8787/?p=5#comment-7"},
		{"http://127.0.0.1:8787/?p=5#respond", "http://127.0.0.1:8787/?p=5"},
		{"http://127.0.0.1:8787/?p=5#comment-7x", "http://127.0.0.1:8787/?p=5"},
		{"http://127.0.0.1:8787/index.php?title=Main&oldid=12", "http://127.0.0.1:8787/index.php/wiki/Main"},
	} {
		require.Equal(t, tc.want, d.Canonical(tc.in), tc.in)
	}
	drop := realKeys(t, "canonical:\n  drop_query: [utm_source, ref]\n")
	require.Equal(t, "http://127.0.0.1:8787/p/1?x=1", drop.Canonical("http://127.0.0.1:8787/p/1?utm_source=a&x=1&ref=b"))
}

func TestExpectedTitleBodyAndTransforms(t *testing.T) {
	d := realKeys(t, "")
	require.Equal(t, "one\n\ntwo", d.Expected(kind.Post, "alice", "one\n\ntwo", time.Now()), "no split, no transforms: the text itself")

	split := demoWith(t, "    fill:\n      selector: \"textarea#compose-text\"\n",
		"    fields:\n      - selector: \"textarea#compose-text\"\n        value: \"{title}\"\n      - selector: \"textarea#other\"\n        value: \"{body}\"\n")
	split = append(split, []byte("\ntransforms:\n  - match: '~~~~'\n    replace: '— alice'\n")...)
	d, err := sites.Parse("split.yaml", split)
	require.NoError(t, err)
	require.Equal(t, "Title\nBody line\nmore — alice", d.Expected(kind.Post, "alice", "Title\r\n\r\nBody line\nmore ~~~~", time.Now()))
	require.Equal(t, "Hello\n\nthere — alice", d.Expected(kind.Reply, "alice", "Hello\n\nthere ~~~~", time.Now()),
		"the reply fills one field, so it keeps its blank line; the site's transforms apply to every kind")
}

func TestParseRealKeyErrors(t *testing.T) {
	for _, tc := range []struct{ name, old, new, want string }{
		{"FieldsAndFill", "    fill:\n      selector: \"textarea#compose-text\"\n",
			"    fill:\n      selector: \"textarea#compose-text\"\n    fields:\n      - selector: x\n", "actions.post: give fill or fields, not both"},
		{"TitleWithoutBody", "    fill:\n      selector: \"textarea#compose-text\"\n",
			"    fields:\n      - selector: \"#t\"\n        value: \"{title}\"\n", "actions.post.fields: must fill the whole text"},
		{"UnknownValue", "    fill:\n      selector: \"textarea#compose-text\"\n",
			"    fields:\n      - selector: \"#t\"\n        value: \"{subject}\"\n", `actions.post.fields[0].value: "{subject}"`},
		{"StepEmpty", "    open: \"{origin}/compose\"\n", "    open: \"{origin}/compose\"\n    steps:\n      - if: \"#x\"\n", "actions.post.steps[0]: needs click, type, wait or gone"},
		{"LandedEmpty", "    open: \"{origin}/compose\"\n", "    open: \"{origin}/compose\"\n    landed: {}\n", "actions.post.landed: needs navigation"},
		{"LandedRegexp", "    open: \"{origin}/compose\"\n", "    open: \"{origin}/compose\"\n    landed:\n      response: {method: POST, url: \"(\"}\n", "actions.post.landed.response.url: not a regular expression"},
		{"LandedMethod", "    open: \"{origin}/compose\"\n", "    open: \"{origin}/compose\"\n    landed:\n      response: {method: post, url: \"/api\"}\n", `actions.post.landed.response.method: "post"`},
		{"TimeLayoutNoZone", "  time: {selector: \"time\", attribute: datetime}\n  parent:",
			"  time: {selector: \"time\", layout: \"2006/01/02 at 3:04 pm\"}\n  parent:", "search.time.layout: \"2006/01/02 at 3:04 pm\" has no time zone"},
		{"TimeZoneUnknown", "  time: {selector: \"time\", attribute: datetime}\n  parent:",
			"  time: {selector: \"time\", layout: \"2006/01/02 at 3:04 pm\", zone: Mars/Olympus}\n  parent:", "search.time.zone: \"Mars/Olympus\" is not a time zone"},
		{"SearchTextOutsideQuery", `url: "{origin}/u/{actor}"`, `url: "{origin}/u/{text}"`, "search.url: {text} may only appear in the query"},
		{"SurfaceBelowSettle", "  settle: 15s\n", "  settle: 15s\n  surface_within: 5s\n", "search.surface_within: must be at least settle"},
		{"ShowsUnknown", "  attribute: data-handle\n", "  attribute: data-handle\n  shows: nickname\n", `identity.shows: "nickname" is not one of login, slug, name`},
		{"RefusalKind", "  - kind: rate_limit\n    status: 429\n    message:", "  - kind: spam\n    status: 429\n    message:", `refusals[0].kind: "spam" is not one of`},
		{"RefusalStatus", "  - kind: rate_limit\n    status: 429\n    message:", "  - kind: rate_limit\n    status: 200\n    message:", "refusals[0].status: 200 is not an HTTP client error status"},
		{"RefusalServerError", "  - kind: rate_limit\n    status: 429\n    message:", "  - kind: rate_limit\n    status: 500\n    message:", "refusals[0].status: 500 is a server error, which may come after the site saved the item"},
		{"RefusalEmpty", "  - kind: rate_limit\n    status: 429\n    message: \"h1#rate-limited\"\n", "  - kind: rate_limit\n", "refusals[0]: needs a selector, a status or both"},
		{"LikeSearch", "      not_done_value: like\n", "      not_done_value: like\n    search:\n      url: \"{origin}/x\"\n", "actions.like.search: like and follow read their control"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := sites.Parse("demo.yaml", demoWith(t, tc.old, tc.new))
			require.ErrorIs(t, err, sites.ErrInvalid)
			require.ErrorContains(t, err, tc.want)
		})
	}
	for _, tc := range []struct{ name, extra, want string }{
		{"ModerationSelector", "moderation: {}\n", "moderation.selector: required"},
		{"CanonicalBoth", "canonical:\n  keep_query: [p]\n  drop_query: [x]\n", "canonical: give keep_query or drop_query, not both"},
		{"CanonicalFragment", "canonical:\n  keep_fragment: \"(\"\n", "canonical.keep_fragment: not a regular expression"},
		{"Transform", "transforms:\n  - replace: x\n", "transforms[0].match: required"},
		{"AccountSlug", "accounts:\n  alice:\n    slug: \"a b\"\n", `accounts.alice.slug: "a b" does not fit a URL`},
		{"AccountNameTwice", "accounts:\n  alice:\n    name: Al\n  bob:\n    name: Al\n", "name:Al is also"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := sites.Parse("demo.yaml", append(mustRead(t, demoPath), []byte("\n"+tc.extra)...))
			require.ErrorIs(t, err, sites.ErrInvalid)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// A kind's own transforms replace the site's, and a transform may name
// the actor and the moment the action went executing, as a wiki's
// signature (~~~~) shows them. A "$" in a name stays itself.
func TestTransformsSignAndPerKind(t *testing.T) {
	y := string(demoWith(t, "      selector: \"textarea#reply-text\"\n", "      selector: \"textarea#reply-text\"\n    transforms:\n"+
		"      - match: '~~~~'\n        replace: '{actor.name} (talk) {time:15:04, 2 January 2006} (UTC)'\n"+
		"      - match: '~~~'\n        replace: '{actor.name} ({actor})'\n"))
	y += "\naccounts:\n  alice:\n    name: \"Alice $1 Liddell\"\ntransforms:\n  - match: '~~~~'\n    replace: 'site-wide'\n"
	d, err := sites.Parse("demo.yaml", []byte(y))
	require.NoError(t, err)
	at := time.Date(2026, 12, 3, 9, 5, 0, 0, time.FixedZone("CET", 3600))
	require.Equal(t, "Thanks Alice $1 Liddell (talk) 08:05, 3 December 2026 (UTC)", d.Expected(kind.Reply, "alice", "Thanks ~~~~", at))
	require.Equal(t, "Hi Alice $1 Liddell (alice)", d.Expected(kind.Reply, "alice", "Hi ~~~", at))
	groups := string(demoWith(t, "      selector: \"textarea#reply-text\"\n", "      selector: \"textarea#reply-text\"\n    transforms:\n"+
		"      - match: '(?P<w>\\w+)!'\n        replace: '${w}, {actor}!'\n"))
	d2, err := sites.Parse("demo.yaml", []byte(groups))
	require.NoError(t, err, "${w} is the group, not a placeholder")
	require.Equal(t, "Hi, alice!", d2.Expected(kind.Reply, "alice", "Hi!", at))
	require.Equal(t, "A post site-wide", d.Expected(kind.Post, "alice", "A post ~~~~", at), "the post keeps the site's transforms")

	for _, tc := range []struct{ add, want string }{
		{"transforms:\n  - match: 'x'\n    replace: '{actor.email}'\n", "transforms[0].replace: unknown placeholder {actor.email}"},
		{"canonical:\n  rewrite:\n    - match: 'x'\n      replace: '{actor}'\n", "canonical.rewrite[0].replace: a canonical rewrite names no actor or time"},
		{"transforms:\n  - match: 'x'\n    replace: 'y'\n    zone: Mars/Olympus\n", `transforms[0].zone: "Mars/Olympus" is not a time zone name`},
	} {
		_, err := sites.Parse("demo.yaml", append(demoWith(t, "", ""), []byte("\n"+tc.add)...))
		require.ErrorContains(t, err, tc.want)
	}
	_, err = sites.Parse("demo.yaml", demoWith(t, "  like:\n", "  like:\n    transforms: []\n"))
	require.ErrorContains(t, err, "actions.like.transforms: like has no text")
}

// A selector may end in one :text("…") or :name("…"); anywhere else, or
// twice, it is refused at load.
func TestWordsSelectorsAtLoad(t *testing.T) {
	ok := []string{`button:text("Publish")`, `:name("Close dialog")`, `.panel > button.toggle:text("say \"hi\"")`, `a:not(.x):text("Older posts")`}
	bad := []string{`button:text("a"):name("b")`, `button:text("a") span`, `button:text(a)`, `:name("x"`}
	for _, sel := range ok {
		_, err := sites.Parse("demo.yaml", demoWith(t, `selector: "button#compose-submit"`, `selector: '`+sel+`'`))
		require.NoError(t, err, sel)
	}
	for _, sel := range bad {
		_, err := sites.Parse("demo.yaml", demoWith(t, `selector: "button#compose-submit"`, `selector: '`+sel+`'`))
		require.ErrorContains(t, err, "comes once, at the end", sel)
	}
	_, err := sites.Parse("demo.yaml", demoWith(t, `selector: "button#compose-submit"`, `selector: 'button:text("\x41")'`))
	require.ErrorContains(t, err, "are a JSON string", "an escape the page cannot read")
}
