package operator_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/ledger"
)

// TestWordPressEntryFieldsPass: a calendar post with a category and tags
// goes through a whole pass on a real WordPress: its fields are in the
// action's payload (and so its key), it is published once with exactly
// that category and those tags in the database, verified, and a second
// pass does nothing.
func TestWordPressEntryFieldsPass(t *testing.T) {
	w := newWordPressWorld(t)
	ctx := context.Background()
	category := unique("Releases")
	_, err := w.site.PHP(ctx, fmt.Sprintf(`$r = wp_insert_term(%q, 'category'); if (is_wp_error($r)) { fwrite(STDERR, "Fatal error: " . $r->get_error_message()); }`, category))
	require.NoError(t, err)
	title := unique("Version two is out")
	tag := unique("release")
	entry := fmt.Sprintf("  - {id: f1, site: wordpress, actor: alice, type: post, at: \"{at}\", text: %q, fields: {category: %q, tags: [%q, go]}}\n",
		title+"\n\nWhat changed.", category, tag)
	w.entries(entry)
	sum := w.pass()
	require.Equal(t, 1, sum.Counts["verified"], "%+v", sum)
	require.Equal(t, 1, w.posts(title))
	a := w.only()
	require.Equal(t, ledger.Verified, a.Status, a.FailureReason)
	p, err := ledger.ParsePayload(a.Payload)
	require.NoError(t, err)
	require.Equal(t, category, p.Fields["category"].String())
	require.Equal(t, []string{tag, "go"}, p.Fields["tags"].Texts)

	rows, err := w.site.Query(ctx, "SELECT ID FROM wp_posts WHERE post_title = ? AND post_status = 'publish'", title)
	require.NoError(t, err)
	require.Len(t, rows, 1)
	out, err := w.site.PHP(ctx, fmt.Sprintf(`echo implode("|", wp_get_post_categories(%s, ['fields' => 'names'])), "\n", implode("|", wp_get_post_tags(%s, ['fields' => 'names']));`, rows[0][0], rows[0][0]))
	require.NoError(t, err)
	cats, tags, _ := strings.Cut(strings.TrimSpace(out), "\n")
	require.Equal(t, category, cats)
	require.ElementsMatch(t, []string{tag, "go"}, strings.Split(tags, "|"))

	sum = w.pass()
	require.Empty(t, sum.Counts["verified"], "%+v", sum)
	require.Equal(t, 1, w.posts(title), "performed once across passes")
}
