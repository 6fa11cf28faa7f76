package sites_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/bundled"
	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/sites"
)

const demoPath = "../bundled/sites/demo.yaml"

func TestLoadDemo(t *testing.T) {
	d, err := sites.Load(demoPath)
	require.NoError(t, err)
	require.Equal(t, "demo", d.Name())
	require.Equal(t, []string{"http://127.0.0.1:8787"}, d.Origins())
	for _, k := range kind.All {
		require.True(t, d.Supports(k), k)
	}
	s := d.Spec()
	require.Equal(t, sites.Duration(72*time.Hour), s.Search.Lookback)
	require.Equal(t, "#reply-text", strings.TrimPrefix(s.Actions.ThreadPart.Fill.Selector, "textarea"), "thread_part shares reply through a YAML alias")

	moved, err := d.WithOrigins("http://127.0.0.1:41234")
	require.NoError(t, err)
	require.Equal(t, []string{"http://127.0.0.1:41234"}, moved.Origins())
	require.Equal(t, []string{"http://127.0.0.1:8787"}, d.Origins(), "WithOrigins copies")
	_, err = d.WithOrigins("ftp://x")
	require.ErrorIs(t, err, sites.ErrInvalid)
}

func TestLoadFSBundled(t *testing.T) {
	all, err := sites.LoadFS(bundled.Sites, "sites")
	require.NoError(t, err)
	require.Len(t, all, 3)
	require.Equal(t, "demo", all[0].Name())
	require.Equal(t, "mediawiki", all[1].Name())
	require.Equal(t, "wordpress", all[2].Name())
}

func TestLoadDir(t *testing.T) {
	dir := t.TempDir()
	demo, err := os.ReadFile(demoPath)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "demo.yaml"), demo, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("ignored"), 0o600))
	all, err := sites.LoadDir(dir)
	require.NoError(t, err)
	require.Len(t, all, 1)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "demo.yml"), demo, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "broken.yaml"), []byte("origins: [x]\n"), 0o600))
	_, err = sites.LoadDir(dir)
	require.ErrorIs(t, err, sites.ErrInvalid)
	require.ErrorContains(t, err, "broken.yaml: origins[0]:")
	require.ErrorContains(t, err, `site "demo" is also defined in`)
}

