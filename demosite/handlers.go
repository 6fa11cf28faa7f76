package demosite

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

const (
	// perPage is the number of items on one timeline page.
	perPage = 20
	// maxForm bounds a form body; a full text of 4-byte runes fits easily.
	maxForm = 64 << 10
	// maxPostForm bounds the body of a post or reply form: a full text and
	// four full alt texts of 4-byte runes, percent-encoded, fit.
	maxPostForm = 128 << 10
)

const (
	// MaxTextRunes is the longest post or reply text, in runes, after
	// "\r\n" became "\n".
	MaxTextRunes = 1000
	// Draft is the saved draft the editor_append fault keeps in front of
	// every compose and reply text.
	Draft = "(draft) "
	// PersonEdit is what the person_edits fault's person types.
	PersonEdit = " (the person's own words)"
)

func (s *Server) routes() *http.ServeMux {
	m := http.NewServeMux()
	m.HandleFunc("GET /{$}", s.handleRoot)
	m.HandleFunc("GET /login", s.handleLoginPage)
	m.HandleFunc("POST /login", s.handleLogin)
	m.HandleFunc("POST /logout", s.handleLogout)
	m.HandleFunc("GET /home", s.handleHome)
	m.HandleFunc("GET /compose", s.handleCompose)
	m.HandleFunc("POST /posts", s.handlePost("compose", "/compose"))
	m.HandleFunc("GET /compose/rich", s.handleRichCompose)
	m.HandleFunc("POST /api/posts", s.handleAPIPost)
	m.HandleFunc("GET /compose/frame", s.handleFrameCompose)
	m.HandleFunc("POST /compose/frame", s.handlePost("frame", "/compose/frame"))
	m.HandleFunc("GET /u/{handle}", s.handleProfile)
	m.HandleFunc("POST /u/{handle}/follow", s.handleFollow(true))
	m.HandleFunc("POST /u/{handle}/unfollow", s.handleFollow(false))
	m.HandleFunc("GET /p/{id}", s.handlePermalink)
	m.HandleFunc("GET /post", s.handlePermalink)
	m.HandleFunc("POST /p/{id}/reply", s.handleReply)
	m.HandleFunc("POST /p/{id}/like", s.handleLike(true))
	m.HandleFunc("POST /p/{id}/unlike", s.handleLike(false))
	m.HandleFunc("POST /media", s.handleUpload)
	m.HandleFunc("GET /media/{file}", s.handleMedia)
	m.HandleFunc("/", s.handleNotFound)
	return m
}

func (s *Server) handleRoot(w http.ResponseWriter, r *http.Request) {
	if visitFrom(r).me == "" {
		http.Redirect(w, r, "/login", http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, "/home", http.StatusSeeOther)
}

func (s *Server) handleNotFound(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, http.StatusNotFound, "notfound", pageData{Title: "Not found"})
}

// requireSession sends a visitor who is not signed in to the login page and
// reports whether the request may go on. next is the page to return to.
func requireSession(w http.ResponseWriter, r *http.Request, next string) bool {
	if visitFrom(r).me != "" {
		return true
	}
	http.Redirect(w, r, "/login?next="+url.QueryEscape(next), http.StatusSeeOther)
	return false
}

