// Package api is browserop's loopback REST server. External agents create
// durable tasks under an immutable contract, submit intents, read task state
// and cancel; the person (with the user token) also grants domains,
// confirms or declines prepared actions and resolves ambiguous ones.
//
// Every request passes the same checks before any handler runs, in order:
// the Host header must name a loopback host (DNS-rebinding defence, 421),
// the request must not come from another browser origin (403), no token may
// travel in the query string (400), a bearer token is required (401), and
// the body is bounded (413). Errors are JSON with a stable code:
//
//	{"error": {"code": "forbidden", "message": "..."}}
//
// No response or log line carries a raw tab id, a cookie, a token or a
// form value, and no CORS header is ever sent.
package api

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/browserop/browserop/intent"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/tasks"
)

// DefaultMaxBody bounds request bodies when Options.MaxBody is 0.
const DefaultMaxBody = 1 << 20

// Role is what a token may do.
type Role string

// The two roles. The user may do everything; the agent may create, read,
// submit intents to and cancel tasks, read status and use MCP.
const (
	RoleUser  Role = "user"
	RoleAgent Role = "agent"
)

type roleKey struct{}

// RoleFromContext returns the role of the token that authenticated the
// request whose context ctx is (for handlers mounted under the API, such
// as the MCP endpoint).
func RoleFromContext(ctx context.Context) (Role, bool) {
	r, ok := ctx.Value(roleKey{}).(Role)
	return r, ok
}

// Options configure New.
type Options struct {
	// Tasks is the task service every endpoint works through. Required.
	Tasks *tasks.Service
	// UserToken is the person's token (required); AgentToken the agents'
	// (empty: no agent access). They must differ.
	UserToken, AgentToken string
	// MaxBody bounds request bodies in bytes; 0 means DefaultMaxBody.
	MaxBody int64
	// Status answers GET /v1/status; nil answers {"ok":true}.
	Status func(ctx context.Context) (any, error)
	// MCP, when set, is mounted at /mcp (POST, GET, DELETE) behind the same
	// checks; either token may use it (RoleFromContext tells which).
	MCP http.Handler
	// Log receives one line per request: method, route pattern, status,
	// duration, role and error code. Never bodies, URLs or headers. nil
	// discards.
	Log *slog.Logger
	// Cleanup, when set, keeps the person's cleanup preference of the
	// browser profile CleanupProfile (the key a pass reads it by): GET and
	// PUT /v1/config/cleanup, the user token only. nil: those answer
	// not_configured.
	Cleanup        CleanupStore
	CleanupProfile string
}

// CleanupStore reads and sets a profile's cleanup preference
// (*ledger.DB).
type CleanupStore interface {
	CleanupSettingOf(ctx context.Context, profile string) (ledger.CleanupSetting, error)
	SetCleanupPreference(ctx context.Context, profile string, p ledger.CleanupPreference, by string) (ledger.CleanupSetting, error)
}

// Who the API records as the person acting through it.
const personByAPI = "person (api)"

//go:embed openapi.json
var openAPIDoc []byte

// OpenAPI returns the OpenAPI 3.1 document of the API (a copy).
func OpenAPI() []byte { return append([]byte(nil), openAPIDoc...) }

type server struct {
	tasks     *tasks.Service
	cleanup   CleanupStore
	profile   string
	status    func(ctx context.Context) (any, error)
	log       *slog.Logger
	maxBody   int64
	tokens    tokenSet
	cop       *http.CrossOriginProtection
	mux       *http.ServeMux
	mu        sync.Mutex
	inflight  map[string]struct{}
	afterHold func() // tests: called once a create request holds its key
}

// New returns the API handler. It panics when Tasks or UserToken is
// missing or when the two tokens are equal: those are wiring mistakes.
func New(o Options) http.Handler {
	return newServer(o)
}

func newServer(o Options) *server {
	if o.Tasks == nil {
		panic("api.New: Options.Tasks is nil")
	}
	if o.UserToken == "" {
		panic("api.New: Options.UserToken is empty")
	}
	if o.UserToken == o.AgentToken {
		panic("api.New: the user and agent tokens are equal")
	}
	s := &server{
		tasks:    o.Tasks,
		cleanup:  o.Cleanup,
		profile:  o.CleanupProfile,
		status:   o.Status,
		log:      o.Log,
		maxBody:  o.MaxBody,
		tokens:   newTokenSet(o.UserToken, o.AgentToken),
		cop:      http.NewCrossOriginProtection(),
		mux:      http.NewServeMux(),
		inflight: map[string]struct{}{},
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBody
	}
	for _, rt := range routeTable(o.MCP != nil) {
		s.mux.Handle(rt.method+" "+rt.path, s.wrap(rt, o.MCP))
	}
	return s
}

