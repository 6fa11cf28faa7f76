package sites_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/intent"
	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/sites"
	"github.com/browserop/browserop/verify"
)

// TestWordPressEntryFields: a post's category and tags, set through the
// bundled adapter's entry fields on a real WordPress: the category picked
// by its name in the Categories panel, each tag typed and committed with
// Enter, both checked before the click and read on the landed editor; in
// the database the post has exactly that category and those tags. A
// category the site does not have fails the preparation before anything
// is published.
func TestWordPressEntryFields(t *testing.T) {
	site := wordpress(t)
	d := wordpressAdapter(t, site)
	tab := wpTab(t, site)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	stamp := time.Now().UnixNano()
	category := fmt.Sprintf("News %d", stamp)
	_, err := site.PHP(ctx, fmt.Sprintf(`$r = wp_insert_term(%q, 'category'); if (is_wp_error($r)) { fwrite(STDERR, "Fatal error: " . $r->get_error_message()); }`, category))
	require.NoError(t, err)
	tags := []string{fmt.Sprintf("go-%d", stamp), fmt.Sprintf("release notes %d", stamp)}

	title := fmt.Sprintf("A post with a category %d", stamp)
	text := title + "\n\nFiled under news."
	in := sites.Intent{Kind: kind.Post, Actor: "alice", Text: text,
		Fields: intent.Fields{"category": intent.Text(category), "tags": intent.List(tags...)}}
	_, err = d.RefuseFields(kind.Post, in.Fields)
	require.NoError(t, err)

	status, err := d.Open(ctx, tab, in)
	require.NoError(t, err)
	require.NoError(t, sites.Preflight(ctx, d, tab, "alice", status))
	_, err = d.Fill(ctx, tab, in)
	require.NoError(t, err, "fill, pick the category, type the tags, read back")
	require.NoError(t, d.Submit(ctx, tab, in))
	obs, err := d.Result(ctx, tab, in)
	require.NoError(t, err)
	id := postID(t, obs.URL)
	out, err := site.PHP(ctx, fmt.Sprintf(`echo implode("|", wp_get_post_categories(%d, ['fields' => 'names'])), "\n", implode("|", wp_get_post_tags(%d, ['fields' => 'names']));`, id, id))
	require.NoError(t, err)
	cats, tagLine, _ := strings.Cut(strings.TrimSpace(out), "\n")
	require.Equal(t, category, cats, "the post is in that category only")
	require.ElementsMatch(t, tags, strings.Split(tagLine, "|"), "the post has those tags")

	require.ElementsMatch(t, []string{category}, obs.Fields["category"], "the landed editor shows the category")
	require.ElementsMatch(t, tags, obs.Fields["tags"], "the landed editor shows the tags")
	vin := verify.Intent{Kind: kind.Post, Actor: "alice", Text: d.Expected(kind.Post, "alice", text, time.Now()),
		Fields: map[string][]string{"category": {category}, "tags": tags}}
	require.Empty(t, verify.CheckLandedResult(vin, obs.LandedResult()), "the landing proves the fields")
	vin.Fields["tags"] = tags[:1]
	require.NotEmpty(t, verify.CheckLandedResult(vin, obs.LandedResult()), "other tags are a contradiction")

	// A category the site does not have: the step that would pick it
	// finds neither box, and nothing is published.
	title2 := fmt.Sprintf("A post in no such category %d", stamp)
	in2 := sites.Intent{Kind: kind.Post, Actor: "alice", Text: title2 + "\n\nNowhere.",
		Fields: intent.Fields{"category": intent.Text("No such category " + fmt.Sprint(stamp))}}
	status, err = d.Open(ctx, tab, in2)
	require.NoError(t, err)
	require.NoError(t, sites.Preflight(ctx, d, tab, "alice", status))
	_, err = d.Fill(ctx, tab, in2)
	require.ErrorIs(t, err, sites.ErrStepFailed)
	n, err := site.CountPublished(ctx, title2)
	require.NoError(t, err)
	require.Zero(t, n)
}
