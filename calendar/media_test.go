package calendar_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/calendar"
	"github.com/browserop/browserop/media"
)

// pngBytes is n bytes that media.Load takes for a PNG: it only sniffs.
func pngBytes(n int) []byte {
	b := []byte("\x89PNG\r\n\x1a\n")
	return append(b, make([]byte, max(0, n-len(b)))...)
}

// writeFile writes data to dir/name, making its directory.
func writeFile(t *testing.T, dir, name string, data []byte) {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
	require.NoError(t, os.WriteFile(p, data, 0o600))
}

// entryHead is the start of a calendar entry of the given type, due
// long ago; line 2 of a file that starts with "entries:".
func entryHead(id, typ string) string {
	return "  - id: " + id + "\n    site: demo\n    actor: alice\n    type: " + typ + "\n    at: 2026-12-01T10:00:00Z\n"
}

func TestCalendarMediaOK(t *testing.T) {
	t.Parallel()
	dir, mediaDir := t.TempDir(), t.TempDir()
	writeFile(t, mediaDir, "img/a.png", pngBytes(64))
	writeFile(t, mediaDir, "b.png", pngBytes(32))
	writeFile(t, dir, "cal.yaml", []byte("entries:\n"+
		entryHead("launch", "post")+
		"    text: hello\n"+
		"    media:\n"+
		"      - file: img/a.png\n"+
		"        alt: A chart of the launch\n"+
		entryHead("story", "thread")+
		"    parts:\n"+
		"      - one\n"+
		"      - text: two\n"+
		"        media: [{file: b.png}]\n"+
		"      - three\n"))
	cal, err := calendar.Load(dir, mediaDir)
	require.NoError(t, err)
	require.Empty(t, cal.Problems)
	require.Len(t, cal.Entries, 2)

	post := cal.Entries[0]
	require.Len(t, post.Items, 1)
	sum := sha256Hex(pngBytes(64))
	require.Equal(t, media.Item{File: filepath.Join(mediaDir, "img", "a.png"), SHA256: sum, Type: media.PNG, Size: 64,
		Alt: "A chart of the launch"}, post.Items[0])
	require.Nil(t, post.PartItems)

	thread := cal.Entries[1]
	require.Equal(t, []string{"one", "two", "three"}, thread.Parts)
	require.Nil(t, thread.Items)
	require.Len(t, thread.PartItems, 2, "the last part takes none: PartItems ends at the last part with media")
	require.Empty(t, thread.PartItems[0])
	require.Len(t, thread.PartItems[1], 1)
	require.Equal(t, "", thread.PartItems[1][0].Alt, "alt may be omitted")
	require.Equal(t, media.PNG, thread.PartItems[1][0].Type)

	// The media directory defaults to the calendar's.
	writeFile(t, dir, "img/a.png", pngBytes(64))
	writeFile(t, dir, "b.png", pngBytes(32))
	cal, err = calendar.Load(dir, "")
	require.NoError(t, err)
	require.Empty(t, cal.Problems)
	require.Equal(t, filepath.Join(dir, "img", "a.png"), cal.Entries[0].Items[0].File)

	// Entries without media parse as before, with any media directory.
	es, problems := calendar.Parse("cal.yaml", []byte(goodCalendar), "")
	require.Empty(t, problems)
	require.Len(t, es, 5)
}

