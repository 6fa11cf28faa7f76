package sites_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/demosite"
	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/sites"
)

// TestCheckMarksBlindSearches: sites check marks a search that cannot
// prove absence: one whose item selector matches nothing on a page that
// lists items (a theme change), one whose items miss a field it
// compares, and one that reads no item of the actor, unless the site's
// count agreed. The bundled adapter, on a timeline with a post of the
// actor, is not marked.
func TestCheckMarksBlindSearches(t *testing.T) {
	e := setup(t, demosite.Faults{})
	demo.SeedPost("alice", "a post to be seen", time.Now().Add(-time.Hour))
	adapter := func(t *testing.T, old, new string) *sites.Declarative {
		t.Helper()
		d, err := sites.Parse("demo.yaml", demoWith(t, old, new))
		require.NoError(t, err)
		d, err = d.WithOrigins(base)
		require.NoError(t, err)
		return d
	}
	searches := func(t *testing.T, d *sites.Declarative, actor string) map[kind.Kind]sites.SearchCheck {
		t.Helper()
		rep, err := d.Check(e.ctx, e.tab, actor, "", "")
		require.NoError(t, err)
		out := map[kind.Kind]sites.SearchCheck{}
		for _, s := range rep.Searches {
			out[s.Kind] = s
		}
		require.Len(t, out, 3, "post, reply and thread_part searched")
		return out
	}

	t.Run("Bundled", func(t *testing.T) {
		for k, s := range searches(t, e.site, "alice") {
			require.Empty(t, s.Blind, "%s", k)
			require.Equal(t, 1, s.Total)
		}
	})
	t.Run("ItemSelectorMatchesNothing", func(t *testing.T) {
		d := adapter(t, `  item: "#timeline article.post"`, `  item: "#timeline article.entry"`)
		got := searches(t, d, "alice")
		for k, s := range got {
			require.Zero(t, s.Total)
			// Without the demo adapter's count the walk would end on a
			// complete view, which is the danger; the count disagrees.
			require.False(t, s.Counted, "%s", k)
			require.False(t, s.Complete, "%s", k)
			require.Contains(t, s.Blind, "it read no item", "%s", k)
		}
		rep, err := d.Check(e.ctx, e.tab, "alice", "", "")
		require.NoError(t, err)
		require.Len(t, rep.Blind(), 3)
	})
	t.Run("FieldMissing", func(t *testing.T) {
		d := adapter(t, "  author: {attribute: data-author}\n  time:", "  author: {attribute: data-writer}\n  time:")
		for k, s := range searches(t, d, "alice") {
			require.Equal(t, "1 of its 1 items lack a field it compares (author missing: 1): such an item never matches, so its absence proves nothing", s.Blind, "%s", k)
		}
	})
	t.Run("NoItemOfTheActor", func(t *testing.T) {
		// The home feed lists the people alice follows, not alice.
		demo.SeedPost("bob", "bob's", time.Now().Add(-time.Minute))
		_, err := e.tab.Navigate(e.ctx, base+"/u/bob")
		require.NoError(t, err)
		_, err = e.tab.ClickOnceAndWait(e.ctx, "#follow-button")
		require.NoError(t, err)
		d := adapter(t, `url: "{origin}/u/{actor}"`, `url: "{origin}/home"`)
		for k, s := range searches(t, d, "carol") {
			require.Positive(t, s.Total, "%s", k)
			require.Contains(t, s.Blind, "is by @carol", "%s", k)
		}
	})
}