// route is one endpoint. Patterns are Go 1.22 ServeMux patterns.
type route struct {
	method, path string
	// role is the least role allowed: RoleAgent admits both tokens,
	// RoleUser only the person's.
	role Role
	// query lists the query parameters the route accepts.
	query []string
	// handle serves the route; nil for the mounted MCP handler.
	handle func(s *server, w http.ResponseWriter, r *http.Request) error
}

// routeTable is every endpoint the API serves; the OpenAPI document lists
// exactly these (a test holds them together).
func routeTable(mcp bool) []route {
	rs := []route{
		{"POST", "/v1/tasks", RoleAgent, nil, (*server).createTask},
		{"GET", "/v1/tasks", RoleAgent, []string{"limit"}, (*server).listTasks},
		{"GET", "/v1/tasks/{id}", RoleAgent, nil, (*server).getTask},
		{"POST", "/v1/tasks/{id}/actions", RoleAgent, nil, (*server).submit},
		{"POST", "/v1/tasks/{id}/cancel", RoleAgent, nil, (*server).cancel},
		{"POST", "/v1/tasks/{id}/finish", RoleAgent, nil, (*server).finish},
		{"PUT", "/v1/tasks/{id}/continuity", RoleAgent, nil, (*server).continuity},
		{"POST", "/v1/tasks/{id}/grants", RoleUser, nil, (*server).grant},
		{"POST", "/v1/actions/{id}/confirm", RoleUser, nil, (*server).confirm},
		{"POST", "/v1/actions/{id}/resolve", RoleUser, nil, (*server).resolve},
		{"GET", "/v1/runs", RoleAgent, []string{"limit"}, (*server).listRuns},
		{"GET", "/v1/runs/{id}", RoleAgent, nil, (*server).getRun},
		{"GET", "/v1/status", RoleAgent, nil, (*server).getStatus},
		{"GET", "/v1/config/cleanup", RoleUser, nil, (*server).getCleanup},
		{"PUT", "/v1/config/cleanup", RoleUser, nil, (*server).putCleanup},
		{"GET", "/v1/openapi.json", RoleAgent, nil, (*server).openAPI},
	}
	if mcp {
		// Stateless MCP has no server-to-client stream (GET) and no session
		// to end (DELETE): those answer the API's own 405.
		rs = append(rs, route{method: "POST", path: "/mcp", role: RoleAgent})
	}
	return rs
}

// wrap applies a route's role and query checks, then serves it.
func (s *server) wrap(rt route, mcp http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		role, _ := RoleFromContext(r.Context())
		if rt.role == RoleUser && role != RoleUser {
			writeError(w, errForbiddenRole)
			return
		}
		if rt.handle == nil {
			jw := &jsonErrors{ResponseWriter: w}
			mcp.ServeHTTP(jw, r)
			jw.finish()
			return
		}
		query, err := url.ParseQuery(r.URL.RawQuery)
		if err != nil {
			writeError(w, apiErrorf(http.StatusBadRequest, "bad_query", "the query string is malformed"))
			return
		}
		for name := range query {
			if !contains(rt.query, name) {
				writeError(w, apiErrorf(http.StatusBadRequest, "bad_query", "unknown query parameter %q", name))
				return
			}
		}
		if err := rt.handle(s, w, r); err != nil {
			s.writeServiceError(w, r, err)
		}
	})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// ServeHTTP runs the checks every request passes, then the route.
