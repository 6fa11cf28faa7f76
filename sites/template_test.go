package sites_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/sites"
)

// wikiYAML is an adapter whose pages are named by their title: a post
// opens the edit page of the title its text starts with, a reply the new
// section of the page its target names, a follow the watch page of it.
const wikiYAML = `origins: ["http://127.0.0.1:8080"]
identity: {url: "{origin}/", selector: "#pt-userpage a"}
actions:
  post:
    open: "{origin}/index.php?title={title}&action=edit"
    fields:
      - {selector: "#wpSummary", value: "Created by browserop"}
      - {selector: "#wpTextbox1", value: "{body}"}
    submit: {selector: "#wpSave"}
    result: {link: {page: true}}
  reply:
    target: {pattern: 'http://127\.0\.0\.1:8080/(?:index\.php\?title=|wiki/)(?P<page>[^&#?]+)'}
    open: "{origin}/index.php?title=Talk:{target.page}&action=edit&section=new"
    fill: {selector: "#wpTextbox1"}
    submit: {selector: "#wpSave"}
    result: {link: {page: true}}
    search:
      url: "{origin}/index.php?title=Talk:{target.page}&action=history"
      item: "#pagehistory li"
      text: {selector: ".comment"}
      author: {selector: ".mw-userlink"}
      link: {selector: "a.mw-changeslist-date", attribute: href}
      parent: {attribute: data-page, template: "{origin}/index.php?title={value}"}
      complete_marker: "#pagehistory"
      max_pages: 1
      lookback: 72h
      settle: 1s
  follow:
    target: {pattern: '.*[?&]title=(?P<page>[^&#]+).*'}
    open: "{origin}/wiki/{target.page}?action=watch"
    submit: {selector: "#ca-watch a"}
    state: {selector: "#ca-watch", attribute: class, done_value: "on", not_done_value: "off"}
search:
  url: "{origin}/index.php?title={title}&action=history"
  item: "#pagehistory li"
  text: {selector: ".comment"}
  author: {selector: ".mw-userlink"}
  link: {selector: "a.mw-changeslist-date", attribute: href}
  complete_marker: "#pagehistory"
  max_pages: 1
  lookback: 72h
  settle: 1s
`

// Templates take a post's title and the named parts of a target, each
// escaped for where it stands (a path segment, a query value), never
// refused for a space or a slash; a target the pattern does not match is
// refused before anything is opened.
func TestTemplatesTakeTitlesAndTargetParts(t *testing.T) {
	d, err := sites.Parse("wiki.yaml", []byte(wikiYAML))
	require.NoError(t, err)
	open := func(in sites.Intent) string {
		t.Helper()
		u, err := d.OpenURL(in)
		require.NoError(t, err)
		return u
	}
	require.Equal(t, "http://127.0.0.1:8080/index.php?title=Team+plan+p1%2F2+%26+more&action=edit",
		open(sites.Intent{Kind: kind.Post, Actor: "alice", Text: "Team plan p1/2 & more\n\nThe plan."}))
	require.Equal(t, "http://127.0.0.1:8080/index.php?title=Talk:Team_plan+p1&action=edit&section=new",
		open(sites.Intent{Kind: kind.Reply, Actor: "alice", Target: "http://127.0.0.1:8080/index.php?title=Team_plan%20p1", Text: "hi"}),
		"a query part is unescaped (%20) and escaped again")
	require.Equal(t, "http://127.0.0.1:8080/index.php?title=Talk:C%2B%2B+notes&action=edit&section=new",
		open(sites.Intent{Kind: kind.Reply, Actor: "alice", Target: "http://127.0.0.1:8080/wiki/C++%20notes", Text: "hi"}),
		"a path part keeps its + as a plus")
	require.Equal(t, "http://127.0.0.1:8080/wiki/Team%20plan?action=watch",
		open(sites.Intent{Kind: kind.Follow, Actor: "alice", Target: "http://127.0.0.1:8080/index.php?title=Team+plan"}),
		"a path segment is path-escaped")

	_, err = d.OpenURL(sites.Intent{Kind: kind.Reply, Actor: "alice", Target: "http://127.0.0.1:8080/Special:Random", Text: "hi"})
	require.ErrorContains(t, err, "does not match the action's target.pattern")
	require.Equal(t, sites.StopTarget, sites.AsHardStop(err).Kind)
	_, err = d.OpenURL(sites.Intent{Kind: kind.Reply, Actor: "alice", Target: "http://evil.example/index.php?title=X", Text: "hi"})
	require.Equal(t, sites.StopTarget, sites.AsHardStop(err).Kind, "a target off the site is refused")
	_, err = d.OpenURL(sites.Intent{Kind: kind.Post, Actor: "alice", Text: "\nno title"})
	require.ErrorIs(t, err, sites.ErrStepFailed, "no title, no page")

	for _, tc := range []struct{ old, new, want string }{
		{`open: "{origin}/index.php?title=Talk:{target.page}&action=edit&section=new"`, `open: "{origin}/index.php?title={target.name}"`,
			`actions.reply.open: {target.name}: the action's target.pattern has no group (?P<name>…)`},
		{`    target: {pattern: '.*[?&]title=(?P<page>[^&#]+).*'}`, `    target: {pattern: 'title=([^&#]+)'}`,
			`actions.follow.target.pattern: "title=([^&#]+)" has no named group`},
		{`    open: "{origin}/index.php?title={title}&action=edit"`, "    target: {pattern: '(?P<x>.)'}\n    open: \"{origin}/index.php?title={title}&action=edit\"",
			`actions.post.target: a post has no target`},
		{`open: "{origin}/index.php?title=Talk:{target.page}&action=edit&section=new"`, `open: "{origin}/index.php?title={title}"`,
			`actions.reply.open: unknown placeholder {title}`},
		{`    target: {pattern: '.*[?&]title=(?P<page>[^&#]+).*'}`, `    target: {pattern: 'title=(?P<Page>[^&#]+)'}`,
			`actions.follow.target.pattern: group name "Page": use lower-case letters`},
	} {
		y := strings.Replace(wikiYAML, tc.old, tc.new, 1)
		require.NotEqual(t, wikiYAML, y, tc.old)
		_, err := sites.Parse("wiki.yaml", []byte(y))
		require.ErrorContains(t, err, tc.want)
	}
}

