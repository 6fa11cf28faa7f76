package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/browserop/browserop/errcode"
)

// ErrorBody is the JSON of every error answer.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is an error's stable code and a message for people.
type ErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// apiError is an error the API answers as is.
type apiError struct {
	status int
	code   string
	msg    string
	allow  string // the Allow header of a 405
}

func (e *apiError) Error() string { return e.code + ": " + e.msg }

func apiErrorf(status int, code, format string, args ...any) *apiError {
	return &apiError{status: status, code: code, msg: fmt.Sprintf(format, args...)}
}

var (
	errInternal      = apiErrorf(http.StatusInternalServerError, "internal", "internal error; the daemon's log has details")
	errCrossSite     = apiErrorf(http.StatusForbidden, "cross_site", "cross-site browser requests are refused")
	errForbiddenRole = apiErrorf(http.StatusForbidden, "forbidden",
		"this endpoint needs the user's token; the agent token may create, read, submit intents to and cancel tasks")
)

func errTooLarge(limit int64) *apiError {
	return apiErrorf(http.StatusRequestEntityTooLarge, "too_large", "the request body is larger than %d bytes (api.max_body)", limit)
}

// writeError answers an error as JSON.
func writeError(w http.ResponseWriter, e *apiError) {
	if rec, ok := w.(*recorder); ok {
		rec.code = e.code
	}
	if e.allow != "" {
		w.Header().Set("Allow", e.allow)
	}
	writeJSON(w, e.status, ErrorBody{Error: ErrorDetail{Code: e.code, Message: e.msg}})
}

// writeServiceError answers an error of a handler: an *apiError as is,
// anything else through errcode.Of. Internal errors are logged, not
// shown.
func (s *server) writeServiceError(w http.ResponseWriter, r *http.Request, err error) {
	var ae *apiError
	if errors.As(err, &ae) {
		writeError(w, ae)
		return
	}
	k := errcode.Of(err)
	if k.Code == errcode.Internal.Code || k.HTTP >= 500 {
		s.log.Error("api: internal error", "method", r.Method, "route", r.Pattern, "code", k.Code, "err", err.Error())
		writeError(w, &apiError{status: http.StatusInternalServerError, code: k.Code, msg: "internal error; the daemon's log has details"})
		return
	}
	writeError(w, &apiError{status: k.HTTP, code: k.Code, msg: errcode.Reason(err)})
}

// writeJSON answers v as JSON with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(v); err != nil {
		status = http.StatusInternalServerError
		buf.Reset()
		_ = json.NewEncoder(&buf).Encode(ErrorBody{Error: ErrorDetail{Code: "internal", Message: "could not encode the answer"}})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// decode reads the body as exactly one JSON object into v: the
// Content-Type must be application/json, unknown fields and trailing data
// are refused. With optional, an empty body leaves v alone.
func (s *server) decode(r *http.Request, v any, optional bool) error {
	raw, err := io.ReadAll(r.Body)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return errTooLarge(mbe.Limit)
	}
	if err != nil {
		return apiErrorf(http.StatusBadRequest, "bad_json", "could not read the request body")
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		if optional {
			return nil
		}
		return apiErrorf(http.StatusBadRequest, "bad_json", "the request needs a JSON object body")
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return apiErrorf(http.StatusUnsupportedMediaType, "unsupported_media_type", "the body must be sent as Content-Type: application/json")
	}
	if raw[0] != '{' {
		return apiErrorf(http.StatusBadRequest, "bad_json", "the body must be a JSON object")
	}
	// encoding/json first, into a scratch value, for its messages about
	// syntax, types, unknown fields and trailing data.
	scratch := reflect.New(reflect.TypeOf(v).Elem()).Interface()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(scratch); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return apiErrorf(http.StatusBadRequest, "bad_json", "unexpected data after the JSON object")
	}
	// Then strictly: field names match exactly (encoding/json folds case)
	// and no name appears twice in an object (encoding/json keeps the last).
	return strictDecode(raw, v)
}