// localPath returns next if it is a path on this site, else "/home"; the
// login form never redirects off-site.
func localPath(next string) string {
	if strings.HasPrefix(next, "/") && !strings.HasPrefix(next, "//") && !strings.Contains(next, `\`) {
		return next
	}
	return "/home"
}

func (s *Server) handleLoginPage(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, http.StatusOK, "login", pageData{Title: "Log in", Next: localPath(r.URL.Query().Get("next"))})
}

func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		s.render(w, r, http.StatusBadRequest, "login", pageData{Title: "Log in", Error: "Could not read the form.", Next: "/home"})
		return
	}
	handle := strings.TrimPrefix(strings.TrimSpace(r.PostForm.Get("handle")), "@")
	next := localPath(r.PostForm.Get("next"))
	if !isAccount(handle) || r.PostForm.Get("password") != Password {
		s.render(w, r, http.StatusUnauthorized, "login", pageData{Title: "Log in", Error: "Wrong handle or password.", Handle: handle, Next: next})
		return
	}
	http.SetCookie(w, s.cookie(s.store.newSession(handle)))
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (s *Server) cookie(token string) *http.Cookie {
	// Persistent, like a real site's "remember me": the sign-in survives a
	// browser restart, so `browserop login` then `browserop run` works.
	return &http.Cookie{Name: sessionCookie, Value: token, Path: "/", MaxAge: 30 * 24 * 3600, HttpOnly: true, SameSite: http.SameSiteLaxMode}
}

func (s *Server) handleLogout(w http.ResponseWriter, r *http.Request) {
	if t := visitFrom(r).token; t != "" {
		s.store.endSession(t)
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// pageNumber reads ?page=N (1-based, default 1).
func pageNumber(r *http.Request) (int, bool) {
	q := r.URL.Query().Get("page")
	if q == "" {
		return 1, true
	}
	n, err := strconv.Atoi(q)
	if err != nil || n < 1 {
		return 0, false
	}
	return n, true
}

func (s *Server) timelineView(r *http.Request, authors map[string]bool, base string, page int) *timelineView {
	f := visitFrom(r).faults
	items, more := s.store.timeline(authors, page, perPage, s.clock())
	if n := f.TimelineNewest; n > 0 {
		// Only the newest n, on one page, and nothing says more exist.
		items, more = nil, false
		if page == 1 {
			items, _ = s.store.timeline(authors, 1, n, s.clock())
		}
	}
	tv := &timelineView{Page: page, Complete: !more && f.TimelineNewest == 0}
	for i := range items {
		tv.Items = append(tv.Items, viewPost(&items[i], f, true))
	}
	if more {
		tv.NextURL = base + "?page=" + strconv.Itoa(page+1)
	}
	if page > 1 {
		tv.PrevURL = base + "?page=" + strconv.Itoa(page-1)
	}
	return tv
}

func (s *Server) handleHome(w http.ResponseWriter, r *http.Request) {
	if !requireSession(w, r, r.URL.RequestURI()) {
		return
	}
	v := visitFrom(r)
	page, ok := pageNumber(r)
	if !ok {
		s.render(w, r, http.StatusBadRequest, "error", pageData{Title: "Bad request", Error: "page must be a whole number from 1"})
		return
	}
	s.render(w, r, http.StatusOK, "home", pageData{Title: "Home", Timeline: s.timelineView(r, s.store.feed(v.me), "/home", page)})
}

func (s *Server) handleProfile(w http.ResponseWriter, r *http.Request) {
	v := visitFrom(r)
	handle := r.PathValue("handle")
	if !isAccount(handle) {
		s.handleNotFound(w, r)
		return
	}
	page, ok := pageNumber(r)
	if !ok {
		s.render(w, r, http.StatusBadRequest, "error", pageData{Title: "Bad request", Error: "page must be a whole number from 1"})
		return
	}
	d := pageData{
		Title:    "@" + handle,
		Profile:  handle,
		Timeline: s.timelineView(r, map[string]bool{handle: true}, "/u/"+handle, page),
	}
	if v.me != "" && v.me != handle {
		d.ShowFollow = true
		d.Following = s.store.following(v.me, handle)
	}
	s.render(w, r, http.StatusOK, "profile", d)
}

func (s *Server) handleCompose(w http.ResponseWriter, r *http.Request) {
	if !requireSession(w, r, "/compose") {
		return
	}
	s.render(w, r, http.StatusOK, "compose", pageData{Title: "Compose", Text: s.draft(r)})
}

// draft is the initial content of an editor: the editor_append fault's
// saved draft, else the page's ?draft= (a draft the site restored, text
// autofilled, what a person typed before browserop came: docs/demosite.md,
// "A restored draft").
func (s *Server) draft(r *http.Request) string {
	if visitFrom(r).faults.EditorAppend {
		return Draft
	}
	return r.URL.Query().Get("draft")
}

// readText parses the form field text, turns "\r\n" into "\n" and checks it.
// The message is for the person who typed it.
func readText(w http.ResponseWriter, r *http.Request) (string, string) {
	r.Body = http.MaxBytesReader(w, r.Body, maxPostForm)
	if err := r.ParseForm(); err != nil {
		return "", "Could not read the form (is the text far too long?)."
	}
	return checkText(r.PostForm.Get("text"))
}

// checkText turns "\r\n" into "\n" and checks a post's text: valid UTF-8,
// not blank, at most MaxTextRunes. The message is for the person who typed
// it.
func checkText(text string) (string, string) {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	switch {
	case !utf8.ValidString(text):
		return text, "The text is not valid UTF-8."
	case strings.TrimSpace(text) == "":
		return text, "The text is empty. Write something first."
	case utf8.RuneCountInString(text) > MaxTextRunes:
		return text, "The text is " + strconv.Itoa(utf8.RuneCountInString(text)) + " characters long; the limit is " + strconv.Itoa(MaxTextRunes) + "."
	}
	return text, ""
}

// commitThen runs the mutation faults around commit: offsite_redirect commits
// nothing, then drop, hang and error 500 take over after the commit, in that
// order. Otherwise it redirects (303) to the location commit returned.
func (s *Server) commitThen(w http.ResponseWriter, r *http.Request, commit func() (string, bool)) {
	f := visitFrom(r).faults
	if f.OffsiteRedirect != "" {
		http.Redirect(w, r, f.OffsiteRedirect, http.StatusSeeOther)
		return
	}
	location, ok := commit()
	if !ok {
		return // commit wrote the error page
	}
	switch {
	case f.DropAfterCommit:
		drop(w)
	case f.HangAfterCommit:
		s.hang(r.Context(), w)
	case f.Error500AfterCommit:
		s.render(w, r, http.StatusInternalServerError, "servererror", pageData{Title: "Something went wrong"})
	case f.ResendAfterCommit && r.PostForm.Get("submission") != "":
		// The browser sends the same submission again (a 307 keeps the
		// method and the body), as it does after a dropped connection.
		w.Header().Set("Location", r.URL.RequestURI())
		w.WriteHeader(http.StatusTemporaryRedirect)
	default:
		http.Redirect(w, r, location, http.StatusSeeOther)
	}
}

// conflictMessage is the edit-conflict answer to a resent submission.
func conflictMessage(id int64) string {
	return "Edit conflict: this submission was already saved (#" + strconv.FormatInt(id, 10) + "). Nothing was changed."
}

// handlePost commits a post from a form, with the images it attaches, and
// redirects (303) to its permalink. A text or an image the site refuses
// comes back on page (the form's own), with 400; next is that page, for the
// login wall.
func (s *Server) handlePost(page, next string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !requireSession(w, r, next) {
			return
		}
		text, problem := readText(w, r)
		var media []attachment
		if problem == "" {
			media, problem = s.readMedia(r)
		}
		if problem != "" {
			s.render(w, r, http.StatusBadRequest, page, pageData{Title: "Compose", Text: text, Error: problem})
			return
		}
		v := visitFrom(r)
		s.commitThen(w, r, func() (string, bool) {
			now := s.clock()
			p, err := s.store.addSubmitted(v.me, 0, text, media, now, now.Add(v.faults.VisibilityDelay), s.extra(r, text), v.faults.ResendAfterCommit)
			if errors.Is(err, errResent) {
				s.render(w, r, http.StatusConflict, page, pageData{Title: "Compose", Text: text, Error: conflictMessage(p.ID), ErrorKind: "conflict"})
				return "", false
			}
			if err != nil {
				s.render(w, r, http.StatusInternalServerError, "servererror", pageData{Title: "Something went wrong"})
				return "", false
			}
			return permalinkPath(v.faults, p.ID), true
		})
	}
}

// extra is what the form's submission adds to a post with text.
func (s *Server) extra(r *http.Request, text string) postExtra {
	return postExtra{Shown: shownFor(visitFrom(r).faults, text), Category: category(r.PostForm.Get("category")), Submission: r.PostForm.Get("submission")}
}

// postID reads the {id} path value (for /post, the id query key) of a
// visible post, or writes 404.
func (s *Server) postID(w http.ResponseWriter, r *http.Request) (post, bool) {
	raw := r.PathValue("id")
	if r.URL.Path == "/post" {
		raw = r.URL.Query().Get("id")
	}
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		s.handleNotFound(w, r)
		return post{}, false
	}
	p, ok := s.store.visiblePost(id, s.clock())
	if !ok {
		s.handleNotFound(w, r)
		return post{}, false
	}
	return p, true
}

func (s *Server) permalinkData(r *http.Request, p post) pageData {
	v := visitFrom(r)
	now := s.clock()
	d := pageData{Title: "@" + p.Author + ": " + excerpt(p.shownText()), Post: viewPost(&p, v.faults, false)}
	for _, rp := range s.store.replies(p.ID, now) {
		d.Replies = append(d.Replies, viewPost(&rp, v.faults, true))
	}
	d.Likes, d.Liked = s.store.likeState(p.ID, v.me)
	d.Text = s.draft(r)
	return d
}

func (s *Server) handlePermalink(w http.ResponseWriter, r *http.Request) {
	p, ok := s.postID(w, r)
	if !ok {
		return
	}
	s.render(w, r, http.StatusOK, "permalink", s.permalinkData(r, p))
}

func (s *Server) handleReply(w http.ResponseWriter, r *http.Request) {
	if !requireSession(w, r, "/p/"+r.PathValue("id")) {
		return
	}
	parent, ok := s.postID(w, r)
	if !ok {
		return
	}
	text, problem := readText(w, r)
	var media []attachment
	if problem == "" {
		media, problem = s.readMedia(r)
	}
	if problem != "" {
		d := s.permalinkData(r, parent)
		d.Text, d.Error = text, problem
		s.render(w, r, http.StatusBadRequest, "permalink", d)
		return
	}
	v := visitFrom(r)
	s.commitThen(w, r, func() (string, bool) {
		now := s.clock()
		to := parent.ID
		if v.faults.FlatReplies {
			to = s.store.root(parent.ID)
		}
		p, err := s.store.addSubmitted(v.me, to, text, media, now, now.Add(v.faults.VisibilityDelay), s.extra(r, text), v.faults.ResendAfterCommit)
		if errors.Is(err, errResent) {
			d := s.permalinkData(r, parent)
			d.Text, d.Error, d.ErrorKind = text, conflictMessage(p.ID), "conflict"
			s.render(w, r, http.StatusConflict, "permalink", d)
			return "", false
		}
		if err != nil { // the parent went away in between (reset)
			s.handleNotFound(w, r)
			return "", false
		}
		return permalinkPath(v.faults, p.ID), true
	})
}

func (s *Server) handleLike(on bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !requireSession(w, r, "/p/"+r.PathValue("id")) {
			return
		}
		p, ok := s.postID(w, r)
		if !ok {
			return
		}
		v := visitFrom(r)
		s.commitThen(w, r, func() (string, bool) {
			if _, err := s.store.setLike(v.me, p.ID, on, s.clock()); err != nil {
				s.handleNotFound(w, r)
				return "", false
			}
			return "/p/" + strconv.FormatInt(p.ID, 10), true
		})
	}
}

func (s *Server) handleFollow(on bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		handle := r.PathValue("handle")
		if !requireSession(w, r, "/u/"+handle) {
			return
		}
		if !isAccount(handle) {
			s.handleNotFound(w, r)
			return
		}
		v := visitFrom(r)
		if v.me == handle {
			s.render(w, r, http.StatusBadRequest, "error", pageData{Title: "Bad request", Error: "You cannot follow yourself."})
			return
		}
		s.commitThen(w, r, func() (string, bool) {
			if _, err := s.store.setFollow(v.me, handle, on, s.clock()); err != nil {
				status := http.StatusBadRequest
				if errors.Is(err, errNoAccount) {
					status = http.StatusNotFound
				}
				s.render(w, r, status, "error", pageData{Title: "Bad request", Error: err.Error()})
				return "", false
			}
			return "/u/" + handle, true
		})
	}
}

// excerpt shortens text for a page title.
func excerpt(text string) string {
	text = strings.Join(strings.Fields(text), " ")
	if utf8.RuneCountInString(text) <= 40 {
		return text
	}
	r := []rune(text)
	return string(r[:40]) + "…"
}

// datetime formats t as the <time datetime> value: RFC 3339, UTC,
// milliseconds.
func datetime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z07:00")
}