func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &recorder{ResponseWriter: w}
	var role Role
	pattern := ""
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			s.log.Error("api panic", "method", r.Method, "route", pattern, "panic", fmt.Sprint(p))
			if !rec.wrote {
				writeError(rec, errInternal)
			}
		}
		route := pattern
		if route == "" {
			route = "unmatched"
		}
		level := slog.LevelInfo
		if rec.status >= 500 {
			level = slog.LevelError
		}
		attrs := []slog.Attr{
			slog.String("method", r.Method), slog.String("route", route), slog.Int("status", rec.statusCode()),
			slog.Duration("duration", time.Since(start)),
		}
		if role != "" {
			attrs = append(attrs, slog.String("role", string(role)))
		}
		if rec.code != "" {
			attrs = append(attrs, slog.String("code", rec.code))
		}
		s.log.LogAttrs(r.Context(), level, "api request", attrs...)
	}()
	h := rec.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")

	var err *apiError
	role, err = s.admit(r)
	if err != nil {
		if err.code == "token_in_query" {
			s.warnTokenInQuery(r)
		}
		if err.status == http.StatusUnauthorized {
			h.Set("WWW-Authenticate", `Bearer realm="browserop"`)
		}
		writeError(rec, err)
		return
	}
	if r.ContentLength > s.maxBody {
		writeError(rec, errTooLarge(s.maxBody))
		return
	}
	r.Body = http.MaxBytesReader(rec, r.Body, s.maxBody)

	handler, pat := s.mux.Handler(r)
	if !strings.Contains(pat, " ") {
		// No route ("" for 404 and 405, a bare path for the mux's
		// path-cleaning redirects, which the API does not make).
		writeError(rec, s.unmatched(handler, r))
		return
	}
	pattern = pat
	r = r.WithContext(context.WithValue(r.Context(), roleKey{}, role))
	s.mux.ServeHTTP(rec, r)
}

// admit runs the transport checks and returns the caller's role.
func (s *server) admit(r *http.Request) (Role, *apiError) {
	if !loopbackHostHeader(r.Host) {
		return "", apiErrorf(http.StatusMisdirectedRequest, "bad_host",
			"the Host header must name a loopback host (127.0.0.1, [::1] or localhost)")
	}
	if err := s.checkCrossSite(r); err != nil {
		return "", err
	}
	if s.tokenInQuery(r) {
		return "", apiErrorf(http.StatusBadRequest, "token_in_query",
			"tokens are accepted only in the Authorization header, never in the URL; treat this token as exposed")
	}
	return s.authenticate(r)
}

// checkCrossSite refuses requests a browser makes on behalf of another
// origin: any Origin that is not loopback, any Sec-Fetch-Site other than
// same-origin or none (for every method, reads included), and whatever
// http.CrossOriginProtection refuses (a non-safe request whose Origin is not
// this host).
func (s *server) checkCrossSite(r *http.Request) *apiError {
	if len(r.Header.Values("Origin")) > 1 {
		return errCrossSite
	}
	if o := r.Header.Get("Origin"); o != "" && !loopbackOrigin(o) {
		return errCrossSite
	}
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
	default:
		return errCrossSite
	}
	if err := s.cop.Check(r); err != nil {
		return errCrossSite
	}
	return nil
}

// unmatched turns the mux's 404 or 405 into a JSON error.
func (s *server) unmatched(h http.Handler, r *http.Request) *apiError {
	probe := &probeWriter{header: http.Header{}}
	h.ServeHTTP(probe, r)
	if probe.status == http.StatusMethodNotAllowed {
		e := apiErrorf(http.StatusMethodNotAllowed, "method_not_allowed", "%s is not allowed here", r.Method)
		e.allow = probe.header.Get("Allow")
		return e
	}
	return apiErrorf(http.StatusNotFound, "not_found", "no such endpoint")
}

// probeWriter records what the mux's own 404/405 handler would answer.
type probeWriter struct {
	header http.Header
	status int
}

func (p *probeWriter) Header() http.Header         { return p.header }
func (p *probeWriter) Write(b []byte) (int, error) { return len(b), nil }
func (p *probeWriter) WriteHeader(code int) {
	if p.status == 0 {
		p.status = code
	}
}

// recorder keeps the status and error code of a response for the log.
type recorder struct {
	http.ResponseWriter
	status int
	wrote  bool
	code   string
}

func (w *recorder) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *recorder) Write(b []byte) (int, error) {
	if !w.wrote {
		w.status, w.wrote = http.StatusOK, true
	}
	return w.ResponseWriter.Write(b)
}