// TestCheckCountMakesUpForEmpty: with the site's own count agreeing, a
// search that reads no item shows it can see an empty list; a count never
// makes up for a field the items miss, nor for items none of which is the
// actor's (it says nothing of how authors are read).
func TestCheckCountMakesUpForEmpty(t *testing.T) {
	home := `<!doctype html><body><span id="whoami" data-handle="alice">@alice</span></body>`
	for _, tc := range []struct {
		name, list, blind string
	}{
		{"EmptyCounted", listPage("0 posts", ""), ""},
		{"OthersCounted", listPage("2 posts", "", "bob", "carol"), "none of its 2 items is by @alice"},
		{"EmptyMiscounted", listPage("1 post", ""), "it read no item"},
		{"OthersNotCounted", listPage("", "", "bob"), "none of its 1 items is by @alice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMini(t, map[string]string{"/home": home, "/compose": composePage("", ""), "/u/alice": tc.list}, http.StatusCreated, `{}`)
			d := miniSite(t, countedYAML(m.URL))
			ctx, tab := miniTab(t)
			rep, err := d.Check(ctx, tab, "alice", "", "")
			require.NoError(t, err)
			require.Equal(t, "alice", rep.Identity)
			require.Len(t, rep.Searches, 1)
			if tc.blind == "" {
				require.Empty(t, rep.Searches[0].Blind)
				require.True(t, rep.Searches[0].Counted)
			} else {
				require.Contains(t, rep.Searches[0].Blind, tc.blind)
			}
		})
	}
}

// checkPage is the report's page of key, and its selectors by key and when
// they were counted ("KEY@WHEN").
func checkPage(t *testing.T, rep sites.CheckReport, key string) (sites.PageCheck, map[string]sites.SelectorCount) {
	t.Helper()
	for _, p := range rep.Pages {
		if p.Key == key {
			sels := map[string]sites.SelectorCount{}
			for _, s := range p.Selectors {
				sels[s.Key+"@"+s.When] = s
			}
			return p, sels
		}
	}
	t.Fatalf("no page %s in %+v", key, rep.Pages)
	return sites.PageCheck{}, nil
}

// TestCheckFollowsStepsToTheClick: on the rich composer, whose committing
// control shows only once a later step opened its panel, check types the
// text, runs the step and counts the control where the click would be,
// where it is one clickable element: no problem, and nothing is
// published, since the click is never made. Without a text it types
// nothing, says so, and counts the control before the text, where it
// matches nothing, which is no problem either.
func TestCheckFollowsStepsToTheClick(t *testing.T) {
	e := setup(t, demosite.Faults{})
	d := richSite(t)
	demo.SeedPost("alice", "a post its search reads", time.Now().Add(-time.Hour))

	rep, err := d.Check(e.ctx, e.tab, "alice", "", "Checked title\n\nchecked body")
	require.NoError(t, err)
	require.Empty(t, rep.Problems())
	p, sels := checkPage(t, rep, "actions.post.open")
	require.Empty(t, p.NotFollowed)
	require.Equal(t, 1, sels["actions.post.fields[1].selector@"+sites.CheckedAfterBefore].Count, "the body block exists after the before step")
	step, ok := sels["actions.post.steps[0].click@"+sites.CheckedAtStep]
	require.True(t, ok, "%+v", p.Selectors)
	require.Equal(t, 1, step.Count)
	submit, ok := sels["actions.post.submit.selector@"+sites.CheckedAtClick]
	require.True(t, ok, "the committing control is counted at the click: %+v", p.Selectors)
	require.Equal(t, 1, submit.Count, "the panel the step opened shows it")
	require.Empty(t, submit.Problem)
	require.Empty(t, demo.Effects(), "the committing click is never made")
	u, err := e.tab.URL(e.ctx)
	require.NoError(t, err)
	require.NotContains(t, u, "/compose/rich", "check left the composer")

	rep, err = d.Check(e.ctx, e.tab, "alice", "", "")
	require.NoError(t, err)
	require.Empty(t, rep.Problems())
	p, sels = checkPage(t, rep, "actions.post.open")
	require.Contains(t, p.NotFollowed, "give --text")
	require.Zero(t, sels["actions.post.submit.selector@"+sites.CheckedBeforeText].Count, "the panel is closed before the text")
	require.NotContains(t, sels, "actions.post.submit.selector@"+sites.CheckedAtClick)
	require.Empty(t, demo.Effects())
}

