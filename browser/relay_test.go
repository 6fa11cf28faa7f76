package browser_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/browser/browsertest"
)

// targetOf finds id in b's inventory.
func targetOf(t *testing.T, b *browser.Browser, id browser.TargetID) (browser.Target, bool) {
	t.Helper()
	inv, err := b.Targets(ctxT(t))
	require.NoError(t, err)
	require.True(t, inv.Complete)
	for _, tg := range inv.Targets {
		if tg.ID == id {
			return tg, true
		}
	}
	return browser.Target{}, false
}

// TestRelayClientsShareOneChrome: two clients on one relay (browserop and
// the person) each drive their own tabs; when one leaves, the relay
// detaches its sessions and closes none of its tabs, and the other goes
// on.
func TestRelayClientsShareOneChrome(t *testing.T) {
	ctx := ctxT(t)
	s := newSite(t)
	dir := persistentProfile(t)
	b := launchPersistent(t, dir)
	p := attachPerson(t, dir)

	mine, err := p.NewTab(ctx, s.URL+"/page")
	require.NoError(t, err)
	ours, err := b.NewTab(ctx, s.URL+"/page")
	require.NoError(t, err)
	tg, ok := targetOf(t, b, mine.ID())
	require.True(t, ok, "browserop sees the person's tab")
	require.True(t, tg.Attached, "the person's client is attached to its tab")

	require.NoError(t, p.Close()) // only disconnects: it detaches itself
	// A client that vanishes while attached (a crash): the relay
	// detaches for it.
	raw, err := net.Dial("unix", filepath.Join(dir, browser.SocketFileName))
	require.NoError(t, err)
	_, err = raw.Write([]byte(`{"id":1,"method":"Target.attachToTarget","params":{"targetId":"` + string(mine.ID()) + `","flatten":true}}` + "\x00"))
	require.NoError(t, err)
	br := bufio.NewReader(raw)
	for {
		line, err := br.ReadString(0)
		require.NoError(t, err)
		if strings.HasPrefix(line, `{"id":1,`) {
			require.Contains(t, line, `"sessionId"`)
			break
		}
	}
	tg, _ = targetOf(t, b, mine.ID())
	require.True(t, tg.Attached)
	require.NoError(t, raw.Close())
	deadline := time.Now().Add(10 * time.Second)
	for {
		tg, ok = targetOf(t, b, mine.ID())
		require.True(t, ok, "the tab of a client that left stays open")
		if !tg.Attached || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	require.False(t, tg.Attached, "the relay detached the sessions of the client that left")

	u, err := ours.URL(ctx)
	require.NoError(t, err, "browserop's tab still works")
	require.Equal(t, s.URL+"/page", u)
	_, err = b.CloseTab(ctx, ours)
	require.NoError(t, err)

	// A new client attaches to the tab the first one left.
	p2 := attachPerson(t, dir)
	require.NoError(t, p2.Adopt(ctx, mine.ID()))
	re, err := p2.AttachOwned(ctx, mine.ID())
	require.NoError(t, err)
	u, err = re.URL(ctx)
	require.NoError(t, err)
	require.Equal(t, s.URL+"/page", u)
}

// TestRelayWeb: the relay socket answers as Chrome's DevTools port does,
// for a person who forwards it over SSH: /json/version and /json/list,
// the browser's WebSocket (chromedp drives it), a page's WebSocket in the
// page's own terms; and, as Chrome does, it refuses a Host that is not an
// IP address or localhost and a WebSocket from a web page's origin.
func TestRelayWeb(t *testing.T) {
	ctx := ctxT(t)
	s := newSite(t)
	dir := persistentProfile(t)
	b := launchPersistent(t, dir)
	tab, err := b.NewTab(ctx, s.URL+"/page")
	require.NoError(t, err)
	host := browsertest.ForwardSocket(t, filepath.Join(dir, browser.SocketFileName))

	res, err := http.Get("http://" + host + "/json/version")
	require.NoError(t, err)
	var v map[string]string
	require.NoError(t, json.NewDecoder(res.Body).Decode(&v))
	res.Body.Close()
	require.True(t, strings.HasPrefix(v["webSocketDebuggerUrl"], "ws://"+host+"/devtools/browser/"), "%v", v)
	require.Contains(t, v["Browser"], "Chrome")

	res, err = http.Get("http://" + host + "/json/list")
	require.NoError(t, err)
	var list []map[string]string
	require.NoError(t, json.NewDecoder(res.Body).Decode(&list))
	res.Body.Close()
	var pageWS string
	for _, e := range list {
		if e["id"] == string(tab.ID()) {
			pageWS = e["webSocketDebuggerUrl"]
		}
	}
	require.Equal(t, "ws://"+host+"/devtools/page/"+string(tab.ID()), pageWS)

	// chromedp through the forwarded browser endpoint.
	actx, acancel := remote.NewAllocator(context.Background(), "http://"+host)
	defer acancel()
	cctx, ccancel := chromedp.NewContext(actx)
	defer ccancel()
	require.NoError(t, chromedp.ListenBrowser(cctx, func(any) {}))
	got, err := chromedp.CallBrowser(cctx, target.GetTargets, target.GetTargetsParams{})
	require.NoError(t, err)
	require.NotEmpty(t, got.TargetInfos)

	// A page's WebSocket: no session id either way.
	ws, _, err := websocket.Dial(ctx, pageWS, nil)
	require.NoError(t, err)
	defer ws.CloseNow()
	require.NoError(t, ws.Write(ctx, websocket.MessageText, []byte(`{"id":7,"method":"Runtime.evaluate","params":{"expression":"6*7","returnByValue":true}}`)))
	for {
		_, raw, err := ws.Read(ctx)
		require.NoError(t, err)
		var m map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(raw, &m))
		require.NotContains(t, m, "sessionId", "%s", raw)
		if string(m["id"]) == "7" {
			require.JSONEq(t, `{"result":{"type":"number","value":42,"description":"42"}}`, string(m["result"]))
			break
		}
	}

	req, _ := http.NewRequest(http.MethodGet, "http://"+host+"/json/list", nil)
	req.Host = "attacker.example"
	res, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusForbidden, res.StatusCode, "a renamed site cannot read it")

	_, res, err = websocket.Dial(ctx, pageWS, &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"http://attacker.example"}}})
	require.Error(t, err, "a web page cannot open a WebSocket")
	require.Equal(t, http.StatusForbidden, res.StatusCode)

	_, ok := targetOf(t, b, tab.ID())
	require.True(t, ok, "the page survived its WebSocket")
}
