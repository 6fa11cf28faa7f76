//go:build unix

package api

import (
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/browserop/browserop/tasks"
)

// A FIFO in the media folder named by a submit is 400 usage at once: the
// request used to wait on the FIFO forever, each one holding a thread and
// a descriptor of serve's.
func TestSubmitMediaFIFOAnswersAtOnce(t *testing.T) {
	mediaDir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(mediaDir, "pipe.png"), 0o600); err != nil {
		t.Fatal(err)
	}
	e := newEnvMedia(t, mediaDir).start()
	st := e.create("fifo", tasks.CreateRequest{Title: "fifo", Contract: demoContract()})
	done := make(chan resp, 1)
	go func() {
		done <- e.do(req{method: "POST", path: "/v1/tasks/" + st.ID + "/actions", token: e.agent,
			body: `{"site": "demo", "actor": "alice", "type": "post", "text": "x", "media": [{"file": "pipe.png"}]}`})
	}()
	select {
	case r := <-done:
		want(t, r, http.StatusBadRequest, "usage")
		if !strings.Contains(r.message(), `media[0] "pipe.png": not a regular file (a FIFO)`) {
			t.Fatalf("message %q", r.message())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a submit naming a FIFO did not answer")
	}
}
