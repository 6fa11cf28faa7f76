package api

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/browserop/browserop/intent"
	"github.com/browserop/browserop/tasks"
)

// pngFile writes an n-byte file that media.Load takes for a PNG (it only
// sniffs) and returns its SHA-256.
func pngFile(t *testing.T, dir, name string, n int) string {
	t.Helper()
	data := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, n-8)...)
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// Intents with media: 202 with the file's bytes recorded in the intent;
// a file outside the media directory, missing, not an image, or one the
// site does not take is 400 usage naming it, and nothing is queued.
func TestSubmitMedia(t *testing.T) {
	mediaDir := t.TempDir()
	sum := pngFile(t, mediaDir, "img/a.png", 100)
	pngFile(t, mediaDir, "huge.png", 5242880+1) // the demo adapter takes at most 5242880 bytes
	if err := os.WriteFile(filepath.Join(mediaDir, "notes.png"), []byte("plain text"), 0o600); err != nil {
		t.Fatal(err)
	}
	e := newEnvMedia(t, mediaDir).start()
	st := e.create("media", tasks.CreateRequest{Title: "media", Contract: demoContract()})
	path := "/v1/tasks/" + st.ID + "/actions"

	// A post with an image and its alt text.
	r := e.do(req{method: "POST", path: path, token: e.agent, body: `{"site": "demo", "actor": "alice", "type": "post", "text": "look",
		"media": [{"file": "img/a.png", "alt": "A square"}]}`})
	want(t, r, http.StatusAccepted, "")
	var got tasks.State
	r.into(t, &got)
	tis, err := e.db.TaskIntents(e.ctx, st.ID)
	if err != nil || len(tis) != 1 || tis[0].ID != got.SubmittedIntent {
		t.Fatalf("intents %+v, %v", tis, err)
	}
	var in intent.Request
	if err := json.Unmarshal(tis[0].Request, &in); err != nil {
		t.Fatal(err)
	}
	if w := (intent.Media{File: "img/a.png", Alt: "A square", SHA256: sum, Type: "png"}); len(in.Media) != 1 || in.Media[0] != w {
		t.Fatalf("recorded media %+v, want %+v", in.Media, w)
	}

	// A thread whose second part has an image (alt omitted).
	want(t, e.do(req{method: "POST", path: path, token: e.agent, body: `{"site": "demo", "actor": "alice", "type": "thread",
		"parts": ["one", "two"], "part_media": [[], [{"file": "img/a.png"}]]}`}), http.StatusAccepted, "")

	usage := func(body, reason string) {
		t.Helper()
		r := e.do(req{method: "POST", path: path, token: e.agent, body: body})
		want(t, r, http.StatusBadRequest, "usage")
		if !strings.Contains(r.message(), reason) {
			t.Fatalf("message %q, want %q", r.message(), reason)
		}
	}
	post := func(media string) string {
		return `{"site": "demo", "actor": "alice", "type": "post", "text": "x", "media": ` + media + `}`
	}
	usage(post(`[{"file": "../secret.png"}]`), `media[0] "../secret.png": outside the media directory`)
	usage(post(`[{"file": "`+filepath.Join(mediaDir, "img", "a.png")+`"}]`), "outside the media directory: name a file relative to it")
	usage(post(`[{"file": "img/a.png"}, {"file": "gone.png"}]`), `media[1] "gone.png": no such file or directory`)
	usage(post(`[{"file": "notes.png"}]`), `media[0] "notes.png": not an image of a known type (png, jpeg, gif, webp)`)
	usage(post(`[{"file": "huge.png"}]`), `media[0] "huge.png": site "demo" does not take it on a post: 5242881 bytes is over the site's limit of 5242880`)
	usage(post(`[{"file": "img/a.png"}, {"file": "img/a.png"}, {"file": "img/a.png"}, {"file": "img/a.png"}, {"file": "img/a.png"}]`),
		`media[4] "img/a.png": site "demo" does not take it on a post: 5 media items, the site takes at most 4`)
	usage(`{"site": "wordpress", "actor": "alice", "type": "post", "text": "x", "media": [{"file": "img/a.png"}]}`,
		`media[0] "img/a.png": site "wordpress" does not take it on a post: the site needs an alt text for every image`)
	usage(post(`[{"file": "img/a.png", "sha256": "`+sum+`"}]`), "sha256 and type are read from the file")
	usage(`{"site": "demo", "actor": "alice", "type": "thread", "parts": ["a", "b"], "media": [{"file": "img/a.png"}]}`,
		"a thread takes media per part (part_media), not media")

	// A media item with an unknown field is malformed JSON for the API.
	want(t, e.do(req{method: "POST", path: path, token: e.agent, body: post(`[{"file": "img/a.png", "path": "x"}]`)}),
		http.StatusBadRequest, "bad_json")

	if s, _ := e.svc.Get(e.ctx, st.ID); s.Intents != 2 {
		t.Fatalf("%d intents, want the 2 accepted", s.Intents)
	}
}
