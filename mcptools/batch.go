package mcptools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// MaxBatch bounds the requests of one JSON-RPC batch (protocol versions
// before 2025-06-18 allow batches). One batch of 10,000 tools/list calls,
// 559 KB, used to cost 111 s of work and 301 MB of answers; an agent that
// needs more sends more requests, each of which passes the API's checks.
const MaxBatch = 16

// MaxAnswer bounds what one /mcp request answers, whatever its batch
// holds: past it the answer is cut off and the connection closed (the
// client sees a broken answer, never an unbounded one).
const MaxAnswer = 16 << 20

// jsonRPCInvalidRequest is JSON-RPC's code for a request that is not
// valid.
const jsonRPCInvalidRequest = -32600

// boundBatches refuses a batch of more than MaxBatch requests with a
// JSON-RPC error before the SDK reads it, and bounds every answer to
// MaxAnswer bytes. The body is already bounded by the API layer.
func boundBatches(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Body != nil {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				// The SDK words a body it cannot read (too large, cut
				// off); give it the same failure.
				r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{err}))
			} else {
				r.Body = io.NopCloser(bytes.NewReader(body))
				if n, ok := batchLen(body); ok && n > MaxBatch {
					writeRPCError(w, http.StatusBadRequest, jsonRPCInvalidRequest,
						fmt.Sprintf("a batch holds at most %d requests; this one holds %d: send them in smaller batches", MaxBatch, n))
					return
				}
			}
		}
		next.ServeHTTP(&boundedWriter{ResponseWriter: w, left: MaxAnswer}, r)
	})
}

// batchLen is the number of elements of body when it is a JSON array.
func batchLen(body []byte) (int, bool) {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '[' {
		return 0, false
	}
	var msgs []json.RawMessage
	if err := json.Unmarshal(trimmed, &msgs); err != nil {
		return 0, false // malformed: the SDK answers it
	}
	return len(msgs), true
}

// writeRPCError answers a JSON-RPC error with no id (the batch as a whole
// is refused).
func writeRPCError(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"jsonrpc": "2.0", "id": nil,
		"error": map[string]any{"code": code, "message": msg},
	})
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// boundedWriter passes at most left bytes to its ResponseWriter, then
// aborts the request (http.ErrAbortHandler closes the connection).
type boundedWriter struct {
	http.ResponseWriter
	left int
}

func (b *boundedWriter) Write(p []byte) (int, error) {
	if len(p) > b.left {
		panic(http.ErrAbortHandler)
	}
	b.left -= len(p)
	return b.ResponseWriter.Write(p)
}

// Flush lets the SDK stream its events.
func (b *boundedWriter) Flush() {
	if f, ok := b.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the writer underneath.
func (b *boundedWriter) Unwrap() http.ResponseWriter { return b.ResponseWriter }
