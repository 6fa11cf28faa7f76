package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/browserop/browserop/internal/child"
	"github.com/browserop/browserop/ledger"
	"github.com/stretchr/testify/require"
)

// GET /v1/status shows the agent no ledger path and no lease holder
// (host:pid); the person sees both.
func TestServeStatusForAgent(t *testing.T) {
	c := newCLI(t)
	c.env = append(c.env, "BROWSEROP_API_ADDR=127.0.0.1:0", "BROWSEROP_SCHEDULE=@every 1h", "BROWSEROP_BROWSER_NO_SANDBOX=true")
	ctx := context.Background()
	db, err := ledger.Open(ctx, c.ledgerPath(), ledger.Options{})
	require.NoError(t, err)
	l, err := db.AcquireLease(ctx, "browser-operator", "somehost:4242:77", time.Minute)
	require.NoError(t, err)
	require.NoError(t, db.ReleaseLease(ctx, l))
	require.NoError(t, db.Close())

	sctx, cancel := context.WithCancel(ctx)
	out, errOut := &child.Buffer{}, &child.Buffer{}
	done := make(chan int, 1)
	go func() { done <- RunEnv(sctx, []string{"serve"}, out, errOut, c.env) }()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("serve did not stop")
		}
	}()
	var base string
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("serve's stdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
		}
	})
	eventually(t, 20*time.Second, "serve prints its API address", func() bool {
		m := regexp.MustCompile(`api (http://127\.0\.0\.1:\d+) `).FindStringSubmatch(out.String())
		if m != nil {
			base = m[1]
		}
		return m != nil
	})
	token := func(args ...string) string {
		code, raw, errs := c.run(append([]string{"token", "--json"}, args...)...)
		require.Equal(t, 0, code, errs)
		var tok struct{ Token string }
		require.NoError(t, json.Unmarshal([]byte(raw), &tok), raw)
		return tok.Token
	}
	toks := struct{ User, Agent string }{token(), token("--agent")}
	get := func(tok string) string {
		req, _ := http.NewRequest("GET", base+"/v1/status", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
		return string(body)
	}
	agent := get(toks.Agent)
	for _, secret := range []string{c.ledgerPath(), "somehost", "4242", `"ledger"`, `"holder"`} {
		require.NotContains(t, agent, secret, "the agent's status")
	}
	require.True(t, strings.Contains(agent, `"counts"`), agent)
	user := get(toks.User)
	require.Contains(t, user, c.ledgerPath())
	require.Contains(t, user, "somehost:4242:77")
}
