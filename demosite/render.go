package demosite

import (
	"bytes"
	"embed"
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
}

// mediaView is one img.post-media.
type mediaView struct {
	URL  string
	Alt  string
	Type string
}

func viewPost(p *post) postView {
	pv := postView{
		ID:       p.ID,
		Author:   p.Author,
		Text:     p.Text,
		Datetime: datetime(p.At),
		Display:  p.At.UTC().Format("Jan 2, 2006 15:04 UTC"),
	}
	if p.ParentID != 0 {
		pv.ParentID = strconv.FormatInt(p.ParentID, 10)
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
	d.Draft = Draft
	var buf bytes.Buffer
	if err := pages[page].Execute(&buf, d); err != nil {
		http.Error(w, "demosite: render "+page+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}
