package demosite

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The JSON API the rich composer (/compose/rich) publishes through, as
// modern publishing UIs do: fetch, then history.replaceState, no page load.

// DuplicateWindow is how far back, by the site's clock, the
// refuse_duplicates fault looks for the same text by the same account.
const DuplicateWindow = 10 * time.Minute

// apiPost is the body of POST /api/posts.
type apiPost struct {
	Title string `json:"title"`
	Body  string `json:"body"`
}

// isAPI reports whether r is for the JSON API or is an upload (POST
// /media): both are sent with fetch, answer JSON and never redirect to the
// login page.
func isAPI(r *http.Request) bool {
	return strings.HasPrefix(r.URL.Path, "/api/") || (r.Method == http.MethodPost && r.URL.Path == "/media")
}

func apiError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

// handleAPIPost commits a post whose text is title + "\n" + body. It
// answers 201 {"id", "url"}, or {"error"} with 401 (signed out), 415 (not
// JSON: a cross-site form cannot send JSON, so this is the API's CSRF
// guard), 400 (unreadable or invalid text), 409 (refuse_duplicates); the
// mutation faults apply as for forms.
func (s *Server) handleAPIPost(w http.ResponseWriter, r *http.Request) {
	// Read the body to its end first: the server notices a client that
	// goes away (hang_after_commit) only then.
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxForm))
	if err != nil {
		apiError(w, http.StatusRequestEntityTooLarge, "The post is far too long.")
		return
	}
	v := visitFrom(r)
	if v.me == "" {
		apiError(w, http.StatusUnauthorized, "You are signed out. Log in again to publish.")
		return
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		apiError(w, http.StatusUnsupportedMediaType, "Send the post as application/json.")
		return
	}
	var req apiPost
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		apiError(w, http.StatusBadRequest, "Could not read the post: "+err.Error())
		return
	}
	text, problem := checkText(req.Title + "\n" + req.Body)
	if problem != "" {
		apiError(w, http.StatusBadRequest, problem)
		return
	}
	if v.faults.OffsiteRedirect != "" {
		http.Redirect(w, r, v.faults.OffsiteRedirect, http.StatusSeeOther)
		return
	}
	var window time.Duration
	if v.faults.RefuseDuplicates {
		window = DuplicateWindow
	}
	now := s.clock()
	p, err := s.store.addPostOnce(v.me, text, shownFor(v.faults, text), now, now.Add(v.faults.VisibilityDelay), window)
	if errors.Is(err, errDuplicate) {
		apiError(w, http.StatusConflict, "You already posted this. Change the text and try again.")
		return
	}
	if err != nil {
		apiError(w, http.StatusInternalServerError, "Something went wrong.")
		return
	}
	switch {
	case v.faults.DropAfterCommit:
		drop(w)
	case v.faults.HangAfterCommit:
		s.hang(r.Context(), w)
	case v.faults.Error500AfterCommit:
		apiError(w, http.StatusInternalServerError, "Something went wrong. The post may or may not have been published.")
	default:
		url := "/p/" + strconv.FormatInt(p.ID, 10)
		w.Header().Set("Location", url)
		writeJSON(w, http.StatusCreated, map[string]any{"id": p.ID, "url": url})
	}
}

// apiBlocked answers an API request that a blocker fault stops, as JSON
// with the status the page would have.
func apiBlocked(w http.ResponseWriter, f Faults) bool {
	switch {
	case f.Captcha:
		apiError(w, http.StatusForbidden, "Complete the security check first.")
	case f.Restricted:
		apiError(w, http.StatusForbidden, "Your account is restricted.")
	case f.RateLimit:
		w.Header().Set("Retry-After", "60")
		apiError(w, http.StatusTooManyRequests, "You are posting too fast. Try again later.")
	default:
		return false
	}
	return true
}

func (s *Server) handleRichCompose(w http.ResponseWriter, r *http.Request) {
	if !requireSession(w, r, r.URL.RequestURI()) {
		return
	}
	s.render(w, r, http.StatusOK, "rich", pageData{Title: "New post", PanelOff: r.URL.Query().Get("panel") == "off"})
}

func (s *Server) handleFrameCompose(w http.ResponseWriter, r *http.Request) {
	if !requireSession(w, r, "/compose/frame") {
		return
	}
	s.render(w, r, http.StatusOK, "frame", pageData{Title: "Compose"})
}
