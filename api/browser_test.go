package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/browserop/browserop/browser/browsertest"
)

// A real cross-site attack: headless Chromium loads a page from another
// loopback origin (127.0.0.2) whose script knows the user token and tries
// to create a task with fetch (CORS, with the Authorization header), with a
// no-cors fetch, with a form post, and to read the task list. The API
// refuses every request that reaches it, the page reads nothing, and no
// task exists afterwards. Skips without Chromium unless CI is set.
func TestCrossSiteBrowserFetchRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	b := browsertest.Launch(t)
	e := newEnv(t)

	type seen struct {
		method, fetchSite, origin string
		status                    int
		code                      string
	}
	var mu sync.Mutex
	var log []seen
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cw := httptest.NewRecorder()
		e.s.ServeHTTP(cw, r)
		for k, v := range cw.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(cw.Code)
		_, _ = w.Write(cw.Body.Bytes())
		res := resp{status: cw.Code, body: cw.Body.Bytes()}
		mu.Lock()
		log = append(log, seen{r.Method, r.Header.Get("Sec-Fetch-Site"), r.Header.Get("Origin"), res.status, res.code()})
		mu.Unlock()
	}))
	t.Cleanup(e.srv.Close)

	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("no second loopback address for the attacker's origin: %v", err)
	}
	body, _ := json.Marshal(createBody("planted by evil"))
	page := fmt.Sprintf(attackPage, e.srv.URL, e.user, string(body))
	evil := &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	})}}
	evil.Start()
	t.Cleanup(evil.Close)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tab, err := b.NewTab(ctx, evil.URL+"/")
	if err != nil {
		t.Fatalf("open the attacker's page: %v", err)
	}
	if err := tab.WaitVisible(ctx, "#done", 30*time.Second); err != nil {
		t.Fatalf("the page did not finish: %v", err)
	}
	out, err := tab.Text(ctx, "#out")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("page:\n%s", out)
	for _, line := range []string{"cors-post: refused", "cors-get: refused"} {
		if !strings.Contains(out, line) {
			t.Errorf("page output lacks %q", line)
		}
	}
	if strings.Contains(out, "task_") {
		t.Errorf("the page read task data")
	}

	if n := e.taskCount(); n != 0 {
		t.Fatalf("the cross-site page created %d tasks", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(log) == 0 {
		t.Fatal("no request of the page reached the API; the test proves nothing")
	}
	for _, s := range log {
		t.Logf("API saw %s Sec-Fetch-Site=%q Origin=%q -> %d %s", s.method, s.fetchSite, s.origin, s.status, s.code)
		if s.status < 400 {
			t.Errorf("the API answered %s from the page with %d", s.method, s.status)
		}
		if s.code != "cross_site" {
			t.Errorf("the API refused %s with %q, want cross_site", s.method, s.code)
		}
	}
}

// attackPage: %[1]s the API's URL, %[2]s the stolen user token, %[3]s a
// create request.
const attackPage = `<!doctype html>
<html><head><title>evil</title></head><body>
<pre id="out"></pre>
<iframe name="sink" id="sink"></iframe>
<form id="f" method="POST" action="%[1]s/v1/tasks" enctype="text/plain" target="sink">
<input type="hidden" name='{"title":"form","x":"' value='"}'>
</form>
<script>
const api = %[1]q;
const token = %[2]q;
const body = JSON.stringify(%[3]s);
const out = document.getElementById('out');
function log(s) { out.textContent += s + "\n"; }
async function main() {
  try {
    const r = await fetch(api + '/v1/tasks', {method: 'POST', body: body, headers: {
      'Authorization': 'Bearer ' + token, 'Idempotency-Key': 'k', 'Content-Type': 'application/json'}});
    log('cors-post: status ' + r.status + ' ' + (await r.text()));
  } catch (e) { log('cors-post: refused ' + e.name); }
  try {
    await fetch(api + '/v1/tasks', {method: 'POST', mode: 'no-cors', body: body, headers: {
      'Authorization': 'Bearer ' + token, 'Idempotency-Key': 'k2', 'Content-Type': 'text/plain'}});
    log('no-cors-post: sent (opaque)');
  } catch (e) { log('no-cors-post: refused ' + e.name); }
  try {
    const r = await fetch(api + '/v1/tasks', {headers: {'Authorization': 'Bearer ' + token}});
    log('cors-get: status ' + r.status + ' ' + (await r.text()));
  } catch (e) { log('cors-get: refused ' + e.name); }
  await new Promise(resolve => {
    const sink = document.getElementById('sink');
    sink.addEventListener('load', resolve, {once: true});
    setTimeout(resolve, 5000);
    document.getElementById('f').submit();
  });
  log('form-post: submitted');
  const d = document.createElement('div');
  d.id = 'done'; d.textContent = 'done';
  document.body.appendChild(d);
}
main();
</script>
</body></html>`