// Flush lets streaming handlers (MCP over SSE) flush through the recorder.
func (w *recorder) Flush() {
	if !w.wrote {
		w.status, w.wrote = http.StatusOK, true
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap serves http.ResponseController.
func (w *recorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *recorder) statusCode() int {
	if !w.wrote {
		return http.StatusOK
	}
	return w.status
}

// ---- endpoints ----

const maxIdempotencyKey = 255

func (s *server) createTask(w http.ResponseWriter, r *http.Request) error {
	keys := r.Header.Values("Idempotency-Key")
	if len(keys) == 0 || strings.TrimSpace(keys[0]) == "" {
		return apiErrorf(http.StatusBadRequest, "idempotency_key_required",
			"POST /v1/tasks needs an Idempotency-Key header; retry with the same key to get the same task")
	}
	key := keys[0]
	if len(keys) > 1 || !validIdempotencyKey(key) {
		return apiErrorf(http.StatusBadRequest, "bad_idempotency_key",
			"the Idempotency-Key header must be one value of 1 to %d printable ASCII characters", maxIdempotencyKey)
	}
	var req tasks.CreateRequest
	if err := s.decode(r, &req, false); err != nil {
		return err
	}
	role, _ := RoleFromContext(r.Context())
	flight := string(role) + "\x00" + key
	if !s.hold(flight) {
		return apiErrorf(http.StatusConflict, "in_progress",
			"a request with this Idempotency-Key is still in progress; retry when it has finished")
	}
	defer s.release(flight)
	if s.afterHold != nil {
		s.afterHold()
	}
	source := tasks.SourceAPI
	if role == RoleUser {
		source = tasks.SourcePerson
	}
	st, created, err := s.tasksFor(r).Create(r.Context(), key, req, source)
	if errors.Is(err, ledger.ErrConflict) {
		return apiErrorf(http.StatusUnprocessableEntity, "idempotency_conflict",
			"this Idempotency-Key was already used with a different request; use a new key for a new task")
	}
	if err != nil {
		return err
	}
	if created {
		w.Header().Set("Location", "/v1/tasks/"+st.ID)
		writeJSON(w, http.StatusCreated, st)
	} else {
		writeJSON(w, http.StatusOK, st)
	}
	return nil
}

func validIdempotencyKey(k string) bool {
	if len(k) == 0 || len(k) > maxIdempotencyKey {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x20 || k[i] > 0x7e {
			return false
		}
	}
	return true
}

func (s *server) hold(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, busy := s.inflight[key]; busy {
		return false
	}
	s.inflight[key] = struct{}{}
	return true
}

func (s *server) release(key string) {
	s.mu.Lock()
	delete(s.inflight, key)
	s.mu.Unlock()
}

// TaskList is the answer of GET /v1/tasks.
type TaskList struct {
	Tasks []tasks.State `json:"tasks"`
}

// tasksFor is the task service as the caller may use it: an agent token
// sees only the tasks agents created.
func (s *server) tasksFor(r *http.Request) *tasks.Service {
	if role, _ := RoleFromContext(r.Context()); role == RoleUser {
		return s.tasks
	}
	return s.tasks.Agent()
}

// limitOf is the request's limit query parameter, from 1 to most; 0 when
// it has none (the default).
func limitOf(r *http.Request, most int) (int, error) {
	v := r.URL.Query()["limit"]
	if len(v) == 0 {
		return 0, nil
	}
	n, err := strconv.Atoi(v[0])
	if len(v) > 1 || err != nil || n < 1 || n > most {
		return 0, apiErrorf(http.StatusBadRequest, "bad_query", "limit must be one integer from 1 to %d", most)
	}
	return n, nil
}

func (s *server) listTasks(w http.ResponseWriter, r *http.Request) error {
	limit, err := limitOf(r, tasks.MaxList)
	if err != nil {
		return err
	}
	ts, err := s.tasksFor(r).List(r.Context(), limit)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, TaskList{Tasks: ts})
	return nil
}

func (s *server) getTask(w http.ResponseWriter, r *http.Request) error {
	st, err := s.tasksFor(r).Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}

// RunList is the answer of GET /v1/runs.
type RunList struct {
	Runs []tasks.RunState `json:"runs"`
}

// listRuns answers the newest operator passes with their skips; an agent
// is not told the person's calendar entries or action ids.
func (s *server) listRuns(w http.ResponseWriter, r *http.Request) error {
	limit, err := limitOf(r, tasks.MaxRuns)
	if err != nil {
		return err
	}
	rs, err := s.tasksFor(r).Runs(r.Context(), limit)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, RunList{Runs: rs})
	return nil
}

