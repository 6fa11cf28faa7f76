package mcptools_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/bundled"
	"github.com/browserop/browserop/intent"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/mcptools"
	"github.com/browserop/browserop/sites"
	"github.com/browserop/browserop/tasks"
)

// newMediaFixture is newFixture with a media directory holding a.png (a
// PNG as media.Load sniffs it) and notes.png (text).
func newMediaFixture(t *testing.T) (*fixture, string) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	db, err := ledger.Open(ctx, filepath.Join(dir, "ledger.db"), ledger.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	decl, err := sites.LoadFS(bundled.Sites, "sites")
	require.NoError(t, err)
	var as []sites.Adapter
	for _, a := range decl {
		as = append(as, a)
	}
	mediaDir := filepath.Join(dir, "media")
	require.NoError(t, os.MkdirAll(mediaDir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(mediaDir, "a.png"), []byte("\x89PNG\r\n\x1a\nimage"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(mediaDir, "notes.png"), []byte("not an image"), 0o600))
	tasks := tasks.New(db, as, nil, tasks.WithMediaDir(mediaDir))
	return &fixture{db: db, tasks: tasks, server: mcptools.NewServer(tasks, "test")}, mediaDir
}

// task_submit takes media and part_media; a file outside the media
// directory, missing, not an image or one the site does not take is a
// usage error naming it, and nothing is queued.
func TestMCPSubmitMedia(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			f, _ := newMediaFixture(t)
			cs := tr.connect(t, f.server, nil)
			task, _ := call[tasks.State](t, cs, "task_create", obj{"idempotency_key": "m",
				"contract": obj{"domains": []string{"127.0.0.1"}, "capabilities": []string{"post", "thread"}}})
			submit := func(intent obj) (tasks.State, string) {
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "task_submit", Arguments: obj{"task_id": task.ID, "intent": intent}})
				require.NoError(t, err)
				if res.IsError {
					return tasks.State{}, text(res)
				}
				var st tasks.State
				raw, _ := json.Marshal(res.StructuredContent)
				require.NoError(t, json.Unmarshal(raw, &st))
				return st, ""
			}

			st, msg := submit(obj{"site": "demo", "actor": "alice", "type": "post", "text": "look",
				"media": []obj{{"file": "a.png", "alt": "A picture"}}})
			require.Empty(t, msg)
			tis, err := f.db.TaskIntents(context.Background(), task.ID)
			require.NoError(t, err)
			require.Len(t, tis, 1)
			require.Equal(t, st.SubmittedIntent, tis[0].ID)
			var in intent.Request
			require.NoError(t, json.Unmarshal(tis[0].Request, &in))
			require.Len(t, in.Media, 1)
			require.Equal(t, "a.png", in.Media[0].File)
			require.Equal(t, "A picture", in.Media[0].Alt)
			require.Equal(t, "png", in.Media[0].Type)
			require.Len(t, in.Media[0].SHA256, 64, "the bytes are fixed at submission")

			_, msg = submit(obj{"site": "demo", "actor": "alice", "type": "thread", "parts": []string{"one", "two"},
				"part_media": [][]obj{{}, {{"file": "a.png"}}}})
			require.Empty(t, msg)

			for _, tc := range []struct {
				intent obj
				want   string
			}{
				{obj{"site": "demo", "actor": "alice", "type": "post", "text": "x", "media": []obj{{"file": "../a.png"}}},
					`usage: media[0] "../a.png": outside the media directory`},
				{obj{"site": "demo", "actor": "alice", "type": "post", "text": "x", "media": []obj{{"file": "gone.png"}}},
					`usage: media[0] "gone.png": no such file or directory`},
				{obj{"site": "demo", "actor": "alice", "type": "post", "text": "x", "media": []obj{{"file": "notes.png"}}},
					`usage: media[0] "notes.png": not an image of a known type`},
				{obj{"site": "wordpress", "actor": "alice", "type": "post", "text": "x", "media": []obj{{"file": "a.png"}}},
					`usage: media[0] "a.png": site "wordpress" does not take it on a post: the site needs an alt text for every image`},
				{obj{"site": "demo", "actor": "alice", "type": "post", "text": "x", "media": []obj{{"file": ""}}}, "usage: "},
				{obj{"site": "demo", "actor": "alice", "type": "post", "text": "x", "media": []obj{{"file": "a.png", "sha256": "00"}}}, "usage: "},
			} {
				_, msg := submit(tc.intent)
				require.True(t, strings.HasPrefix(msg, tc.want), "got %q, want %q", msg, tc.want)
			}
			st, _ = call[tasks.State](t, cs, "task_state", obj{"task_id": task.ID})
			require.Equal(t, 2, st.Intents, "a refused intent is not queued")
		})
	}
}
