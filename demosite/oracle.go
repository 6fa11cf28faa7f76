package demosite

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Effects returns every side effect committed since New or the last Reset,
// in commit order. Seeded posts are not effects and never appear here.
func (s *Server) Effects() []Effect { return s.store.Effects() }

// Faults returns the switches in force now.
func (s *Server) Faults() Faults {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.faults
}

// SetFaults replaces every switch; requests already running keep the
// switches they started with. It returns the Faults.Validate error, wrapping
// ErrBadFaultValue, and then changes nothing.
func (s *Server) SetFaults(f Faults) error {
	if err := f.Validate(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = f
	return nil
}

// Reset drops every post, reply, like, follow and effect and restores the
// faults of Options. Sessions survive, so a signed-in browser stays signed
// in; post ids keep counting up, so a permalink from before never names a
// post from after.
func (s *Server) Reset() {
	s.store.Reset()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = s.opts.Faults
}

// SeedPost stores a top-level post by author at time at (zero means now)
// that is not an effect of the run: it shows in timelines and on its
// permalink at once, but Effects never lists it. Use it for an identical
// older post. SeedPost panics if author is not one of Accounts; it is for
// test setup.
func (s *Server) SeedPost(author, text string, at time.Time) int64 {
	id, err := s.seed(author, 0, text, at)
	if err != nil {
		panic("demosite: SeedPost: " + err.Error())
	}
	return id
}

// SeedReply is SeedPost for a reply to parentID. It panics if author is not
// one of Accounts or parentID is not a post.
func (s *Server) SeedReply(author string, parentID int64, text string, at time.Time) int64 {
	id, err := s.seed(author, parentID, text, at)
	if err != nil {
		panic("demosite: SeedReply: " + err.Error())
	}
	return id
}

func (s *Server) seed(author string, parentID int64, text string, at time.Time) (int64, error) {
	if !isAccount(author) {
		return 0, fmt.Errorf("author %q is not an account (use one of %s)", author, strings.Join(accounts, ", "))
	}
	if at.IsZero() {
		at = s.clock()
	}
	at = at.UTC().Truncate(time.Millisecond)
	p, err := s.store.addPost(author, parentID, strings.ReplaceAll(text, "\r\n", "\n"), nil, at, time.Time{}, true)
	if err != nil {
		return 0, fmt.Errorf("parent %d: %w", parentID, err)
	}
	return p.ID, nil
}

// Login opens a session for handle, as POST /login would, and returns its
// cookie. It panics if handle is not one of Accounts; it is for tests.
func (s *Server) Login(handle string) *http.Cookie {
	if !isAccount(handle) {
		panic(fmt.Sprintf("demosite: Login: %q is not an account", handle))
	}
	return s.cookie(s.store.newSession(handle))
}

func (s *Server) oracleRoutes() *http.ServeMux {
	m := http.NewServeMux()
	m.HandleFunc("GET /_oracle/effects", func(w http.ResponseWriter, r *http.Request) {
		effects := s.Effects()
		if effects == nil {
			effects = []Effect{}
		}
		writeJSON(w, http.StatusOK, effects)
	})
	m.HandleFunc("GET /_oracle/faults", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.Faults())
	})
	// PUT replaces every switch (unmentioned ones are off); PATCH changes
	// only the switches it mentions.
	m.HandleFunc("PUT /_oracle/faults", s.handleFaults(false))
	m.HandleFunc("PATCH /_oracle/faults", s.handleFaults(true))
	m.HandleFunc("POST /_oracle/seed", s.handleSeed)
	m.HandleFunc("POST /_oracle/reset", func(w http.ResponseWriter, r *http.Request) {
		s.Reset()
		w.WriteHeader(http.StatusNoContent)
	})
	return m
}

func (s *Server) handleFaults(merge bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
		if err != nil {
			oracleError(w, http.StatusBadRequest, "read body: "+err.Error())
			return
		}
		var f Faults
		if merge {
			f = s.Faults()
		}
		if err := json.Unmarshal(body, &f); err != nil {
			oracleError(w, http.StatusBadRequest, err.Error())
			return
		}
		// Concurrent PATCHes race between read and write; tests drive faults
		// from one goroutine, so last writer wins is enough.
		if err := s.SetFaults(f); err != nil {
			oracleError(w, http.StatusBadRequest, err.Error())
			return
		}
		writeJSON(w, http.StatusOK, f)
	}
}

// seedRequest is the body of POST /_oracle/seed.
type seedRequest struct {
	Author   string    `json:"author"`
	Text     string    `json:"text"`
	At       time.Time `json:"at"`
	ParentID int64     `json:"parent_id"`
}

func (s *Server) handleSeed(w http.ResponseWriter, r *http.Request) {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	var req seedRequest
	if err := dec.Decode(&req); err != nil {
		oracleError(w, http.StatusBadRequest, "seed: "+err.Error())
		return
	}
	id, err := s.seed(req.Author, req.ParentID, req.Text, req.At)
	if err != nil {
		oracleError(w, http.StatusBadRequest, "seed: "+err.Error())
		return
	}
	writeJSON(w, http.StatusCreated, map[string]int64{"id": id})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		oracleError(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

func oracleError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]string{"error": msg})
	_, _ = w.Write(append(b, '\n'))
}
