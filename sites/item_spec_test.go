package sites_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/sites"
)

// A result and a search read their items with one ItemSpec: a rule of
// the item holds under either key, with the same message.
func TestItemSpecRulesInResultAndSearch(t *testing.T) {
	readers := []struct{ path, indent string }{
		{"actions.post.result", "      "},
		{"search", "  "},
	}
	for _, tc := range []struct{ name, old, new, want string }{
		{"PageOnlyForURLs", `text: {selector: ".post-text"}`, `text: {page: true}`, ": page is only for link and parent"},
		{"LinkRequired", `link: {selector: "a.permalink", attribute: href}`, `title: {selector: h2}`, ".link: required: give a selector, an attribute or both"},
		{"ItemSelector", `item: "`, `item: " `, ".item: has leading or trailing space"},
		{"TimeLayout", `time: {selector: "time", attribute: datetime}`, `time: {selector: "time", layout: "2006/01/02 at 3:04 pm"}`, `.time.layout: "2006/01/02 at 3:04 pm" has no time zone`},
		{"AuthorShows", `author: {attribute: data-author}`, `author: {attribute: data-author, shows: nick}`, `.author.shows: "nick" is not one of login, slug, name`},
		{"ParentTemplate", `parent: {attribute: data-parent, template: "{origin}/p/{value}"}`, `parent: {attribute: data-parent, template: "{origin}/p/"}`, ".parent.template: must contain {value}"},
		{"UnknownKey", `author: {attribute: data-author}`, "author: {attribute: data-author}\n%sbogus: 1", ".bogus: unknown key"},
	} {
		for _, r := range readers {
			t.Run(tc.name+"/"+r.path, func(t *testing.T) {
				_, err := sites.Parse("demo.yaml", demoWith(t, "\n"+r.indent+tc.old, "\n"+r.indent+strings.ReplaceAll(tc.new, "%s", r.indent)))
				require.ErrorIs(t, err, sites.ErrInvalid)
				require.ErrorContains(t, err, r.path+tc.want)
				for _, other := range readers {
					if other.path != r.path {
						require.NotContains(t, err.Error(), other.path+tc.want, "a rule broken in one reader is reported in it alone")
					}
				}
			})
		}
	}
}

// The rules of one reader stay its own: a result may leave its text and
// author out, and reads a title only with its text; a search needs a link
// per item, its text and its author, which an own list leaves out.
func TestItemSpecReaderRules(t *testing.T) {
	for _, tc := range []struct{ name, old, new, want string }{
		{"ResultTitleNeedsText", "\n      text: {selector: \".post-text\"}", "\n      title: {selector: h2}", "actions.post.result.title: needs result.text too"},
		{"ResultFieldsNeedItem", "\n      item: \"article.post#post\"", "\n      item: \"\"", "actions.post.result.item: required to read fields other than a page link"},
		{"SearchTextRequired", "\n  text: {selector: \".post-text\"}", "", "search.text: required"},
		{"SearchLinkPerItem", "\n  link: {selector: \"a.permalink\", attribute: href}", "\n  link: {page: true}", "search.link: each item needs its own link"},
		{"SearchAuthorRequired", "\n  author: {attribute: data-author}", "", "search.author: required"},
		{"OwnListHasNoAuthor", "\n  item: \"#timeline article.post\"", "\n  item: \"#timeline article.post\"\n  own: true", "search.author: an own list has the actor as every item's author"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := sites.Parse("demo.yaml", demoWith(t, tc.old, tc.new))
			require.ErrorIs(t, err, sites.ErrInvalid)
			require.ErrorContains(t, err, tc.want)
		})
	}
	for _, tc := range []struct{ name, old, new string }{
		{"ResultWithoutText", "\n      text: {selector: \".post-text\"}", ""},
		{"ResultWithoutAuthor", "\n      author: {attribute: data-author}", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := sites.Parse("demo.yaml", demoWith(t, tc.old, tc.new))
			require.NoError(t, err)
		})
	}
}