// demoWith returns the demo adapter's YAML with old replaced by new.
func demoWith(t *testing.T, old, new string) []byte {
	t.Helper()
	data, err := os.ReadFile(demoPath)
	require.NoError(t, err)
	s := string(data)
	require.Contains(t, s, old, "fixture drifted")
	return []byte(strings.Replace(s, old, new, 1))
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"UnknownKey", "  post:\n    open:", "  post:\n    bogus: 1\n    open:", "line 29: actions.post.bogus: unknown key"},
		{"UnknownTopKey", "origins:", "colour: blue\norigins:", "line 5: colour: unknown key"},
		{"SubmitSelectorRequired", `      selector: "button#compose-submit"`, `      selector: ""`, "bundled/sites/demo.yaml: actions.post.submit.selector: required"},
		{"OriginNotHTTP", "  - http://127.0.0.1:8787", "  - htp://x", `origins[0]: "htp://x" is not an http(s) URL`},
		{"OriginWithPath", "  - http://127.0.0.1:8787", "  - http://127.0.0.1:8787/app", "must be an origin only"},
		{"OriginUpperCase", "  - http://127.0.0.1:8787", "  - http://Example.com", "must be lower case"},
		{"OriginDefaultPort", "  - http://127.0.0.1:8787", "  - http://example.com:80", "default port"},
		{"NoOrigins", "origins:\n  - http://127.0.0.1:8787", "origins: []", "origins: required"},
		{"DuplicateOrigin", "  - http://127.0.0.1:8787", "  - http://127.0.0.1:8787\n  - http://127.0.0.1:8787", "origins[1]: \"http://127.0.0.1:8787\" is listed twice"},
		{"TemplateOffsite", `open: "{origin}/compose"`, `open: "https://evil.example/compose"`, `actions.post.open: "https://evil.example/compose" leaves the site's origins`},
		{"TemplateUserinfoTrick", `open: "{origin}/compose"`, `open: "{origin}@evil.example/compose"`, "actions.post.open: {origin} must be followed by a path or a query"},
		{"TemplateUnknownPlaceholder", `open: "{origin}/compose"`, `open: "{origin}/{secret}"`, "unknown placeholder {secret}"},
		{"TemplateUnbalanced", `open: "{origin}/compose"`, `open: "{origin}/{actor"`, "unbalanced {"},
		{"TargetForPost", `open: "{origin}/compose"`, `open: "{target}"`, "actions.post.open: {target} is only for actions on an object"},
		{"TargetEmbedded", "  reply: &reply\n    open: \"{target}\"", "  reply: &reply\n    open: \"{origin}/x?u={target}\"", "actions.reply.open: {target} must be the whole template"},
		{"ReplyWithoutTarget", "  reply: &reply\n    open: \"{target}\"", "  reply: &reply\n    open: \"{origin}/compose\"", "actions.reply.open: must open the intent's {target}"},
		{"FillRequired", "    fill:\n      selector: \"textarea#compose-text\"\n", "", "actions.post.fill.selector: required"},
		{"ResultRequired", "    result: &post-result\n", "    result: &post-result\n      bogus_anchor_guard: 1\n", "actions.post.result.bogus_anchor_guard: unknown key"},
		{"ParentTemplateNoValue", `parent: {attribute: data-parent, template: "{origin}/p/{value}"}
      link`, `parent: {attribute: data-parent, template: "{origin}/p/"}
      link`, "actions.post.result.parent.template: must contain {value}"},
		{"StateRequired", "    state:\n      selector: \"button#like-button\"\n      attribute: data-state\n      done_value: liked\n      not_done_value: like\n", "", "actions.like.state: required"},
		{"DoneValueRequired", "      done_value: liked\n", "", "actions.like.state.done_value: required"},
		{"NotDoneEqualsDone", "      not_done_value: like\n", "      not_done_value: liked\n", "actions.like.state.not_done_value: must differ"},
		{"BlockerKind", "  - kind: login", "  - kind: paywall", `blockers[0].kind: "paywall" is not one of`},
		{"BlockerEmpty", "  - kind: login\n    selector: \"form#login-form\"", "  - kind: login", "blockers[0]: needs a selector, a status or both"},
		{"BlockerStatus", "    status: 429", "    status: 999", "blockers[3].status: 999 is not an HTTP status"},
		{"SelectorMultiline", `selector: "span#whoami"`, `selector: "span#whoami\nx"`, "identity.selector: must be one line"},
		{"AttributeName", "  attribute: data-handle", "  attribute: \"data handle\"", `identity.attribute: "data handle" is not an attribute name`},
		{"OwnListNeedsActor", "  item: \"#timeline article.post\"\n", "  item: \"#timeline article.post\"\n  own: true\n", "search.author: an own list has the actor"},
		{"OwnListURLNeedsActor", `url: "{origin}/u/{actor}"`, "url: \"{origin}/home\"\n  own: true", "search.url: an own list is the actor's"},
		{"MaxPages", "max_pages: 5", "max_pages: 0", "search.max_pages: required: 1 to 100"},
		{"MaxPagesType", "max_pages: 5", "max_pages: many", "line 100: search.max_pages: cannot unmarshal !!str `many` into int"},
		{"Lookback", "lookback: 72h", "lookback: soon", `search.lookback: "soon" is not a duration`},
		{"SettleRequired", "  settle: 15s\n", "", "search.settle: required"},
		{"SearchRequired", "# Reconciliation", "x_search_removed: true\n# Reconciliation", "x_search_removed: unknown key"},
		{"NotYAML", "origins:", "origins: [\n", "did not find expected"},
		{"ReplySearchNeedsParent", "  parent: {attribute: data-parent, template: \"{origin}/p/{value}\"}\n  link: {selector: \"a.permalink\", attribute: href}\n  media: *post-media\n", "  link: {selector: \"a.permalink\", attribute: href}\n  media: *post-media\n", "search.parent: required: reply replies to a parent"},
		{"PageParentNeedsTarget", "  parent: {attribute: data-parent, template: \"{origin}/p/{value}\"}\n  link: {selector: \"a.permalink\", attribute: href}\n  media: *post-media\n", "  parent: {page: true}\n  link: {selector: \"a.permalink\", attribute: href}\n  media: *post-media\n", "search.parent: page: the page is the parent only of a list on the target's own page"},
		{"NotDoneValueRequired", "      not_done_value: like\n", "", "actions.like.state.not_done_value: required: the value that shows the action is not done"},
		{"UnlessNeedsIf", "    fill:\n      selector: \"textarea#compose-text\"\n", "    before: [{click: \"#x\", unless: \"#y\"}]\n    fill:\n      selector: \"textarea#compose-text\"\n", "actions.post.before[0].unless: needs if"},
		{"StepTimeout", "    fill:\n      selector: \"textarea#compose-text\"\n", "    before: [{if: \"#y\", click: \"#x\", timeout: 0s}]\n    fill:\n      selector: \"textarea#compose-text\"\n", "actions.post.before[0].timeout: must be more than 0s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := sites.Parse("bundled/sites/demo.yaml", demoWith(t, tc.old, tc.new))
			require.ErrorIs(t, err, sites.ErrInvalid)
			require.ErrorContains(t, err, tc.want)
			require.True(t, strings.HasPrefix(err.Error(), "invalid site adapter: bundled/sites/demo.yaml: "), err.Error())
		})
	}
}

func TestParseWholeFileErrors(t *testing.T) {
	for _, tc := range []struct{ name, file, data, want string }{
		{"Empty", "demo.yaml", "", "empty file"},
		{"Scalar", "demo.yaml", "hello", "cannot unmarshal"},
		{"TwoDocuments", "demo.yaml", string(mustRead(t, demoPath)) + "\n---\norigins: []\n", "want one YAML document"},
		{"BadName", "Demo Site.yaml", string(mustRead(t, demoPath)), "site name"},
		{"NoActions", "demo.yaml", "origins: [http://a.example]\nidentity: {url: '{origin}/', selector: '#me'}\n", "actions: required"},
		{"SearchRequired", "demo.yaml", "origins: [http://a.example]\nidentity: {url: '{origin}/', selector: '#me'}\nactions:\n  post:\n    open: '{origin}/c'\n    fill: {selector: t}\n    submit: {selector: b}\n    result: {item: i, text: {selector: x}, author: {attribute: a}, link: {selector: a, attribute: href}}\n", "search: required"},
		{"TooLarge", "demo.yaml", "# " + strings.Repeat("x", 1<<20), "larger than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := sites.Parse(tc.file, []byte(tc.data))
			require.ErrorIs(t, err, sites.ErrInvalid)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return b
}