func (s *server) getRun(w http.ResponseWriter, r *http.Request) error {
	st, err := s.tasksFor(r).Run(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}

// submit adds an intent; 202 because the next operator pass performs it.
// An Interaction-Generation header names the task's interaction generation
// the caller read: a submission after another turn is 409
// stale_generation.
// interactionGeneration reads the optional Interaction-Generation header
// (0: absent).
func interactionGeneration(r *http.Request) (int64, error) {
	vs := r.Header.Values("Interaction-Generation")
	if len(vs) == 0 {
		return 0, nil
	}
	n, err := strconv.ParseInt(vs[0], 10, 64)
	if len(vs) > 1 || err != nil || n < 1 {
		return 0, apiErrorf(http.StatusBadRequest, "usage", "the Interaction-Generation header must be one integer of 1 or more")
	}
	return n, nil
}

// continuity records what the agent driving the task reports of itself
// (tasks.Service.SetContinuity): the body is a ledger.Continuity.
func (s *server) continuity(w http.ResponseWriter, r *http.Request) error {
	at, err := interactionGeneration(r)
	if err != nil {
		return err
	}
	var c ledger.Continuity
	if err := s.decode(r, &c, false); err != nil {
		return err
	}
	if !c.UpdatedAt.IsZero() {
		return apiErrorf(http.StatusBadRequest, "usage", "updated_at is set by browserop; leave it out")
	}
	st, err := s.tasksFor(r).SetContinuity(r.Context(), r.PathValue("id"), c, at)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}

func (s *server) submit(w http.ResponseWriter, r *http.Request) error {
	at, err := interactionGeneration(r)
	if err != nil {
		return err
	}
	var in intent.Request
	if err := s.decode(r, &in, false); err != nil {
		return err
	}
	st, err := s.tasksFor(r).SubmitAt(r.Context(), r.PathValue("id"), in, at)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, st)
	return nil
}

// CancelRequest is the optional body of POST /v1/tasks/{id}/cancel.
type CancelRequest struct {
	Reason string `json:"reason,omitempty"`
}

const maxReason = 500

func (s *server) cancel(w http.ResponseWriter, r *http.Request) error {
	return s.endTask(w, r, "cancelled", (*tasks.Service).Cancel)
}

// FinishRequest is the optional body of POST /v1/tasks/{id}/finish: a
// reason, as for a cancel.
type FinishRequest = CancelRequest

// finish ends the task's intake: no more intents; done once every intent
// is settled.
func (s *server) finish(w http.ResponseWriter, r *http.Request) error {
	return s.endTask(w, r, "finished", (*tasks.Service).Finish)
}

// endTask is cancel and finish: an optional {"reason"} body, the reason
// recorded as "<verb> by <who>: <reason>", and the task's state answered.
func (s *server) endTask(w http.ResponseWriter, r *http.Request, verb string,
	end func(*tasks.Service, context.Context, string, string) (tasks.State, error)) error {
	var req CancelRequest
	if err := s.decode(r, &req, true); err != nil {
		return err
	}
	if err := checkReason(req.Reason); err != nil {
		return err
	}
	role, _ := RoleFromContext(r.Context())
	reason := verb + " by the agent (api)"
	if role == RoleUser {
		reason = verb + " by the " + personByAPI
	}
	if req.Reason != "" {
		reason += ": " + req.Reason
	}
	st, err := end(s.tasksFor(r), r.Context(), r.PathValue("id"), reason)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}

func checkReason(reason string) error {
	if len(reason) > maxReason {
		return apiErrorf(http.StatusBadRequest, "usage", "reason is longer than %d bytes", maxReason)
	}
	return nil
}

// GrantRequest is the body of POST /v1/tasks/{id}/grants.
type GrantRequest struct {
	Domain string `json:"domain"`
}

func (s *server) grant(w http.ResponseWriter, r *http.Request) error {
	var req GrantRequest
	if err := s.decode(r, &req, false); err != nil {
		return err
	}
	st, err := s.tasks.Grant(r.Context(), r.PathValue("id"), req.Domain, personByAPI)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}

