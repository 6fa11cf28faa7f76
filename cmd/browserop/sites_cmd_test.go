package main

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/sites"
)

// TestE2ESitesCheck: `sites check` reads the signed-in identity, counts
// each selector on each page the adapter names and shows the first
// search items, without publishing anything; `sites list` lists the
// adapters.
func TestE2ESitesCheck(t *testing.T) {
	w := newWorld(t, opts{browser: true})
	post := strconv.FormatInt(w.site.SeedPost("alice", "an old post to read back", time.Now().Add(-time.Hour)), 10)

	code, out, errs := w.run(nil, "sites", "list")
	require.Equal(t, 0, code, errs)
	require.Regexp(t, `demo\s+`+w.base+`\s+post reply thread_part like follow`, out)

	code, out, errs = w.run(nil, "sites", "check", "demo", "--target", w.base+"/p/"+post)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errs)
	for _, want := range []string{
		"identity: signed in as @alice",
		"identity.url: " + w.base + "/home (status 200)",
		"actions.post.open: " + w.base + "/compose (status 200)",
		"actions.post.fill.selector",
		"actions.like.state.selector",
		"search post: " + w.base + "/u/alice",
		`"an old post to read back"`,
	} {
		require.Contains(t, out, want)
	}
	require.Empty(t, w.effects(), "sites check publishes nothing")

	code, out, errs = w.run(nil, "sites", "check", "demo", "--json")
	require.Equal(t, 0, code, errs)
	var rep sites.CheckReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Equal(t, "alice", rep.Identity)
	var skipped []string
	for _, p := range rep.Pages {
		if p.Skipped != "" {
			skipped = append(skipped, p.Key)
		}
		for _, s := range p.Selectors {
			if strings.HasSuffix(s.Key, "submit.selector") {
				require.Equal(t, 1, s.Count, "%s on %s", s.Key, p.Key)
			}
		}
	}
	require.Equal(t, []string{"actions.reply.open", "actions.thread_part.open", "actions.like.open", "actions.follow.open"}, skipped,
		"without --target the actions on an object are skipped, and say why")

	code, _, errs = w.run(nil, "sites", "check", "nosuch")
	require.Equal(t, 2, code)
	require.Contains(t, errs, `site "nosuch" is not configured (sites: demo)`)
}
