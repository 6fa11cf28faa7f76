package main

import (
	"encoding/json"
	"os"
	"path/filepath"
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

// TestE2ESitesCheckBlindSearch: an adapter whose search item selector
// matches nothing on a site that lists items (a theme change) reads an
// empty list. `sites check` says the search cannot prove
// absence, naming it and why, and exits 2.
func TestE2ESitesCheckBlindSearch(t *testing.T) {
	w := newWorld(t, opts{browser: true})
	w.site.SeedPost("alice", "a post the search cannot see", time.Now().Add(-time.Hour))
	demo, err := os.ReadFile(filepath.Join(w.dir, "sites", "demo.yaml"))
	require.NoError(t, err)
	broken := strings.Replace(string(demo), `item: "#timeline article.post"`, `item: "#timeline article.entry"`, 1)
	require.NotEqual(t, string(demo), broken, "the fixture's search item")
	require.NoError(t, os.WriteFile(filepath.Join(w.dir, "sites", "broken.yaml"), []byte(broken), 0o600))

	code, out, errs := w.run(nil, "sites", "check", "broken")
	require.Equal(t, 2, code, "stdout:\n%s\nstderr:\n%s", out, errs)
	// The site's count (the post it lists) disagrees with the 0 read:
	// the view is not even complete. Without a count it would look so.
	require.Contains(t, out, "0 items on 1 pages, complete: false")
	require.Contains(t, out, "CANNOT PROVE ABSENCE: it read no item")
	for _, k := range []string{"post", "reply", "thread_part"} {
		require.Contains(t, errs, "sites check: search "+k+" cannot prove absence: it read no item")
	}

	code, out, _ = w.run(nil, "sites", "check", "broken", "--json")
	require.Equal(t, 2, code)
	var rep sites.CheckReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Len(t, rep.Blind(), 3)

	code, _, errs = w.run(nil, "sites", "check", "demo")
	require.Equal(t, 0, code, "the bundled adapter sees alice's post: %s", errs)
}

// TestE2ESitesCheckProblems: `sites check` exits 2 on any problem, each
// on its own line of stderr: a field selector that matches nothing where
// the text is typed (after the steps before filling, which check runs)
// is a problem, while the committing control, which may show only once
// the text is typed, is not. An adapter that does not load prints each
// of its problems on a line of its own.
func TestE2ESitesCheckProblems(t *testing.T) {
	w := newWorld(t, opts{browser: true})
	w.site.SeedPost("alice", "a post to read back", time.Now().Add(-time.Hour))
	demo, err := os.ReadFile(filepath.Join(w.dir, "sites", "demo.yaml"))
	require.NoError(t, err)
	broken := strings.Replace(string(demo), `selector: "textarea#compose-text"`, `selector: "textarea#composer-text"`, 1)
	require.NotEqual(t, string(demo), broken, "the fixture's fill selector")
	require.NoError(t, os.WriteFile(filepath.Join(w.dir, "sites", "broken.yaml"), []byte(broken), 0o600))

	code, out, errs := w.run(nil, "sites", "check", "broken")
	require.Equal(t, 2, code, "stdout:\n%s\nstderr:\n%s", out, errs)
	require.Contains(t, errs, `sites check: actions.post.fill.selector "textarea#composer-text": matches 0 elements where the text is typed, want exactly 1`+"\n")
	require.Regexp(t, `actions.post.fill.selector\s+textarea#composer-text\s+0\s+at open\s+PROBLEM`, out)
	require.Empty(t, w.effects(), "sites check publishes nothing")

	bad := "origins: [\"" + w.base + "\"]\nidentity: {url: \"{origin}/\"}\nactions:\n  post:\n    open: \"{origin}/x\"\n"
	require.NoError(t, os.WriteFile(filepath.Join(w.dir, "sites", "broken.yaml"), []byte(bad), 0o600))
	code, _, errs = w.run(nil, "sites", "list")
	require.Equal(t, 2, code)
	lines := strings.Split(strings.TrimSpace(errs), "\n")
	require.Greater(t, len(lines), 2, errs)
	require.Contains(t, lines[0], "broken.yaml: identity.selector: required")
	for _, l := range lines[1:] {
		require.True(t, strings.HasPrefix(l, "  "), "later problems are indented lines: %q", l)
		require.Contains(t, l, "broken.yaml: ")
	}
	require.NotContains(t, errs, `\n`, "no escaped newline")
}

// TestE2ESitesCheckFollows: with --text, `sites check` follows each action
// up to its committing click: it types the text, runs the later steps and
// counts the committing control where the click would be, which it never
// makes (the demosite holds no new post). A later step whose click
// matches nothing is a problem naming the step, and the check exits 2. An
// editor that keeps drafts is typed into only with --fill, and the output
// says so; --fill without --text is refused.
func TestE2ESitesCheckFollows(t *testing.T) {
	w := newWorld(t, opts{browser: true})
	post := strconv.FormatInt(w.site.SeedPost("alice", "a post to read back", time.Now().Add(-time.Hour)), 10)
	demo, err := os.ReadFile(filepath.Join(w.dir, "sites", "demo.yaml"))
	require.NoError(t, err)
	write := func(name, old, new string) {
		t.Helper()
		y := strings.Replace(string(demo), old, new, 1)
		require.NotEqual(t, string(demo), y, "the fixture's %q", old)
		require.NoError(t, os.WriteFile(filepath.Join(w.dir, "sites", name+".yaml"), []byte(y), 0o600))
	}
	const submit = "    submit:\n      selector: \"button#compose-submit\"\n"

	code, out, errs := w.run(nil, "sites", "check", "demo", "--text", "typed by sites check", "--target", w.base+"/p/"+post)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errs)
	require.Regexp(t, `actions.post.submit.selector\s+button#compose-submit\s+1\s+at the click`, out)
	require.Regexp(t, `actions.reply.submit.selector\s+button#reply-submit\s+1\s+at the click`, out)
	require.Contains(t, out, "followed up to the committing click, which check never makes")
	require.Regexp(t, `actions.post.open: \S+ \(status 200\)\n  \(followed up to the committing click`, out, "typed, not stopped at the fields")
	require.Empty(t, w.effects(), "the committing click is never made")

	write("broken", submit, "    steps:\n      - {click: \"button#compose-preview\", timeout: 2s}\n"+submit)
	code, out, errs = w.run(nil, "sites", "check", "broken", "--text", "never published")
	require.Equal(t, 2, code, "stdout:\n%s\nstderr:\n%s", out, errs)
	require.Contains(t, errs, `sites check: actions.post.open: a step before the committing click failed: steps[0]: click "button#compose-preview"`)
	require.Regexp(t, `actions.post.steps\[0\].click\s+button#compose-preview\s+0\s+at the step`, out)
	require.Empty(t, w.effects())

	write("drafty", submit, submit+"    drafts: true\n")
	code, out, errs = w.run(nil, "sites", "check", "drafty", "--text", "a text to keep as a draft")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errs)
	require.Contains(t, out, "not followed to the click: check typed nothing: the editor keeps a draft of what is typed (actions.post.drafts); give --fill")
	require.Regexp(t, `actions.post.submit.selector\s+button#compose-submit\s+1\s+before the text`, out)
	code, out, errs = w.run(nil, "sites", "check", "drafty", "--text", "a text to keep as a draft", "--fill")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errs)
	require.Regexp(t, `actions.post.submit.selector\s+button#compose-submit\s+1\s+at the click`, out)
	require.Empty(t, w.effects())

	code, _, errs = w.run(nil, "sites", "check", "demo", "--fill")
	require.Equal(t, 2, code)
	require.Contains(t, errs, "sites check --fill types --text: give --text too")
}
