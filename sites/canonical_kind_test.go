package sites_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/sites"
)

// An action's own canonical rule replaces the site's for its kind, whole
// (its keys are not merged with the site's); the other kinds keep the
// site's, and Canonical stays the site's rule.
func TestCanonicalForKind(t *testing.T) {
	y := string(demoWith(t, "  follow:\n    open: \"{target}\"\n",
		"  follow:\n    open: \"{target}\"\n    canonical:\n      keep_query: [title, action]\n"))
	y = strings.Replace(y, "  reply: &reply\n    open: \"{target}\"\n",
		"  reply: &reply\n    open: \"{target}\"\n    canonical:\n      keep_fragment: 'c-\\d+'\n      drop_query: [action]\n", 1)
	require.Contains(t, y, "drop_query: [action]", "fixture drifted")
	y += "\ncanonical:\n  keep_query: [title, oldid]\n"
	d, err := sites.Parse("wiki.yaml", []byte(y))
	require.NoError(t, err)
	const u = "http://127.0.0.1:8787/index.php?title=Talk:X&oldid=12&action=watch&utm=1#c-3"
	for _, tc := range []struct {
		k    kind.Kind
		want string
	}{
		{kind.Follow, "http://127.0.0.1:8787/index.php?title=Talk:X&action=watch"},
		{kind.Reply, "http://127.0.0.1:8787/index.php?title=Talk:X&oldid=12&utm=1#c-3"},
		{kind.ThreadPart, "http://127.0.0.1:8787/index.php?title=Talk:X&oldid=12&utm=1#c-3"}, // the demo's thread_part is its reply
		{kind.Post, "http://127.0.0.1:8787/index.php?title=Talk:X&oldid=12"},
		{kind.Like, "http://127.0.0.1:8787/index.php?title=Talk:X&oldid=12"},
	} {
		require.Equal(t, tc.want, d.CanonicalFor(tc.k, u), tc.k)
	}
	require.Equal(t, "http://127.0.0.1:8787/index.php?title=Talk:X&oldid=12", d.Canonical(u), "Canonical is the site's rule")
	require.Equal(t, "not a url", d.CanonicalFor(kind.Follow, "not a url"))

	// Without a rule of the site's, a kind's own still applies, and the
	// others get the default (the fragment dropped, the query kept).
	own, err := sites.Parse("demo.yaml", demoWith(t, "  follow:\n    open: \"{target}\"\n",
		"  follow:\n    open: \"{target}\"\n    canonical: {keep_query: [action]}\n"))
	require.NoError(t, err)
	require.Equal(t, "http://127.0.0.1:8787/u/bob?action=watch", own.CanonicalFor(kind.Follow, "http://127.0.0.1:8787/u/bob?x=1&action=watch"))
	require.Equal(t, "http://127.0.0.1:8787/u/bob?x=1&action=watch", own.CanonicalFor(kind.Reply, "http://127.0.0.1:8787/u/bob?x=1&action=watch#f"))
}

// A kind's canonical rule is checked at load as the site's is, each
// problem named by file and key.
func TestCanonicalForKindErrors(t *testing.T) {
	const follow = "  follow:\n    open: \"{target}\"\n"
	for _, tc := range []struct{ name, rule, want string }{
		{"Both", "    canonical: {keep_query: [a], drop_query: [b]}\n", "demo.yaml: actions.follow.canonical: give keep_query or drop_query, not both"},
		{"Fragment", "    canonical: {keep_fragment: \"(\"}\n", "demo.yaml: actions.follow.canonical.keep_fragment: not a regular expression"},
		{"RewriteMatch", "    canonical:\n      rewrite: [{replace: x}]\n", "demo.yaml: actions.follow.canonical.rewrite[0].match: required"},
		{"RewriteNames", "    canonical:\n      rewrite: [{match: x, replace: '{actor}'}]\n", "demo.yaml: actions.follow.canonical.rewrite[0].replace: a canonical rewrite names no actor or time"},
		{"UnknownKey", "    canonical: {keep: [a]}\n", "actions.follow.canonical.keep: unknown key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := sites.Parse("demo.yaml", demoWith(t, follow, follow+tc.rule))
			require.ErrorIs(t, err, sites.ErrInvalid)
			require.ErrorContains(t, err, tc.want)
		})
	}
}