// TestCheckReportsABrokenStep: a later step whose click matches nothing is
// a problem naming the step, where check met it; the committing control
// after it is not counted, and nothing is published.
func TestCheckReportsABrokenStep(t *testing.T) {
	e := setup(t, demosite.Faults{})
	y := strings.Replace(string(mustRead(t, "testdata/rich.yaml")), `click: "button#rich-publish-toggle"`, `click: "button#rich-publish-switch"`, 1)
	d, err := sites.Parse("rich.yaml", []byte(y))
	require.NoError(t, err)
	d, err = d.WithOrigins(base)
	require.NoError(t, err)

	rep, err := d.Check(e.ctx, e.tab, "alice", "", "Broken step\n\nnever published")
	require.NoError(t, err)
	p, sels := checkPage(t, rep, "actions.post.open")
	require.Contains(t, p.Error, `steps[0]: click "button#rich-publish-switch"`)
	require.Contains(t, p.Error, "(on "+base+"/compose/rich)", "the page it failed on")
	require.Zero(t, sels["actions.post.steps[0].click@"+sites.CheckedAtStep].Count)
	require.NotContains(t, sels, "actions.post.submit.selector@"+sites.CheckedAtClick)
	require.Contains(t, strings.Join(rep.Problems(), "\n"), `actions.post.open: a step before the committing click failed: steps[0]: click "button#rich-publish-switch"`)
	require.Empty(t, demo.Effects())
}

// TestCheckReportsAStepThatSends: a step that sends what could be the
// submission (here a wrong adapter's step clicks the composer's own Post
// button) is reported by check as such, naming the step: the follow ends
// there. Check cannot take back what the page sent; it tells the person
// the adapter is wrong before a run does it again.
func TestCheckReportsAStepThatSends(t *testing.T) {
	e := setup(t, demosite.Faults{})
	const fill = "    fill:\n      selector: \"textarea#compose-text\"\n"
	d, err := sites.Parse("demo.yaml", demoWith(t, fill, fill+"    steps:\n      - {click: \"button#compose-submit\"}\n"))
	require.NoError(t, err)
	d, err = d.WithOrigins(base)
	require.NoError(t, err)
	before := len(demo.Effects())
	rep, err := d.Check(e.ctx, e.tab, "alice", "", "Sent by a step")
	require.NoError(t, err)
	p, sels := checkPage(t, rep, "actions.post.open")
	require.Contains(t, p.Error, "steps[0]: 1 form(s) were posted (the first to "+base+"/posts)")
	require.Contains(t, p.Error, "a step must not send the submission")
	require.NotContains(t, sels, "actions.post.submit.selector@"+sites.CheckedAtClick, "the follow ended at the step")
	require.Len(t, demo.Effects(), before+1, "what the step sent is not taken back")
}

// TestCheckKeepsTheDraft: an editor that starts with its saved draft (the
// demosite's editor_append) holds text check did not type: check types
// nothing there, and says so as a problem named by the field's key,
// without the draft. Nothing is published.
func TestCheckKeepsTheDraft(t *testing.T) {
	e := setup(t, demosite.Faults{EditorAppend: true})
	rep, err := e.site.Check(e.ctx, e.tab, "alice", "", "typed by sites check")
	require.NoError(t, err)
	_, sels := checkPage(t, rep, "actions.post.open")
	fill := sels["actions.post.fill.selector@"+sites.CheckedAtOpen]
	require.Equal(t, 1, fill.Count)
	require.Contains(t, fill.Problem, "could not be filled: hard stop: field_not_ours")
	problems := strings.Join(rep.Problems(), "\n")
	require.Contains(t, problems, `actions.post.fill.selector "textarea#compose-text": could not be filled: hard stop: field_not_ours: the field "textarea#compose-text" holds text browserop did not type there`)
	require.NotContains(t, problems, demosite.Draft)
	require.Empty(t, demo.Effects())
}

// typedPage is a composer whose committing button is drawn only once text
// is typed, and which asks before it is left with text in it. With
// autosave, every change is sent to POST /post, as an editor that keeps
// drafts does; the button sends POST /api/post.
func typedPage(autosave bool) string {
	save := ""
	if autosave {
		save = `fetch('/post', {method: 'POST', body: t.value});`
	}
	return `<!doctype html><body><span id="whoami" data-handle="alice">@alice</span>
<p><button id="write" type="button">Write</button></p><p id="box"></p><p id="bar"></p>
<script>
let t;
document.getElementById('write').addEventListener('click', () => {
	t = document.createElement('textarea');
	t.id = 't';
	document.getElementById('box').appendChild(t);
	t.addEventListener('input', () => {
		` + save + `
		if (t.value && !document.getElementById('go')) {
			const b = document.createElement('button');
			b.id = 'go';
			b.textContent = 'Post';
			b.addEventListener('click', () => fetch('/api/post', {method: 'POST', body: t.value}));
			document.getElementById('bar').appendChild(b);
		}
	});
});
window.addEventListener('beforeunload', e => { if (t && t.value) { e.preventDefault(); e.returnValue = ''; } });
</script></body>`
}

