package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/browser"
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
	ws, err := browser.ReadActivePort(filepath.Join(w.profile, browser.ActivePortFileName))
	require.NoError(t, err)
	u, err := url.Parse(ws)
	require.NoError(t, err)
	require.Contains(t, out, "listens for DevTools on 127.0.0.1:"+u.Port())
	require.Regexp(t, regexp.MustCompile(`ssh -N -L 9229:127\.0\.0\.1:`+u.Port()+` `), out)

	// The person closes the window: every page of that Chrome.
	var targets []struct {
		ID   string `json:"id"`
		Type string `json:"type"`
	}
	res, err := http.Get("http://" + u.Host + "/json/list")
	require.NoError(t, err)
	require.NoError(t, json.NewDecoder(res.Body).Decode(&targets))
	res.Body.Close()
	closed := 0
	for _, tg := range targets {
		if tg.Type != "page" {
			continue
		}
		req, _ := http.NewRequest(http.MethodPut, "http://"+u.Host+"/json/close/"+tg.ID, nil)
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
