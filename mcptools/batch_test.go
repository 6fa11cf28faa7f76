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

// postOldProtocol posts body to hs's /mcp as a client of protocol
// 2025-03-26, which may batch; the answer's body is closed with the test.
func postOldProtocol(t *testing.T, hs *httptest.Server, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, hs.URL+"/mcp", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-03-26")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

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
		return postOldProtocol(t, hs, "["+strings.Join(calls, ",")+"]")
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

// A message's envelope is checked before the SDK reads it: an id is
// echoed exactly or refused (2⁶⁴+1 used to come back as -2⁶³), and what
// is wrong is said in the request's terms, never in Go's
// ("jsonrpc2.wireDecode", "mcp.CallToolParamsRaw").
func TestMCPEnvelopeInRequestTerms(t *testing.T) {
	f := newFixture(t)
	hs := httptest.NewServer(mcptools.HTTPHandler(f.server))
	t.Cleanup(hs.Close)
	send := func(body string) (int, string) {
		resp := postOldProtocol(t, hs, body)
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}
	for body, want := range map[string]string{
		`{"jsonrpc":"2.0","id":18446744073709551617,"method":"tools/list"}`:                              `"code":-32600,"message":"the message: id 18446744073709551617 is not an integer from -9007199254740991 to 9007199254740991: use such an integer or a string"`,
		`{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}`:                                               "id 1.5 is not an integer",
		`{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}`:                                           "id must be a string or an integer",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"x"}`:                                    `"code":-32602,"message":"the message: params must be an object"`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"task_create","arguments":"x"}}`: "arguments must be an object",
		`{"jsonrpc":"2.0","id":1,"method":5}`:                                                            `\"method\" must be a string`,
		`{"jsonrpc":"1.0","id":1,"method":"tools/list"}`:                                                 `\"jsonrpc\" must be \"2.0\"`,
		`[1,2]`:     "message 1 of the batch: not a JSON object",
		`{"x":1} ]`: "malformed payload",
	} {
		status, answer := send(body)
		require.Equal(t, http.StatusBadRequest, status, body)
		require.Contains(t, answer, want, body)
		for _, internal := range []string{"Go value", "jsonrpc2", "mcptools.", "mcp.", "map[string]"} {
			require.NotContains(t, answer, internal, body)
		}
	}
	for _, id := range []string{"9007199254740991", "-9007199254740991", "0", `"18446744073709551617"`} {
		status, answer := send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list"}`)
		require.Equal(t, http.StatusOK, status)
		require.True(t, strings.Contains(answer, `"id":`+id+`,"result"`), "the id %s echoed exactly", id)
	}
}
