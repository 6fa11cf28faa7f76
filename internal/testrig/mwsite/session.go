package mwsite

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
)

// Session is an HTTP client of the site with cookies of its own: signed in
// as a user (SignInHTTP) or anonymous (Anonymous). It talks to the site's
// URL (through the front, when there is one) and follows no redirects. Its
// methods are safe for concurrent use.
type Session struct {
	site *Site
	user string // MediaWiki's name of the user; "" when anonymous
	jar  *cookiejar.Jar
	c    *http.Client
}

// Anonymous returns a session that is signed in as no one.
func (s *Site) Anonymous() *Session {
	jar, _ := cookiejar.New(nil) // cookiejar.New never fails without options
	return &Session{site: s, jar: jar, c: httpClient(jar)}
}

// SignInHTTP signs login in with pass through the action API
// (meta=tokens&type=login, then action=clientlogin) and returns the
// session. A refused sign-in is an error with MediaWiki's message.
func (s *Site) SignInHTTP(ctx context.Context, login, pass string) (*Session, error) {
	se := s.Anonymous()
	token, err := se.Token(ctx, "login")
	if err != nil {
		return nil, fmt.Errorf("sign %s in: %w", login, err)
	}
	var resp struct {
		ClientLogin struct {
			Status   string `json:"status"`
			Username string `json:"username"`
			Message  string `json:"message"`
		} `json:"clientlogin"`
	}
	err = se.API(ctx, url.Values{
		"action":         {"clientlogin"},
		"username":       {login},
		"password":       {pass},
		"logintoken":     {token},
		"loginreturnurl": {s.url + "/"},
	}, &resp)
	if err != nil {
		return nil, fmt.Errorf("sign %s in: %w", login, err)
	}
	if resp.ClientLogin.Status != "PASS" {
		return nil, fmt.Errorf("sign %s in: refused (%s): %s", login, resp.ClientLogin.Status, resp.ClientLogin.Message)
	}
	se.user = resp.ClientLogin.Username
	return se, nil
}

// User returns MediaWiki's name of the session's user, "" when anonymous.
func (se *Session) User() string { return se.user }

// Client returns the session's HTTP client, which carries its cookies and
// follows no redirects.
func (se *Session) Client() *http.Client { return se.c }

// Cookies returns the session's cookies for the site's URL, such as
// PREFIX_session, PREFIXUserName and PREFIXUserID for a signed-in user
// (Site.CookiePrefix). Only their names and values are set, as a cookie
// jar returns them; MediaWiki sets them for the host alone (127.0.0.1,
// whatever the port), path /, HttpOnly, not Secure.
func (se *Session) Cookies() []*http.Cookie {
	u, err := url.Parse(se.site.url)
	if err != nil {
		return nil
	}
	return se.jar.Cookies(u)
}

// Get fetches path (such as "/index.php?title=Foo_bar&action=history") on
// the site's URL and returns the status, the body and any Location.
func (se *Session) Get(ctx context.Context, path string) (status int, body, location string, err error) {
	return get(ctx, se.c, se.site.url+path)
}

// Post submits form to path on the site's URL, as Get.
func (se *Session) Post(ctx context.Context, path string, form url.Values) (status int, body, location string, err error) {
	return post(ctx, se.c, se.site.url+path, form)
}

// APIError is an error the action API answered with.
type APIError struct {
	Code string // such as "badtoken", "assertnameduserfailed"
	Info string
}

func (e *APIError) Error() string { return "api: " + e.Code + ": " + e.Info }

// API posts params to api.php (format=json, formatversion=2 are added) and
// decodes the answer into out (unless nil). An answer with an error is an
// *APIError. A signed-in session asserts its user (assertuser), so that a
// lost session fails instead of acting anonymously.
func (se *Session) API(ctx context.Context, params url.Values, out any) error {
	return se.api(ctx, params, out, true)
}