// A field template escapes the value it is given (a page's name with
// spaces), where it stands, instead of refusing it.
func TestFieldTemplateEscapesValues(t *testing.T) {
	y := strings.Replace(wikiYAML, `parent: {attribute: data-page, template: "{origin}/index.php?title={value}"}`,
		`parent: {attribute: data-page, template: "{origin}/wiki/{value}?from={value}"}`, 1)
	d, err := sites.Parse("wiki.yaml", []byte(y))
	require.NoError(t, err)
	got, err := sites.ExpandValue(d, `{origin}/wiki/{value}?from={value}`, "Team plan p1/2")
	require.NoError(t, err)
	require.Equal(t, "http://127.0.0.1:8080/wiki/Team%20plan%20p1%2F2?from=Team+plan+p1%2F2", got)
	_, err = sites.ExpandValue(d, `{origin}/wiki/{value}`, "a\nb")
	require.ErrorContains(t, err, "does not name a page")
}

// A value is escaped as a query value only after the template's own "?":
// a value expanded before it, longer or shorter than its placeholder,
// moves nothing. A path value cannot add a query key, nor be a dot
// segment; the pattern matches the whole target or nothing.
func TestTemplateEscapingHoldsItsPlace(t *testing.T) {
	y := strings.Replace(wikiYAML, `open: "{origin}/index.php?title=Talk:{target.page}&action=edit&section=new"`,
		`open: "{origin}/w/{target.ns}/{target.page}?page={target.page}&action=edit"`, 1)
	y = strings.Replace(y, `target: {pattern: 'http://127\.0\.0\.1:8080/(?:index\.php\?title=|wiki/)(?P<page>[^&#?]+)'}`,
		`target: {pattern: 'http://127\.0\.0\.1:8080/wiki/(?P<ns>[^/:]+):(?P<page>[^&#?]+)'}`, 1)
	d, err := sites.Parse("wiki.yaml", []byte(y))
	require.NoError(t, err)
	u, err := d.OpenURL(sites.Intent{Kind: kind.Reply, Actor: "alice", Target: "http://127.0.0.1:8080/wiki/T:A%26action%3Ddelete%26x%3D", Text: "hi"})
	require.NoError(t, err)
	require.Equal(t, "http://127.0.0.1:8080/w/T/A&action=delete&x=?page=A%26action%3Ddelete%26x%3D&action=edit", u,
		"the query value is query-escaped, the path part path-escaped: no key is added")
	q, err := url.Parse(u)
	require.NoError(t, err)
	require.Equal(t, []string{"edit"}, q.Query()["action"])

	u, err = d.OpenURL(sites.Intent{Kind: kind.Reply, Actor: "alice", Target: "http://127.0.0.1:8080/wiki/..:..", Text: "hi"})
	require.NoError(t, err)
	require.Equal(t, "http://127.0.0.1:8080/w/%2E%2E/%2E%2E?page=..&action=edit", u, "no dot segment")

	_, err = d.OpenURL(sites.Intent{Kind: kind.Reply, Actor: "alice", Target: "http://127.0.0.1:8080/x/wiki/T:A", Text: "hi"})
	require.ErrorContains(t, err, "does not match the action's target.pattern", "the whole target must match")
}
