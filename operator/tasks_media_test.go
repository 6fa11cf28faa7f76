package operator_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/budgets"
	"github.com/browserop/browserop/errcode"
	"github.com/browserop/browserop/intent"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/operator"
	"github.com/browserop/browserop/sites"
	"github.com/browserop/browserop/tasks"
)

// mediaTasks is a real ledger, a media directory and a task service over
// the demo adapter (origin http://127.0.0.1:8787) whose posts and replies
// take at most 2 png or jpeg images of at most 1000 bytes, and whose
// thread parts after the first take none.
type mediaTasks struct {
	db       *ledger.DB
	site     sites.Adapter
	mediaDir string
	svc      *tasks.Service
	task     tasks.State
}

func newMediaTasks(t *testing.T) *mediaTasks {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	db, err := ledger.Open(ctx, filepath.Join(dir, "ledger.db"), ledger.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	m := &mediaTasks{db: db, site: limitedDemo(t, 2, "png, jpeg", 1000), mediaDir: filepath.Join(dir, "media")}
	writeFile(t, m.mediaDir, "a.png", pngBytes(100))
	writeFile(t, m.mediaDir, "b.png", pngBytes(200))
	writeFile(t, m.mediaDir, "c.gif", append([]byte("GIF89a"), make([]byte, 50)...))
	writeFile(t, m.mediaDir, "notes.txt", []byte("not an image"))
	m.svc = tasks.New(db, []sites.Adapter{m.site}, nil, tasks.WithMediaDir(m.mediaDir))
	m.task, _, err = m.svc.Agent().Create(ctx, "media-task", contract("post", "reply", "thread", "like"), "api")
	require.NoError(t, err)
	return m
}

// stored is the request the ledger recorded for the intent id.
func (m *mediaTasks) stored(t *testing.T, id string) intent.Request {
	t.Helper()
	tis, err := m.db.TaskIntents(context.Background(), m.task.ID)
	require.NoError(t, err)
	for _, ti := range tis {
		if ti.ID == id {
			var in intent.Request
			require.NoError(t, json.Unmarshal(ti.Request, &in))
			return in
		}
	}
	t.Fatalf("no intent %s", id)
	return intent.Request{}
}

func TestSubmitMedia(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := newMediaTasks(t)
	agent := m.svc.Agent()

	t.Run("OK", func(t *testing.T) {
		in := intent.Request{Site: "demo", Actor: "alice", Type: intent.Post, Text: "with a picture",
			Media: []intent.Media{{File: "a.png", Alt: "A square"}}}
		st, err := agent.Submit(ctx, m.task.ID, in)
		require.NoError(t, err)
		got := m.stored(t, st.SubmittedIntent)
		require.Equal(t, []intent.Media{{File: "a.png", Alt: "A square", SHA256: sha256Hex(pngBytes(100)), Type: "png"}}, got.Media,
			"the file's bytes are recorded at submission")
		again, err := agent.Submit(ctx, m.task.ID, in)
		require.NoError(t, err)
		require.Equal(t, st.SubmittedIntent, again.SubmittedIntent, "the same intent twice is one intent")
		require.Equal(t, 1, again.Intents)
	})

	t.Run("ThreadPartMedia", func(t *testing.T) {
		in := intent.Request{Site: "demo", Actor: "alice", Type: intent.Thread, Parts: []string{"one", "two", "three"},
			PartMedia: [][]intent.Media{{{File: "a.png"}, {File: "b.png", Alt: "B"}}, {}, {}}}
		st, err := agent.Submit(ctx, m.task.ID, in)
		require.NoError(t, err)
		got := m.stored(t, st.SubmittedIntent)
		require.Len(t, got.PartMedia, 1, "trailing parts without media are dropped")
		require.Equal(t, sha256Hex(pngBytes(200)), got.PartMedia[0][1].SHA256)
		require.Nil(t, got.Media)
	})

	for name, tc := range map[string]struct {
		in   intent.Request
		want string
	}{
		"Outside":    {mediaPost(intent.Media{File: "../x.png"}), `media[0] "../x.png": outside the media directory`},
		"Absolute":   {mediaPost(intent.Media{File: "/etc/passwd"}), `media[0] "/etc/passwd": outside the media directory`},
		"Missing":    {mediaPost(intent.Media{File: "a.png"}, intent.Media{File: "gone.png"}), `media[1] "gone.png": no such file or directory`},
		"NotAnImage": {mediaPost(intent.Media{File: "notes.txt"}), `media[0] "notes.txt": not an image of a known type`},
		"SiteType":   {mediaPost(intent.Media{File: "c.gif"}), `media[0] "c.gif": site "demo" does not take it on a post: the site does not take gif images (it takes png, jpeg)`},
		"TooMany": {mediaPost(intent.Media{File: "a.png"}, intent.Media{File: "a.png"}, intent.Media{File: "b.png"}),
			`media[2] "b.png": site "demo" does not take it on a post: 3 media items, the site takes at most 2`},
		"NoFile":     {mediaPost(intent.Media{Alt: "x"}), "media[0]: file is required"},
		"SHAGiven":   {mediaPost(intent.Media{File: "a.png", SHA256: strings.Repeat("0", 64)}), "sha256 and type are read from the file"},
		"AltControl": {mediaPost(intent.Media{File: "a.png", Alt: "a\x07b"}), `media[0] "a.png": alt holds the control character U+0007 at character 2`},
		"AltC1":      {mediaPost(intent.Media{File: "a.png", Alt: "a\u009bb"}), `media[0] "a.png": alt holds the control character U+009B at character 2`},
		"AltBidi":    {mediaPost(intent.Media{File: "a.png", Alt: "a\u202eb"}), `media[0] "a.png": alt holds the bidirectional control U+202E at character 2`},
		"TextESC":    {intent.Request{Site: "demo", Actor: "alice", Type: intent.Post, Text: "clear \x1b[2J"}, "text holds the control character U+001B at character 7"},
		"PartBEL":    {intent.Request{Site: "demo", Actor: "alice", Type: intent.Thread, Parts: []string{"a", "b\a"}}, "U+0007"},
		"Like": {intent.Request{Site: "demo", Actor: "alice", Type: intent.Like, Target: "http://127.0.0.1:8787/p/1",
			Media: []intent.Media{{File: "a.png"}}}, "a like takes no media"},
		"ThreadOwnMedia": {intent.Request{Site: "demo", Actor: "alice", Type: intent.Thread, Parts: []string{"a", "b"},
			Media: []intent.Media{{File: "a.png"}}}, "a thread takes media per part (part_media), not media"},
		"PartMediaOnPost": {intent.Request{Site: "demo", Actor: "alice", Type: intent.Post, Text: "x",
			PartMedia: [][]intent.Media{{{File: "a.png"}}}}, "a post takes no per-part media"},
		"PartMediaTooLong": {intent.Request{Site: "demo", Actor: "alice", Type: intent.Thread, Parts: []string{"a", "b"},
			PartMedia: [][]intent.Media{{}, {}, {{File: "a.png"}}}}, "media for 3 parts, the thread has 2"},
		"LaterPart": {intent.Request{Site: "demo", Actor: "alice", Type: intent.Thread, Parts: []string{"a", "b"},
			PartMedia: [][]intent.Media{{}, {{File: "a.png"}}}},
			`part_media[1][0] "a.png": site "demo" does not take it on a thread part: the site takes no media on this action`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := agent.Submit(ctx, m.task.ID, tc.in)
			require.ErrorIs(t, err, errcode.ErrUsage)
			require.Contains(t, err.Error(), tc.want)
		})
	}

	t.Run("NoMediaDir", func(t *testing.T) {
		svc := tasks.New(m.db, []sites.Adapter{m.site}, nil)
		_, err := svc.Agent().Submit(ctx, m.task.ID, mediaPost(intent.Media{File: "a.png"}))
		require.ErrorIs(t, err, errcode.ErrUsage)
		require.Contains(t, err.Error(), "no media directory is configured (calendar.media_dir)")
	})
	st, err := agent.Get(ctx, m.task.ID)
	require.NoError(t, err)
	require.Equal(t, 2, st.Intents, "nothing refused was queued")
}