// api is API, asserting the session's user only when assert is set.
func (se *Session) api(ctx context.Context, params url.Values, out any, assert bool) error {
	form := url.Values{}
	for k, v := range params {
		form[k] = v
	}
	form.Set("format", "json")
	form.Set("formatversion", "2")
	if assert && se.user != "" && form.Get("assertuser") == "" {
		form.Set("assertuser", se.user)
	}
	status, body, _, err := post(ctx, se.c, se.site.url+"/api.php", form)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("api.php %s: status %d: %s", params.Get("action"), status, pageError(body))
	}
	var e struct {
		Error *APIError `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		return fmt.Errorf("api.php %s: %w: %.300s", params.Get("action"), err, body)
	}
	if e.Error != nil {
		return e.Error
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal([]byte(body), out); err != nil {
		return fmt.Errorf("api.php %s: %w: %.300s", params.Get("action"), err, body)
	}
	return nil
}

// Token returns a token of kind ("csrf", "watch", "login", ...) for the
// session, from meta=tokens.
func (se *Session) Token(ctx context.Context, kind string) (string, error) {
	var resp struct {
		Query struct {
			Tokens map[string]string `json:"tokens"`
		} `json:"query"`
	}
	if err := se.API(ctx, url.Values{"action": {"query"}, "meta": {"tokens"}, "type": {kind}}, &resp); err != nil {
		return "", err
	}
	t := resp.Query.Tokens[kind+"token"]
	if t == "" {
		return "", fmt.Errorf("api.php gave no %s token", kind)
	}
	return t, nil
}

// EditResult is what action=edit answered.
type EditResult struct {
	Result   string `json:"result"` // "Success"
	PageID   int    `json:"pageid"`
	Title    string `json:"title"`
	OldRevID int    `json:"oldrevid"`
	NewRevID int    `json:"newrevid"` // 0 for a null edit
	New      bool   `json:"new"`      // the edit created the page
	NoChange bool   `json:"nochange"` // a null edit: the text was the current one
}

// Edit saves text as title's new revision, with summary, through
// action=edit. Text identical to the current revision is a null edit:
// NoChange, no new revision.
func (se *Session) Edit(ctx context.Context, title, text, summary string) (EditResult, error) {
	return se.edit(ctx, url.Values{"title": {title}, "text": {text}, "summary": {summary}})
}

// NewSection adds a section headed heading with text to title (a talk
// page, usually) through action=edit&section=new, as the "Add topic" form
// does: "== heading ==" then text at the end of the page.
func (se *Session) NewSection(ctx context.Context, title, heading, text string) (EditResult, error) {
	return se.edit(ctx, url.Values{"title": {title}, "section": {"new"}, "sectiontitle": {heading}, "text": {text}})
}

func (se *Session) edit(ctx context.Context, params url.Values) (EditResult, error) {
	token, err := se.Token(ctx, "csrf")
	if err != nil {
		return EditResult{}, fmt.Errorf("edit %s: %w", params.Get("title"), err)
	}
	params.Set("action", "edit")
	params.Set("token", token)
	var resp struct {
		Edit EditResult `json:"edit"`
	}
	if err := se.API(ctx, params, &resp); err != nil {
		return EditResult{}, fmt.Errorf("edit %s: %w", params.Get("title"), err)
	}
	if resp.Edit.Result != "Success" {
		return resp.Edit, fmt.Errorf("edit %s: result %q", params.Get("title"), resp.Edit.Result)
	}
	return resp.Edit, nil
}

// Watch adds title (and its talk page) to the session's user's watchlist
// through action=watch.
func (se *Session) Watch(ctx context.Context, title string) error {
	return se.watch(ctx, title, false)
}

// Unwatch removes title (and its talk page) from the watchlist.
func (se *Session) Unwatch(ctx context.Context, title string) error {
	return se.watch(ctx, title, true)
}

func (se *Session) watch(ctx context.Context, title string, unwatch bool) error {
	token, err := se.Token(ctx, "watch")
	if err != nil {
		return fmt.Errorf("watch %s: %w", title, err)
	}
	params := url.Values{"action": {"watch"}, "titles": {title}, "token": {token}}
	if unwatch {
		params.Set("unwatch", "1")
	}
	var resp struct {
		Watch []struct {
			Title     string `json:"title"`
			Watched   bool   `json:"watched"`
			Unwatched bool   `json:"unwatched"`
			Missing   bool   `json:"missing"`
			Invalid   bool   `json:"invalid"`
		} `json:"watch"`
	}
	if err := se.API(ctx, params, &resp); err != nil {
		return fmt.Errorf("watch %s: %w", title, err)
	}
	if len(resp.Watch) != 1 || resp.Watch[0].Invalid || resp.Watch[0].Watched == unwatch || resp.Watch[0].Unwatched != unwatch {
		return fmt.Errorf("watch %s: api.php answered %+v", title, resp.Watch)
	}
	return nil
}

// UserInfo returns the name of the user the site sees on the session
// (meta=userinfo, asserting nothing), and whether that is anonymous (then
// the name is the IP address).
func (se *Session) UserInfo(ctx context.Context) (name string, anon bool, err error) {
	var resp struct {
		Query struct {
			UserInfo struct {
				Name string `json:"name"`
				Anon bool   `json:"anon"`
			} `json:"userinfo"`
		} `json:"query"`
	}
	if err := se.api(ctx, url.Values{"action": {"query"}, "meta": {"userinfo"}}, &resp, false); err != nil {
		return "", false, err
	}
	return resp.Query.UserInfo.Name, resp.Query.UserInfo.Anon, nil
}