func TestCalendarMediaProblems(t *testing.T) {
	t.Parallel()
	mediaDir := t.TempDir()
	outside := t.TempDir()
	writeFile(t, mediaDir, "a.png", pngBytes(16))
	writeFile(t, mediaDir, "notes.png", []byte("just text, whatever the name says"))
	writeFile(t, outside, "secret.png", pngBytes(16))
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret.png"), filepath.Join(mediaDir, "link.png")))
	require.NoError(t, os.Mkdir(filepath.Join(mediaDir, "dir.png"), 0o700))

	post := func(items string) string {
		return "entries:\n" + entryHead("e1", "post") + "    text: hi\n    media:\n" + items
	}
	// The first media item is on line 9, the second on line 10.
	for name, tc := range map[string]struct {
		data string
		line int
		want string
	}{
		"Outside":       {post("      - {file: a.png}\n      - {file: ../x.png, alt: x}\n"), 10, `media[1] "../x.png": outside the media directory`},
		"Absolute":      {post("      - {file: " + filepath.Join(mediaDir, "a.png") + "}\n"), 9, "outside the media directory: name a file relative to it"},
		"SymlinkEscape": {post("      - {file: link.png}\n"), 9, `media[0] "link.png": outside the media directory (a link in its path leads out of the folder)`},
		"Missing":       {post("      - {file: gone.png}\n"), 9, `media[0] "gone.png": no such file or directory`},
		"NotAnImage":    {post("      - {file: notes.png}\n"), 9, `media[0] "notes.png": not an image of a known type`},
		"Directory":     {post("      - {file: dir.png}\n"), 9, `media[0] "dir.png": not a regular file`},
		"NoFile":        {post("      - {alt: nothing}\n"), 9, "media[0].file is required"},
		"UnknownKey":    {post("      - file: a.png\n        path: a.png\n"), 10, `media[0]: unknown key "path" (a media item has file and alt)`},
		"NotAMapping":   {post("      - a.png\n"), 9, "media[0] must be a mapping of file and alt"},
		"NotAList":      {"entries:\n" + entryHead("e1", "post") + "    text: hi\n    media: a.png\n", 8, "media must be a list"},
		"AltControl":    {post("      - {file: a.png, alt: \"a\\u0007b\"}\n"), 9, `media[0] "a.png": alt holds the control character U+0007 at character 2`},
		"MediaOnLike": {"entries:\n" + entryHead("e1", "like") + "    target: http://127.0.0.1:8787/p/1\n    media: [{file: a.png}]\n",
			8, "a like takes no media"},
		"MediaOnFollow": {"entries:\n" + entryHead("e1", "follow") + "    target: http://127.0.0.1:8787/u/bob\n    media: [{file: a.png}]\n",
			8, "a follow takes no media"},
		"ThreadMedia": {"entries:\n" + entryHead("e1", "thread") + "    parts: [one, two]\n    media: [{file: a.png}]\n",
			8, "a thread takes media per part (parts), not media"},
		"PartUnknownKey": {"entries:\n" + entryHead("e1", "thread") + "    parts:\n      - one\n      - text: two\n        image: a.png\n",
			10, `parts[1]: unknown key "image" (a part mapping has text and media)`},
		"PartList": {"entries:\n" + entryHead("e1", "thread") + "    parts:\n      - one\n      - [two]\n",
			9, "parts[1] must be a text, or a mapping of text and media"},
		"PartMediaMissing": {"entries:\n" + entryHead("e1", "thread") + "    parts:\n      - one\n      - text: two\n        media:\n          - {file: a.png}\n          - {file: gone.png}\n",
			12, `parts[1].media[1] "gone.png": no such file or directory`},
		"PartNoText": {"entries:\n" + entryHead("e1", "thread") + "    parts:\n      - one\n      - media: [{file: a.png}]\n",
			7, "parts[1] is empty"},
		"PostWithPartMapping": {"entries:\n" + entryHead("e1", "post") + "    text: hi\n    parts: [{text: a}]\n", 8, "a post takes text, not parts"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			es, problems := calendar.Parse("c.yaml", []byte(tc.data), mediaDir)
			require.Empty(t, es)
			require.Len(t, problems, 1)
			require.Equal(t, tc.line, problems[0].Line, problems[0].Error())
			require.Contains(t, problems[0].Error(), tc.want)
			require.Contains(t, problems[0].Error(), `c.yaml:`)
			require.Contains(t, problems[0].Error(), `entry "e1"`)
		})
	}
}

// One entry with a bad media file is dropped with its problem; the other
// entries of the file, before and after it, still count.
func TestCalendarMediaBadEntryKeepsOthers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "a.png", pngBytes(16))
	writeFile(t, dir, "cal.yaml", []byte("entries:\n"+
		entryHead("first", "post")+"    text: one\n    media: [{file: a.png, alt: A}]\n"+ // lines 2-8
		entryHead("bad", "post")+"    text: two\n    media:\n      - {file: a.png}\n      - {file: ../../etc/passwd}\n"+ // 9-17
		entryHead("last", "post")+"    text: three\n")) // 18-
	cal, err := calendar.Load(dir, "")
	require.NoError(t, err)
	var ids []string
	for _, e := range cal.Entries {
		ids = append(ids, e.ID)
	}
	require.Equal(t, []string{"first", "last"}, ids)
	require.Len(t, cal.Problems, 1)
	require.Equal(t, 17, cal.Problems[0].Line)
	require.Equal(t, "bad", cal.Problems[0].EntryID)
	require.Equal(t, filepath.Join(dir, "cal.yaml")+`:17: entry "bad": media[1] "../../etc/passwd": outside the media directory`,
		strings.TrimPrefix(cal.Problems[0].Error(), "calendar: "))
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
