package mcptools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
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

// JSON-RPC's codes for a message that is not a valid request and for
// parameters a method cannot take.
const (
	jsonRPCInvalidRequest = -32600
	jsonRPCInvalidParams  = -32602
)

// boundBatches answers 406 to a POST that does not accept both JSON and
// an event stream, refuses a batch of more than MaxBatch requests with a
// JSON-RPC error before the SDK reads it, and bounds every answer to
// MaxAnswer bytes. The body is already bounded by the API layer.
func boundBatches(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && jsonBody(r) && !acceptsBoth(r.Header.Values("Accept")) {
			// The SDK answers 400; what the request does not accept is
			// 406 Not Acceptable, as docs/api.md says.
			http.Error(w, "Accept must contain both 'application/json' and 'text/event-stream'", http.StatusNotAcceptable)
			return
		}
		if r.Method == http.MethodPost && jsonBody(r) && r.Body != nil {
			// Only a JSON body is looked into: the SDK answers any other
			// with 415 first.
			body, err := io.ReadAll(r.Body)
			if err != nil {
				// The SDK words a body it cannot read (too large, cut
				// off); give it the same failure.
				r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{err}))
			} else {
				r.Body = io.NopCloser(bytes.NewReader(body))
				if code, msg := checkMessages(body); msg != "" {
					writeRPCError(w, http.StatusBadRequest, code, msg)
					return
				}
			}
		}
		next.ServeHTTP(&boundedWriter{ResponseWriter: w, left: MaxAnswer}, r)
	})
}

// jsonBody reports whether r says its body is JSON (else the SDK answers
// 415 first).
func jsonBody(r *http.Request) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mt == "application/json"
}

// acceptsBoth reports whether an Accept header takes both JSON and an
// event stream, as the SDK requires of a POST (wildcards included).
func acceptsBoth(values []string) bool {
	jsonOK, streamOK := false, false
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			base, _, _ := strings.Cut(part, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK && streamOK
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

// maxID is the largest integer id answered exactly: 2⁵³-1, the largest
// integer JSON numbers carry exactly everywhere.
const maxID = 1<<53 - 1

// checkMessages checks the size of a batch (MaxBatch) and the JSON-RPC
// envelope of every message of body
// before the SDK reads it, so that what is wrong is said in the request's
// terms (the SDK's own words name Go types), and an id is echoed exactly
// or refused: an integer id beyond 64 bits used to come back as another
// number. It returns the JSON-RPC code and message of the first problem,
// or "" for a body the SDK may read.
func checkMessages(body []byte) (int, string) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || len(bytes.TrimSpace(body[dec.InputOffset():])) > 0 {
		// Not JSON at all: a fault of the transport, which the SDK
		// answers (400, in the API's error shape under serve).
		return 0, ""
	}
	msgs, batch := v.([]any)
	switch {
	case !batch:
		msgs = []any{v}
	case len(msgs) == 0:
		return jsonRPCInvalidRequest, "the batch is empty"
	case len(msgs) > MaxBatch:
		return jsonRPCInvalidRequest, fmt.Sprintf("a batch holds at most %d requests; this one holds %d: send them in smaller batches", MaxBatch, len(msgs))
	}
	for i, m := range msgs {
		where := "the message"
		if batch {
			where = fmt.Sprintf("message %d of the batch", i+1)
		}
		if why := checkMessage(m); why != "" {
			code := jsonRPCInvalidRequest
			if strings.HasPrefix(why, "params") || strings.HasPrefix(why, "arguments") {
				code = jsonRPCInvalidParams
			}
			return code, where + ": " + why
		}
	}
	return 0, ""
}

// checkMessage says what is wrong with one message's envelope, "" when
// nothing is.
func checkMessage(m any) string {
	obj, ok := m.(map[string]any)
	if !ok {
		return "not a JSON object"
	}
	if obj["jsonrpc"] != "2.0" {
		return `"jsonrpc" must be "2.0"`
	}
	if id, ok := obj["id"]; ok && id != nil {
		switch id := id.(type) {
		case string:
		case json.Number:
			// The SDK reads a numeric id as a float64: beyond 2⁵³ it
			// would answer another number.
			if n, err := strconv.ParseInt(id.String(), 10, 64); err != nil || n > maxID || n < -maxID {
				return fmt.Sprintf("id %.40s is not an integer from %d to %d: use such an integer or a string", id, -maxID, maxID)
			}
		default:
			return "id must be a string or an integer"
		}
	}
	method, hasMethod := obj["method"]
	if hasMethod {
		name, ok := method.(string)
		if !ok {
			return `"method" must be a string`
		}
		params, has := obj["params"]
		if !has || params == nil {
			return ""
		}
		p, isObj := params.(map[string]any)
		if _, isArr := params.([]any); !isObj && !isArr {
			return "params must be an object"
		}
		if name == "tools/call" {
			if !isObj {
				return "params must be an object"
			}
			if _, ok := p["name"].(string); !ok {
				return `params: "name" must be the tool's name, a string`
			}
			if args, has := p["arguments"]; has && args != nil {
				if _, ok := args.(map[string]any); !ok {
					return "arguments must be an object, as the tool's input schema describes"
				}
			}
		}
		return ""
	}
	if _, ok := obj["result"]; ok {
		return ""
	}
	if _, ok := obj["error"]; ok {
		return ""
	}
	return `neither a request (no "method") nor a response`
}
