package operator_test

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/bundled"
	"github.com/browserop/browserop/calendar"
	"github.com/browserop/browserop/operator"
	"github.com/browserop/browserop/sites"
)

func TestJudgeCalendarMediaLimits(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "a.png", pngBytes(100))
	writeFile(t, dir, "b.png", pngBytes(100))
	writeFile(t, dir, "big.png", pngBytes(2000))
	writeFile(t, dir, "c.gif", append([]byte("GIF89a"), make([]byte, 50)...))
	site := limitedDemo(t, 2, "png, jpeg", 1000)
	wp := bundledAdapter(t, "wordpress")

	post := func(id, site string, files ...string) string {
		s := "  - id: " + id + "\n    site: " + site + "\n    actor: alice\n    type: post\n    at: 2026-12-01T10:00:00Z\n    text: hi\n    media:\n"
		for _, f := range files {
			s += "      - {file: " + f + "}\n"
		}
		return s
	}
	writeFile(t, dir, "cal.yaml", []byte("entries:\n"+
		post("ok", "demo", "a.png", "b.png")+ //                  2-10
		post("many", "demo", "a.png", "b.png", "a.png")+ //       11-20: the third (line 20) is one too many
		post("gif", "demo", "a.png", "c.gif")+ //                 21-29: the gif on line 29
		post("big", "demo", "big.png")+ //                        30-37
		post("noalt", "wordpress", "a.png")+ //                   38-45
		"  - id: story\n    site: demo\n    actor: alice\n    type: thread\n    at: 2026-12-01T10:00:00Z\n"+ // 46-50
		"    parts:\n      - {text: one, media: [{file: a.png}]}\n      - text: two\n        media:\n          - {file: b.png}\n"+ // 51-55
		"  - id: first\n    site: demo\n    actor: alice\n    type: thread\n    at: 2026-12-01T10:00:00Z\n"+ // 56-60
		"    parts:\n      - {text: one, media: [{file: a.png, alt: A}]}\n      - two\n")) // 61-63
	cal, err := calendar.Load(dir, "")
	require.NoError(t, err)
	require.Empty(t, cal.Problems, "the files are all readable")
	require.Len(t, cal.Entries, 7)

	cal = operator.JudgeCalendar(cal, []sites.Adapter{site, wp}, nil)
	var ids []string
	for _, e := range cal.Entries {
		ids = append(ids, e.ID)
	}
	require.Equal(t, []string{"ok", "first"}, ids, "a thread's first part without target is a post: its media are checked as a post's")
	want := map[string]struct {
		line int
		msg  string
	}{
		"many":  {20, `media[2] "a.png": site "demo" does not take it on a post: 3 media items, the site takes at most 2`},
		"gif":   {29, `media[1] "c.gif": site "demo" does not take it on a post: the site does not take gif images (it takes png, jpeg)`},
		"big":   {37, `media[0] "big.png": site "demo" does not take it on a post: 2000 bytes is over the site's limit of 1000`},
		"noalt": {45, `media[0] "a.png": site "wordpress" does not take it on a post: the site needs an alt text for every image`},
		"story": {55, `parts[1].media[0] "b.png": site "demo" does not take it on a thread part: the site takes no media on this action`},
	}
	require.Len(t, cal.Problems, len(want))
	for _, p := range cal.Problems {
		w, ok := want[p.EntryID]
		require.True(t, ok, p.Error())
		require.Equal(t, w.line, p.Line, p.Error())
		require.Equal(t, w.msg, p.Problem)
		require.Contains(t, p.Error(), "cal.yaml:"+itoa(w.line)+": entry ")
	}
}

