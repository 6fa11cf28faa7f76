package mcptools_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/mcptools"
)

// A JSON-RPC batch (allowed before protocol 2025-06-18) of more than
// MaxBatch requests is refused with a JSON-RPC error before any of it is
// worked on: one batch of 10,000 tools/list calls used to be answered
// whole (301 MB, 111 s). A batch within the bound is answered.
func TestMCPBatchBounded(t *testing.T) {
	f := newFixture(t)
	hs := httptest.NewServer(mcptools.HTTPHandler(f.server))
	t.Cleanup(hs.Close)
	batch := func(n int) *http.Response {
		calls := make([]string, n)
		for i := range calls {
			calls[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, i+1)
		}
		req, err := http.NewRequest(http.MethodPost, hs.URL+"/mcp", strings.NewReader("["+strings.Join(calls, ",")+"]"))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-03-26")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}

	resp := batch(10000)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	var answer struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&answer))
	require.Equal(t, "2.0", answer.JSONRPC)
	require.Equal(t, "null", string(answer.ID))
	require.Equal(t, -32600, answer.Error.Code)
	require.Equal(t, fmt.Sprintf("a batch holds at most %d requests; this one holds 10000: send them in smaller batches", mcptools.MaxBatch), answer.Error.Message)

	resp = batch(mcptools.MaxBatch + 1)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)

	resp = batch(2)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	for _, id := range []string{`"id":1,"result"`, `"id":2,"result"`} {
		require.Contains(t, string(body), id, "both calls answered")
	}
}
