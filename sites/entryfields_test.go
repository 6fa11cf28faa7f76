package sites_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/intent"
	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/sites"
)

// demoFields is the demo adapter's post with a category (a choice, set
// by a step that clicks it by name and checked by a selector) and tags
// (a list, each typed and committed with Enter).
const demoFields = `    submit:
      selector: "button#compose-submit"
    entry_fields:
      category:
        type: choice
        choices: [News, Notes]
        check: '#cats input:checked:name("{fields.category}")'
      tags:
        type: list
        check: '#tags .token:text("{fields.tags}")'
    steps:
      - click: '#cats input:name("{fields.category}")'
      - type: "#tags input"
        value: "{fields.tags}"
        key: Enter
    result: &post-result`

func TestEntryFieldsLoad(t *testing.T) {
	const post = "    submit:\n      selector: \"button#compose-submit\"\n    result: &post-result"
	d, err := sites.Parse("bundled/sites/demo.yaml", demoWith(t, post, demoFields))
	require.NoError(t, err)

	for _, tc := range []struct {
		name   string
		fields intent.Fields
		k      kind.Kind
		field  string
		want   string
	}{
		{"Fine", intent.Fields{"category": intent.Text("News"), "tags": intent.List("a", "b")}, kind.Post, "", ""},
		{"None", nil, kind.Post, "", ""},
		{"Unknown", intent.Fields{"colour": intent.Text("red")}, kind.Post, "colour", `site "demo" takes no entry field "colour" on a post (it takes: category, tags)`},
		{"NotAChoice", intent.Fields{"category": intent.Text("Sport")}, kind.Post, "category", "is one of News, Notes, not \"Sport\""},
		{"ListAsText", intent.Fields{"tags": intent.Text("a")}, kind.Post, "tags", "is a list of texts"},
		{"TextAsList", intent.Fields{"category": intent.List("News")}, kind.Post, "category", "is one text, not a list"},
		{"OtherKind", intent.Fields{"category": intent.Text("News")}, kind.Reply, "category", `takes no entry field "category" on a reply`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			field, err := d.RefuseFields(tc.k, tc.fields)
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.want)
			require.Equal(t, tc.field, field)
		})
	}

	for _, tc := range []struct{ name, old, new, want string }{
		{"UnknownInStep", `click: '#cats input:name("{fields.category}")'`, `click: '#cats input:name("{fields.colour}")'`,
			"actions.post.steps[0]: {fields.colour}: no such entry field"},
		{"OutsideWords", `click: '#cats input:name("{fields.category}")'`, `click: '#cat-{fields.category}'`,
			"an entry field stands in a selector only inside its :text"},
		{"ListInFill", `      selector: "textarea#compose-text"`, "      selector: \"textarea#compose-text\"\n      value: \"{fields.tags}\"",
			"{fields.tags} is a list: a step types each of its texts"},
		{"Unused", "      - type: \"#tags input\"\n        value: \"{fields.tags}\"\n        key: Enter\n", "",
			"actions.post.entry_fields.tags: is never used"},
		{"NoReadBack", "        check: '#tags .token:text(\"{fields.tags}\")'\n", "",
			"actions.post.entry_fields.tags.check: required: how the page shows the field was set"},
		{"BadType", "        type: list\n", "        type: set\n", `actions.post.entry_fields.tags.type: "set" is not one of text, choice, list`},
		{"NoChoices", "        choices: [News, Notes]\n", "", "actions.post.entry_fields.category.choices: required"},
		{"BadKey", "        key: Enter", "        key: Space", `actions.post.steps[1].key: "Space" is not one of`},
		{"ValueWithoutType", "      - type: \"#tags input\"\n", "      - wait: \"#tags input\"\n", "actions.post.steps[1].type: required: value and key are typed"},
		{"TypeAndClick", "      - type: \"#tags input\"\n", "      - type: \"#tags input\"\n        click: \"#x\"\n", "actions.post.steps[1]: give click or type, not both"},
		{"CheckNamesAnother", `check: '#cats input:checked:name("{fields.category}")'`, `check: '#cats input:checked:name("{fields.tags}")'`,
			"a field's check names only the field itself"},
		{"OpenNeedsRequired", `open: "{origin}/compose"`, `open: "{origin}/compose?c={fields.category}"`,
			"actions.post.open: {fields.category} names the page: it must be a required text or choice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			y := string(demoWith(t, post, demoFields))
			require.Contains(t, y, tc.old, "fixture drifted")
			_, err := sites.Parse("bundled/sites/demo.yaml", []byte(strings.Replace(y, tc.old, tc.new, 1)))
			require.ErrorIs(t, err, sites.ErrInvalid)
			require.ErrorContains(t, err, tc.want)
		})
	}
}
