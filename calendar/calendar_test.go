package calendar_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/calendar"
	"github.com/browserop/browserop/intent"
)

const goodCalendar = `entries:
  - id: launch
    site: demo
    actor: "@alice"
    type: post
    at: 2026-12-01T09:30:00+01:00
    text: "Hello, world"
  - id: story
    site: demo
    actor: alice
    type: thread
    at: 2026-12-01T10:00:00Z
    parts: ["one", "two", "three"]
  - id: answer
    site: demo
    actor: alice
    type: reply
    at: 2026-12-01T10:00:00Z
    target: http://127.0.0.1:8080/p/3
    text: thanks!
  - id: fav
    site: demo
    actor: alice
    type: like
    at: 2026-12-01T10:00:00Z
    target: http://127.0.0.1:8080/p/3
  - id: carol
    site: demo
    actor: alice
    type: follow
    at: 2026-12-01T10:00:00Z
    target: http://127.0.0.1:8080/u/carol
`

func TestParseCalendarOK(t *testing.T) {
	t.Parallel()
	es, problems := calendar.Parse("cal.yaml", []byte(goodCalendar), "")
	require.Empty(t, problems)
	require.Len(t, es, 5)
	require.Equal(t, "alice", es[0].Actor, "a leading @ is dropped")
	require.True(t, es[0].At.Equal(time.Date(2026, 12, 1, 8, 30, 0, 0, time.UTC)))
	require.Equal(t, []string{"one", "two", "three"}, es[1].Parts)
	require.Equal(t, 2, es[0].Line)
	require.Equal(t, "cal.yaml", es[0].File)
}

func TestParseCalendarProblems(t *testing.T) {
	t.Parallel()
	entry := func(body string) string { return "entries:\n  - id: e1\n    site: demo\n    actor: alice\n" + body }
	for name, tc := range map[string]struct {
		data string
		line int
		want string
	}{
		"NotYAML":       {"entries: [\n  - id: x\n", 1, "not valid YAML"},
		"TopLevelKey":   {"entrys:\n  - id: x\n", 1, `unknown key "entrys"`},
		"EntryKey":      {entry("    type: post\n    at: 2026-12-01T10:00:00Z\n    txt: hi\n"), 7, `unknown key "txt"`},
		"NoZone":        {entry("    type: post\n    at: 2026-12-01T10:00:00\n    text: hi\n"), 6, "RFC 3339 time with a zone"},
		"BadType":       {entry("    type: repost\n    at: 2026-12-01T10:00:00Z\n    text: hi\n"), 5, `type "repost" is not one of`},
		"EmptyText":     {entry("    type: post\n    at: 2026-12-01T10:00:00Z\n    text: '  '\n"), 7, "text is empty"},
		"ReplyNoTarget": {entry("    type: reply\n    at: 2026-12-01T10:00:00Z\n    text: hi\n"), 2, "needs target"},
		"ShortThread":   {entry("    type: thread\n    at: 2026-12-01T10:00:00Z\n    parts: [only]\n"), 7, "at least 2 parts"},
		"LikeWithText":  {entry("    type: like\n    at: 2026-12-01T10:00:00Z\n    target: http://x/p/1\n    text: hi\n"), 8, "takes no text"},
		"BadID":         {"entries:\n  - id: 'no spaces'\n    site: demo\n    actor: a\n    type: post\n    at: 2026-12-01T10:00:00Z\n    text: hi\n", 2, "must be 1-128 letters"},
		"NoSite":        {"entries:\n  - id: x\n    actor: a\n    type: post\n    at: 2026-12-01T10:00:00Z\n    text: hi\n", 2, "site is required"},
		"BadTarget":     {entry("    type: follow\n    at: 2026-12-01T10:00:00Z\n    target: carol\n"), 7, "needs target"},
		// What a published text may hold (internal/pubtext): no escape
		// sequence reaches the site, no bidi override hides what it says.
		"TextESC":  {entry("    type: post\n    at: 2026-12-01T10:00:00Z\n    text: \"red \\e[31m\"\n"), 7, "text holds the control character U+001B at character 5"},
		"TextBEL":  {entry("    type: post\n    at: 2026-12-01T10:00:00Z\n    text: \"ding\\a\"\n"), 7, "U+0007"},
		"PartBidi": {entry("    type: thread\n    at: 2026-12-01T10:00:00Z\n    parts: [\"one\", \"abc\\u202Efed\"]\n"), 7, "bidirectional control U+202E at character 4"},
	} {
		t.Run(name, func(t *testing.T) {
			es, problems := calendar.Parse("c.yaml", []byte(tc.data), "")
			require.Empty(t, es)
			require.Len(t, problems, 1)
			require.Equal(t, tc.line, problems[0].Line, problems[0].Error())
			require.Contains(t, problems[0].Error(), tc.want)
			require.Contains(t, problems[0].Error(), "c.yaml:")
		})
	}
}

