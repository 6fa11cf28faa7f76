package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/browserop/browserop/operator"
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
// anything else through operator.KindOf. Internal errors are logged, not
// shown.
func (s *server) writeServiceError(w http.ResponseWriter, r *http.Request, err error) {
	var ae *apiError
	if errors.As(err, &ae) {
		writeError(w, ae)
		return
	}
	k := operator.KindOf(err)
	if k.Code == operator.Internal.Code || k.HTTP >= 500 {
		s.log.Error("api: internal error", "method", r.Method, "route", r.Pattern, "code", k.Code, "err", err.Error())
		writeError(w, &apiError{status: http.StatusInternalServerError, code: k.Code, msg: "internal error; the daemon's log has details"})
		return
	}
	writeError(w, &apiError{status: k.HTTP, code: k.Code, msg: err.Error()})
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
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return apiErrorf(http.StatusBadRequest, "bad_json", "unexpected data after the JSON object")
	}
	return nil
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
