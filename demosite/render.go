package demosite

import (
	"bytes"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"html/template"
	"net/http"
	"strconv"
)

//go:embed templates/*.tmpl
var templateFS embed.FS

// pages are the page templates, each parsed together with the layout.
var pages = func() map[string]*template.Template {
	names := []string{
		"login", "home", "compose", "profile", "permalink", "notfound", "error",
		"captcha", "restricted", "ratelimited", "servererror", "rich", "frame",
	}
	m := make(map[string]*template.Template, len(names))
	for _, n := range names {
		m[n] = template.Must(template.New("layout.tmpl").ParseFS(templateFS,
			"templates/layout.tmpl", "templates/parts.tmpl", "templates/"+n+".tmpl"))
	}
	return m
}()

// pageData is everything a page template may show; each page uses a part.
type pageData struct {
	Title string
	Me    string // filled in by render
	Error string

	// Faults, filled in by render.
	Injection    bool
	EditorAppend bool
	Draft        string
	PersonEdits  bool
	PersonEdit   string
	// DeadSubmit: the page was asked for with ?submit=dead (its
	// committing buttons do nothing).
	DeadSubmit bool

	// ErrorKind marks the form error's kind (data-kind): "conflict".
	ErrorKind string
	// Submission is the id a compose or reply form sends with its text.
	Submission string
	// LateListMS, LatePanelMS: the late_list and late_panel switches, in
	// milliseconds, for the pages they act on (0: off).
	LateListMS  int64
	LatePanelMS int64

	// login
	Handle string
	Next   string

	// compose and reply editors: the initial value
	Text string
	// rich composer: the toggle publishes, without the confirmation panel
	PanelOff bool

	// home and profile
	Timeline   *timelineView
	Profile    string
	ShowFollow bool
	Following  bool

	// permalink
	Post    postView
	Replies []postView
	Likes   int
	Liked   bool
}

type timelineView struct {
	Items    []postView
	Page     int
	Complete bool
	NextURL  string
	PrevURL  string
}

// Listed is how many posts the page lists, as the site counts them in
// p#timeline-count: its items, and the injected post when there is one.
func (tv *timelineView) Listed(injected bool) int {
	if injected {
		return len(tv.Items) + 1
	}
	return len(tv.Items)
}

type postView struct {
	ID       int64
	Author   string
	ParentID string // "" for a top-level post
	Text     string
	Datetime string
	Display  string
	Media    []mediaView
	// Class is a list item's class: "post", or the theme's.
	Class string
	// Permalink and ParentLink are the post's and its parent's addresses.
	Permalink, ParentLink string
	// A compact reply leaves out data-author, <time> or div.post-text.
	NoAuthor, NoTime, Summary bool
}

// mediaView is one img.post-media.
type mediaView struct {
	URL  string
	Alt  string
	Type string
}

// viewPost is how p shows under the switches f: as a list item (list) or
// as a permalink's own post.
func viewPost(p *post, f Faults, list bool) postView {
	pv := postView{
		ID:        p.ID,
		Author:    p.Author,
		Text:      p.shownText(),
		Datetime:  datetime(p.At),
		Display:   display(f, p.At),
		Class:     "post",
		Permalink: permalinkPath(f, p.ID),
	}
	if p.ParentID != 0 {
		pv.ParentID = strconv.FormatInt(p.ParentID, 10)
		pv.ParentLink = permalinkPath(f, p.ParentID)
	}
	if list {
		if f.Theme == "cards" {
			pv.Class = "card"
		}
		if p.ParentID != 0 && f.CompactReplies != "" {
			pv.NoAuthor, pv.NoTime, pv.Summary = compact(f, "author"), compact(f, "time"), compact(f, "text")
			pv.Class += " compact"
		}
	}
	for _, m := range p.Media {
		pv.Media = append(pv.Media, mediaView{URL: m.url(), Alt: m.Alt, Type: m.Type})
	}
	return pv
}

// render writes page with status; the visitor and the faults that show in
// markup come from the request.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, page string, d pageData) {
	v := visitFrom(r)
	d.Me = v.me
	d.Injection = v.faults.Injection
	d.EditorAppend = v.faults.EditorAppend
	d.DeadSubmit = r.URL.Query().Get("submit") == "dead"
	d.Draft = Draft
	d.PersonEdits = v.faults.PersonEdits
	d.PersonEdit = PersonEdit
	d.Submission = newSubmission()
	if v.faults.LateList > 0 && (d.Timeline != nil || page == "permalink") {
		d.LateListMS = max(1, v.faults.LateList.Milliseconds())
	}
	if v.faults.LatePanel > 0 {
		d.LatePanelMS = max(1, v.faults.LatePanel.Milliseconds())
	}
	var buf bytes.Buffer
	if err := pages[page].Execute(&buf, d); err != nil {
		http.Error(w, "demosite: render "+page+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// newSubmission is a form's submission id: 16 random hex digits.
func newSubmission() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}
