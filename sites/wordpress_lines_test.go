package sites_test

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/sites"
)

// wpParagraphRE is one paragraph block as the block editor stores it.
var wpParagraphRE = regexp.MustCompile(`(?s)<!-- wp:paragraph -->\s*<p>(.*?)</p>\s*<!-- /wp:paragraph -->`)

// TestWordPressPostParagraphs: a body of several lines, posted through the
// bundled adapter (lines: enter), is stored as a paragraph block per line,
// a blank line an empty one, never one block holding the newlines. (The
// body inserted as one input, without lines: enter, is kept by the editor
// as one block: its newlines dropped, or what the browser's own editing
// made of them, a div inside the paragraph.)
func TestWordPressPostParagraphs(t *testing.T) {
	site := wordpress(t)
	tab := wpTab(t, site)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	d := wordpressAdapter(t, site)
	title := fmt.Sprintf("A post in paragraphs %d", time.Now().UnixNano())
	text := title + "\n\nFirst paragraph – ünïcödé.\nSecond paragraph.\n\nThird, after a blank line."
	in := sites.Intent{Kind: kind.Post, Actor: "alice", Text: text}
	status, err := d.Open(ctx, tab, in)
	require.NoError(t, err)
	require.NoError(t, sites.Preflight(ctx, d, tab, "alice", status))
	_, err = d.Fill(ctx, tab, in)
	require.NoError(t, err, "typed and read back paragraph by paragraph")
	require.NoError(t, d.Submit(ctx, tab, in))
	obs, err := d.Result(ctx, tab, in)
	require.NoError(t, err)
	id := postID(t, obs.URL)
	n, err := site.CountPublished(ctx, title)
	require.NoError(t, err)
	require.Equal(t, 1, n, "published once")

	rows, err := site.Query(ctx, "SELECT post_content FROM wp_posts WHERE ID = ?", id)
	require.NoError(t, err)
	content := rows[0][0]
	var paras []string
	for _, m := range wpParagraphRE.FindAllStringSubmatch(content, -1) {
		paras = append(paras, m[1])
	}
	require.Equal(t, []string{"First paragraph – ünïcödé.", "Second paragraph.", "", "Third, after a blank line."}, paras, content)
	require.NotContains(t, content, "<br", "no line breaks inside a paragraph")
}