// typedYAML is a mini site's adapter for typedPage at open, whose search
// the site's count makes fit; extra are more keys of the post action.
func typedYAML(origin, open, extra string) string {
	y := miniYAML(origin, open, "    before:\n      - {click: \"button#write\", wait: \"textarea#t\"}\n"+extra, "")
	return strings.Replace(y, "  complete_marker: \"#end\"\n", "  complete_marker: \"#end\"\n  count: \"#count\"\n", 1)
}

// TestCheckTypesAndLeaves: a committing control that the page draws only
// once text is typed is counted after the text, where it is one element;
// the page, which asks before it is left with text in it, is left, and
// nothing was sent. An editor that keeps drafts (drafts: true) is not typed
// into, and the page says so, unless FillDrafts asks for it.
func TestCheckTypesAndLeaves(t *testing.T) {
	home := `<!doctype html><body><span id="whoami" data-handle="alice">@alice</span></body>`
	site := func(t *testing.T) *mini {
		return newMini(t, map[string]string{
			"/home": home, "/typed": typedPage(false), "/drafts": typedPage(true), "/u/alice": listPage("0 posts", ""),
		}, http.StatusCreated, `{}`)
	}

	t.Run("Typed", func(t *testing.T) {
		m := site(t)
		d := miniSite(t, typedYAML(m.URL, "/typed", ""))
		ctx, tab := miniTab(t)
		rep, err := d.Check(ctx, tab, "alice", "", "a text that shows the button")
		require.NoError(t, err)
		require.Empty(t, rep.Problems())
		p, sels := checkPage(t, rep, "actions.post.open")
		require.Empty(t, p.NotFollowed)
		require.Equal(t, 1, sels["actions.post.fill.selector@"+sites.CheckedAfterBefore].Count)
		submit := sels["actions.post.submit.selector@"+sites.CheckedAtClick]
		require.Equal(t, 1, submit.Count, "%+v", p.Selectors)
		require.Empty(t, submit.Problem)
		require.Zero(t, m.posts.Load(), "the committing click is never made")

		rep, err = d.Check(ctx, tab, "alice", "", "")
		require.NoError(t, err)
		require.Empty(t, rep.Problems())
		_, sels = checkPage(t, rep, "actions.post.open")
		require.Zero(t, sels["actions.post.submit.selector@"+sites.CheckedBeforeText].Count, "drawn only once text is typed")
	})
	t.Run("Drafts", func(t *testing.T) {
		m := site(t)
		d := miniSite(t, typedYAML(m.URL, "/drafts", "    drafts: true\n"))
		ctx, tab := miniTab(t)
		rep, err := d.Check(ctx, tab, "alice", "", "a text the editor would keep")
		require.NoError(t, err)
		require.Zero(t, m.posts.Load(), "nothing typed, so no draft was saved")
		require.Empty(t, rep.Problems())
		p, sels := checkPage(t, rep, "actions.post.open")
		require.Contains(t, p.NotFollowed, "actions.post.drafts")
		require.Contains(t, p.NotFollowed, "--fill")
		require.Equal(t, 1, sels["actions.post.fill.selector@"+sites.CheckedAfterBefore].Count, "the field is counted")
		require.Contains(t, sels, "actions.post.submit.selector@"+sites.CheckedBeforeText)

		rep, err = d.Check(ctx, tab, "alice", "", "a text the editor keeps", sites.FillDrafts())
		require.NoError(t, err)
		require.Empty(t, rep.Problems())
		p, sels = checkPage(t, rep, "actions.post.open")
		require.Empty(t, p.NotFollowed)
		require.Equal(t, 1, sels["actions.post.submit.selector@"+sites.CheckedAtClick].Count)
		require.Positive(t, m.posts.Load(), "typed when asked: the editor saved its draft")
	})
}