// strictDecode decodes raw into v with case-sensitive field names,
// duplicate names refused and unknown names refused. Its errors name the
// field, never a value.
func strictDecode(raw []byte, v any) error {
	err := jsonv2.Unmarshal(raw, v, jsonv2.RejectUnknownMembers(true))
	if err == nil {
		return nil
	}
	var syn *jsontext.SyntacticError
	var sem *jsonv2.SemanticError
	switch {
	case errors.As(err, &syn) && errors.Is(syn.Err, jsontext.ErrDuplicateName):
		return apiErrorf(http.StatusBadRequest, "bad_json", "duplicate field %q: each field may appear once", fieldPath(syn.JSONPointer))
	case errors.As(err, &sem) && errors.Is(sem.Err, jsonv2.ErrUnknownName):
		return apiErrorf(http.StatusBadRequest, "bad_json", "unknown field %q (field names are case-sensitive)", fieldPath(sem.JSONPointer))
	case errors.As(err, &sem):
		return apiErrorf(http.StatusBadRequest, "bad_json", "field %q: invalid value", fieldPath(sem.JSONPointer))
	case errors.As(err, &syn):
		// What encoding/json lets through, such as invalid UTF-8 in a
		// string: the reason names the fault, not the value.
		return apiErrorf(http.StatusBadRequest, "bad_json", "field %q: %v", fieldPath(syn.JSONPointer), syn.Err)
	}
	return apiErrorf(http.StatusBadRequest, "bad_json", "invalid JSON body")
}

// fieldPath writes a JSON pointer as the dotted path the other messages use.
func fieldPath(p jsontext.Pointer) string {
	var parts []string
	for tok := range p.Tokens() {
		parts = append(parts, tok)
	}
	if len(parts) == 0 {
		return "(body)"
	}
	return strings.Join(parts, ".")
}

// jsonError describes a decoding error without echoing values.
func jsonError(err error) *apiError {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return apiErrorf(http.StatusBadRequest, "bad_json", "invalid JSON at byte %d", se.Offset)
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			field = "(body)"
		}
		return apiErrorf(http.StatusBadRequest, "bad_json", "field %q: want %s, got JSON %s", field, te.Type, te.Value)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return apiErrorf(http.StatusBadRequest, "bad_json", "the JSON body ends too early")
	}
	// DisallowUnknownFields: `json: unknown field "name"`.
	if msg, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return apiErrorf(http.StatusBadRequest, "bad_json", "unknown field %s", msg)
	}
	return apiErrorf(http.StatusBadRequest, "bad_json", "invalid JSON body")
}

// jsonErrors rewrites an error answer of a mounted handler (the MCP
// endpoint) that is not JSON into the API's JSON error shape; any other
// answer passes through untouched, streaming included.
type jsonErrors struct {
	http.ResponseWriter
	status int // the error status being held back; 0 when passing through
	wrote  bool
	body   bytes.Buffer
}

func (w *jsonErrors) WriteHeader(code int) {
	if w.wrote {
		return
	}
	w.wrote = true
	ct := w.Header().Get("Content-Type")
	if code >= 400 && !strings.HasPrefix(ct, "application/json") {
		w.status = code
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *jsonErrors) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	if w.status != 0 {
		return w.body.Write(b)
	}
	return w.ResponseWriter.Write(b)
}

// Flush lets streaming answers through.
func (w *jsonErrors) Flush() {
	if w.status == 0 {
		_ = http.NewResponseController(w.ResponseWriter).Flush()
	}
}

// Unwrap serves http.ResponseController.
func (w *jsonErrors) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish writes a held-back error as JSON.
func (w *jsonErrors) finish() {
	if w.status == 0 {
		return
	}
	msg := strings.TrimSpace(w.body.String())
	if msg == "" || len(msg) > 500 {
		msg = http.StatusText(w.status)
	}
	w.Header().Del("Content-Length")
	writeError(w.ResponseWriter, &apiError{status: w.status, code: codeOf(w.status), msg: "mcp: " + msg,
		allow: w.Header().Get("Allow")})
}

// codeOf is the API's error code for a bare HTTP error status.
func codeOf(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "bad_request"
	case http.StatusUnauthorized:
		return "unauthorized"
	case http.StatusForbidden:
		return "forbidden"
	case http.StatusNotFound:
		return "not_found"
	case http.StatusMethodNotAllowed:
		return "method_not_allowed"
	case http.StatusNotAcceptable:
		return "not_acceptable"
	case http.StatusUnsupportedMediaType:
		return "unsupported_media_type"
	case http.StatusRequestEntityTooLarge:
		return "too_large"
	}
	if status >= 500 {
		return "internal"
	}
	return "bad_request"
}
