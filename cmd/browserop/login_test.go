package main

import (
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/browser/browsertest"
)

func TestLacksDisplay(t *testing.T) {
	require.True(t, lacksDisplay("linux", []string{"HOME=/root"}))
	require.True(t, lacksDisplay("linux", []string{"DISPLAY="}))
	require.False(t, lacksDisplay("linux", []string{"DISPLAY=:0"}))
	require.False(t, lacksDisplay("freebsd", []string{"WAYLAND_DISPLAY=wayland-0"}))
	require.False(t, lacksDisplay("darwin", nil))
}

// TestE2ELoginWithoutDisplay: with no display, login runs Chrome without a
// window and says how to reach it (the DevTools port, forwarded over SSH);
// when the person closes the sign-in window, login ends at once with a
// message instead of waiting for its timeout.
func TestE2ELoginWithoutDisplay(t *testing.T) {
	w := newWorld(t, opts{browser: true, noSignIn: true})
	p := w.start([]string{"DISPLAY=", "WAYLAND_DISPLAY="}, "login", "--site", "demo", "--timeout", "5m")
	eventually(t, 60*time.Second, "login waits for a sign-in", func() bool {
		select {
		case <-p.Done():
			t.Fatalf("login ended: %s", p)
		default:
		}
		return strings.Contains(p.Stdout.String(), "browserop waits until you are signed in")
	})
	out := p.Stdout.String()
	require.Contains(t, out, "There is no display here")
	sock := filepath.Join(w.profile, browser.SocketFileName)
	require.Contains(t, out, "takes DevTools only on the socket "+sock)
	require.Contains(t, out, "ssh -N -L 9229:"+sock+" ")
	_, err := os.Stat(filepath.Join(w.profile, browser.ActivePortFileName))
	require.ErrorIs(t, err, fs.ErrNotExist, "no DevTools port")

	// The person forwards the socket as ssh -L does, and closes the
	// window from chrome://inspect: every page of that Chrome.
	host := browsertest.ForwardSocket(t, sock)
	var targets []struct {
		ID   string `json:"id"`
		Type string `json:"type"`
	}
	res, err := http.Get("http://" + host + "/json/list")
	require.NoError(t, err)
	require.NoError(t, json.NewDecoder(res.Body).Decode(&targets))
	res.Body.Close()
	closed := 0
	for _, tg := range targets {
		if tg.Type != "page" {
			continue
		}
		req, _ := http.NewRequest(http.MethodPut, "http://"+host+"/json/close/"+tg.ID, nil)
		if r, err := http.DefaultClient.Do(req); err == nil {
			r.Body.Close()
			closed++
		}
	}
	require.NotZero(t, closed)
	code := p.code(30 * time.Second)
	require.Equal(t, 2, code, "%s", p)
	require.Regexp(t, `(the sign-in window was closed|the browser was closed) before anyone signed in to demo`, p.Stderr.String())
}