// ConfirmRequest is the body of POST /v1/actions/{id}/confirm.
type ConfirmRequest struct {
	Decision string `json:"decision"` // confirm or decline
	Reason   string `json:"reason,omitempty"`
}

func (s *server) confirm(w http.ResponseWriter, r *http.Request) error {
	var req ConfirmRequest
	if err := s.decode(r, &req, false); err != nil {
		return err
	}
	if err := checkReason(req.Reason); err != nil {
		return err
	}
	var as tasks.ActionState
	var err error
	switch req.Decision {
	case "confirm":
		as, err = s.tasks.Confirm(r.Context(), r.PathValue("id"), personByAPI)
	case "decline":
		as, err = s.tasks.Decline(r.Context(), r.PathValue("id"), personByAPI, req.Reason)
	default:
		return apiErrorf(http.StatusBadRequest, "usage", `decision must be "confirm" or "decline", got %q`, req.Decision)
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, as)
	return nil
}

// ResolveRequest is the body of POST /v1/actions/{id}/resolve: either the
// verified URL of the effect, or absent with a reason (and retry: a later
// pass tries the intent again).
type ResolveRequest struct {
	VerifiedURL string `json:"verified_url,omitempty"`
	Absent      bool   `json:"absent,omitempty"`
	Retry       bool   `json:"retry,omitempty"`
	Reason      string `json:"reason,omitempty"`
}

func (s *server) resolve(w http.ResponseWriter, r *http.Request) error {
	var req ResolveRequest
	if err := s.decode(r, &req, false); err != nil {
		return err
	}
	if err := checkReason(req.Reason); err != nil {
		return err
	}
	switch {
	case req.VerifiedURL != "" && req.Absent:
		return apiErrorf(http.StatusBadRequest, "usage", "give either verified_url or absent, not both")
	case req.VerifiedURL == "" && !req.Absent:
		return apiErrorf(http.StatusBadRequest, "usage", `give verified_url, or "absent": true with a reason`)
	case req.Absent && strings.TrimSpace(req.Reason) == "":
		return apiErrorf(http.StatusBadRequest, "usage", "an absent resolution needs a reason")
	case req.Retry && !req.Absent:
		return apiErrorf(http.StatusBadRequest, "usage", `retry goes with "absent": true`)
	}
	as, err := s.tasks.Resolve(r.Context(), r.PathValue("id"), tasks.Resolution{VerifiedURL: req.VerifiedURL, Reason: req.Reason, Retry: req.Retry})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, as)
	return nil
}

func (s *server) getStatus(w http.ResponseWriter, r *http.Request) error {
	if s.status == nil {
		writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
		return nil
	}
	v, err := s.status(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

// CleanupRequest is the body of PUT /v1/config/cleanup.
type CleanupRequest struct {
	Preference string `json:"preference"`
}

// cleanupSetByAPI is what the ledger records as having set the cleanup
// preference through the API (with the person's token).
const cleanupSetByAPI = "api"

var errCleanupNotConfigured = apiErrorf(http.StatusNotFound, "not_configured", "this daemon keeps no cleanup preference")

// getCleanup answers the cleanup preference of the daemon's browser
// profile: "" (unknown) until the person chooses.
func (s *server) getCleanup(w http.ResponseWriter, r *http.Request) error {
	if s.cleanup == nil {
		return errCleanupNotConfigured
	}
	set, err := s.cleanup.CleanupSettingOf(r.Context(), s.profile)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, set)
	return nil
}

// putCleanup sets the cleanup preference of the daemon's browser profile
// to one of ledger.CleanupPreferences; it is never set back to unknown.
func (s *server) putCleanup(w http.ResponseWriter, r *http.Request) error {
	if s.cleanup == nil {
		return errCleanupNotConfigured
	}
	var req CleanupRequest
	if err := s.decode(r, &req, false); err != nil {
		return err
	}
	p, err := ledger.ParseCleanupPreference(req.Preference)
	if err != nil {
		return apiErrorf(http.StatusBadRequest, "usage", "preference: %v", err)
	}
	set, err := s.cleanup.SetCleanupPreference(r.Context(), s.profile, p, cleanupSetByAPI)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, set)
	return nil
}

func (s *server) openAPI(w http.ResponseWriter, _ *http.Request) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(openAPIDoc)
	return nil
}