func TestLoadCalendarKeepsValidEntries(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, data string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600))
	}
	write("a.yaml", goodCalendar)
	write("b.yaml", "entries: [oops\n")
	write("c.yml", "entries:\n  - id: launch\n    site: demo\n    actor: bob\n    type: post\n    at: 2026-12-01T10:00:00Z\n    text: dup\n"+
		"  - id: fine\n    site: demo\n    actor: bob\n    type: post\n    at: 2026-12-01T10:00:00Z\n    text: ok\n"+
		"  - id: broken\n    site: demo\n    actor: bob\n    type: post\n    at: tomorrow\n    text: x\n")
	write("notes.txt", "not a calendar")
	cal, err := calendar.Load(dir, "")
	require.NoError(t, err)
	var ids []string
	for _, e := range cal.Entries {
		ids = append(ids, e.ID)
	}
	require.Equal(t, []string{"launch", "story", "answer", "fav", "carol", "fine"}, ids, "valid entries still count")
	require.Len(t, cal.Problems, 3)
	var msgs []string
	for _, p := range cal.Problems {
		msgs = append(msgs, p.Error())
	}
	require.Contains(t, msgs[0], "b.yaml:1")
	require.Contains(t, strings.Join(msgs, "\n"), `c.yml:2: entry "launch": id is already used`)
	require.Contains(t, strings.Join(msgs, "\n"), `c.yml:18: entry "broken"`)

	empty, err := calendar.Load(filepath.Join(dir, "missing"), "")
	require.NoError(t, err)
	require.Empty(t, empty.Entries)
}

func FuzzParseCalendar(f *testing.F) {
	f.Add([]byte(goodCalendar))
	f.Add([]byte("entries:\n  - id: x\n"))
	f.Add([]byte("- 1\n- 2\n"))
	f.Add([]byte("entries: {a: b}\n"))
	f.Add([]byte("entries:\n  - id: x\n    site: s\n    actor: a\n    type: thread\n    at: 2026-12-01T10:00:00Z\n" +
		"    parts: [one, {text: two, media: [{file: a.png, alt: A}]}]\n"))
	f.Add([]byte("entries:\n  - id: x\n    site: s\n    actor: a\n    type: post\n    at: 2026-12-01T10:00:00Z\n    text: t\n    media: [{file: a.png}]\n"))
	mediaDir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		es, problems := calendar.Parse("f.yaml", data, mediaDir)
		for _, e := range es {
			if e.ID == "" || e.Site == "" || e.Actor == "" || e.At.IsZero() {
				t.Fatalf("an accepted entry is incomplete: %+v", e)
			}
		}
		for _, p := range problems {
			if p.Error() == "" {
				t.Fatal("empty problem")
			}
		}
	})
}

// TestParseCalendarFields: an entry's fields are a mapping of names to a
// text or a list of texts; anything else, a bad name or an empty text is
// a problem at its line, and a like takes none.
func TestParseCalendarFields(t *testing.T) {
	head := "entries:\n  - id: a\n    site: demo\n    actor: alice\n    type: post\n    at: 2026-12-01T10:00:00Z\n    text: hi\n"
	entries, problems := calendar.Parse("c.yaml", []byte(head+"    fields:\n      category: News\n      tags: [a, b]\n"), "")
	require.Empty(t, problems)
	require.Len(t, entries, 1)
	require.Equal(t, intent.Fields{"category": intent.Text("News"), "tags": intent.List("a", "b")}, entries[0].Fields)
	for _, tc := range []struct{ fields, want string }{
		{"    fields: [a]\n", "c.yaml:8: entry \"a\": fields must be a mapping"},
		{"    fields:\n      category: {x: 1}\n", "c.yaml:9: entry \"a\": fields.category must be a text or a list of texts"},
		{"    fields:\n      tags: [a, [b]]\n", "c.yaml:9: entry \"a\": fields.tags: each item is a text"},
		{"    fields:\n      Category: News\n", "c.yaml:9: entry \"a\": entry field name \"Category\" must be lowercase"},
		{"    fields:\n      category: \" \"\n", "c.yaml:9: entry \"a\": entry field category is empty"},
		{"    fields:\n      tags: []\n", "c.yaml:9: entry \"a\": entry field tags is an empty list"},
		{"    fields:\n      tags: [a, a]\n", "c.yaml:9: entry \"a\": entry field tags lists \"a\" twice"},
	} {
		_, problems := calendar.Parse("c.yaml", []byte(head+tc.fields), "")
		require.Len(t, problems, 1, tc.fields)
		require.Contains(t, problems[0].Error(), tc.want)
	}
	like := "entries:\n  - id: l\n    site: demo\n    actor: alice\n    type: like\n    target: https://x.test/p/1\n    at: 2026-12-01T10:00:00Z\n    fields: {category: News}\n"
	_, problems = calendar.Parse("c.yaml", []byte(like), "")
	require.Len(t, problems, 1)
	require.Contains(t, problems[0].Error(), "c.yaml:8: entry \"l\": a like takes no entry fields")
}