func mediaPost(items ...intent.Media) intent.Request {
	return intent.Request{Site: "demo", Actor: "alice", Type: intent.Post, Text: "hi", Media: items}
}

// A media file replaced after its intent was submitted is never published
// under that intent: the pass reports it and skips the intent, reserving
// nothing. Restored, the intent goes on with the key fixed at submission.
// (No browser: the pass stops at the tab, after the reservation.)
func TestTaskIntentMediaChangedIsSkipped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := newMediaTasks(t)
	in := intent.Request{Site: "demo", Actor: "alice", Type: intent.Thread, Parts: []string{"one", "two"},
		PartMedia: [][]intent.Media{{{File: "a.png", Alt: "A"}}}}
	st, err := m.svc.Agent().Submit(ctx, m.task.ID, in)
	require.NoError(t, err)
	intentID := st.SubmittedIntent

	policy, err := budgets.NewPolicy(nil, nil)
	require.NoError(t, err)
	r := operator.NewRunner(m.db, []sites.Adapter{m.site}, policy, operator.Planner{}, nil,
		operator.Config{MediaDir: m.mediaDir, LeaseTTL: 10 * time.Second, Heartbeat: time.Second}, nil)
	t.Cleanup(func() { r.Close() })

	original, err := os.ReadFile(filepath.Join(m.mediaDir, "a.png"))
	require.NoError(t, err)
	writeFile(t, m.mediaDir, "a.png", pngBytes(101)) // another image under the same name
	sum, err := r.Pass(ctx)
	require.NoError(t, err)
	require.Contains(t, strings.Join(sum.Problems, "\n"), "task "+m.task.ID+": intent "+intentID+
		`: media file "a.png" (part_media[0][0]) changed since the intent was submitted; it is not performed`)
	acts, err := m.db.ListActions(ctx, ledger.ActionFilter{TaskID: m.task.ID})
	require.NoError(t, err)
	require.Empty(t, acts, "nothing reserved for the changed file")

	require.NoError(t, os.Remove(filepath.Join(m.mediaDir, "a.png")))
	sum, err = r.Pass(ctx)
	require.NoError(t, err)
	require.Contains(t, strings.Join(sum.Problems, "\n"), `part_media[0][0] "a.png": no such file or directory; it is not performed while the file cannot be read`)

	writeFile(t, m.mediaDir, "a.png", original)
	sum, err = r.Pass(ctx)
	require.NoError(t, err)
	require.NotContains(t, strings.Join(sum.Problems, "\n"), intentID, "restored: no problem")
	acts, err = m.db.ListActions(ctx, ledger.ActionFilter{TaskID: m.task.ID})
	require.NoError(t, err)
	require.Len(t, acts, 1, "the first part is reserved (and held: there is no browser)")
	p, err := ledger.ParsePayload(acts[0].Payload)
	require.NoError(t, err)
	require.Equal(t, []ledger.PayloadMedia{{SHA256: sha256Hex(original), Type: "png", Alt: "A"}}, p.Media,
		"the key holds the bytes submitted")
	require.Equal(t, ledger.Planned, acts[0].Status)
}