// limitedDemo is the bundled demo adapter with its media limits replaced:
// posts and replies take at most maxItems of types, each at most maxBytes;
// thread parts (after the first, which is a post) take none.
func limitedDemo(t *testing.T, maxItems int, types string, maxBytes int) sites.Adapter {
	t.Helper()
	raw, err := fs.ReadFile(bundled.Sites, "sites/demo.yaml")
	require.NoError(t, err)
	spec := string(raw)
	for old, new := range map[string]string{
		"max: 4\n":                        "max: " + itoa(maxItems) + "\n",
		"types: [png, jpeg, gif, webp]\n": "types: [" + types + "]\n",
		"max_bytes: 5242880\n":            "max_bytes: " + itoa(maxBytes) + "\n",
		"  thread_part: *reply\n":         "  thread_part:\n    open: \"{target}\"\n    fill: {selector: \"textarea#reply-text\"}\n    submit: {selector: \"button#reply-submit\"}\n    result: *post-result\n",
	} {
		require.Contains(t, spec, old)
		spec = strings.Replace(spec, old, new, 1)
	}
	d, err := sites.Parse("demo.yaml", []byte(spec))
	require.NoError(t, err)
	return d
}

// bundledAdapter is the bundled adapter called name, as configured there
// (the WordPress one takes one image, with an alt text).
func bundledAdapter(t *testing.T, name string) sites.Adapter {
	t.Helper()
	all, err := sites.LoadFS(bundled.Sites, "sites")
	require.NoError(t, err)
	for _, d := range all {
		if d.Name() == name {
			return d
		}
	}
	t.Fatalf("no bundled adapter %q", name)
	return nil
}

// pngBytes is n bytes that media.Load takes for a PNG: it only sniffs.
func pngBytes(n int) []byte {
	b := []byte("\x89PNG\r\n\x1a\n")
	return append(b, make([]byte, max(0, n-len(b)))...)
}

func itoa(n int) string { return strconv.Itoa(n) }

// writeFile writes data to dir/name, making its directory.
func writeFile(t *testing.T, dir, name string, data []byte) {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
	require.NoError(t, os.WriteFile(p, data, 0o600))
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TestJudgeCalendarEntryFields: the entry fields an entry sets are read
// with the line of each, and an entry that sets one its site's action
// does not declare, of another type, or none where the site needs one,
// is refused at that line, naming the field; the others are kept, with
// their fields.
func TestJudgeCalendarEntryFields(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	wp := bundledAdapter(t, "wordpress")
	entry := func(id, fields string) string {
		return "  - id: " + id + "\n    site: wordpress\n    actor: alice\n    type: post\n    at: 2026-12-01T10:00:00Z\n    text: hi\n    fields:\n" + fields
	}
	writeFile(t, dir, "cal.yaml", []byte("entries:\n"+
		entry("ok", "      category: News\n      tags: [go, release]\n")+ // 2-10
		entry("colour", "      category: News\n      colour: red\n")+ //      11-19: colour on line 19
		entry("tagtext", "      tags: go\n"))) //                            20-27: tags on line 27
	cal, err := calendar.Load(dir, "")
	require.NoError(t, err)
	require.Empty(t, cal.Problems)
	require.Len(t, cal.Entries, 3)
	require.Equal(t, map[string]int{"category": 9, "tags": 10}, cal.Entries[0].FieldsAt)

	cal = operator.JudgeCalendar(cal, []sites.Adapter{wp}, nil)
	require.Len(t, cal.Entries, 1)
	require.Equal(t, "ok", cal.Entries[0].ID)
	require.Equal(t, []string{"go", "release"}, cal.Entries[0].Fields["tags"].Texts)
	require.Len(t, cal.Problems, 2)
	got := map[string]string{}
	for _, p := range cal.Problems {
		got[p.EntryID] = p.Error()
	}
	require.Contains(t, got["colour"], "cal.yaml:19: entry \"colour\": site \"wordpress\" takes no entry field \"colour\" on a post (it takes: category, tags)")
	require.Contains(t, got["tagtext"], "cal.yaml:27: entry \"tagtext\": entry field tags of site \"wordpress\" is a list of texts")
}
