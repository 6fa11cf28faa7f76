package wpsite

import (
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/browserop/browserop/internal/testrig/rig"
)

// install runs WordPress's installer through its form, as a person would,
// then adds Alice and Carol through the administrator's Add New User form.
func (s *Site) install(ctx context.Context) error {
	c := httpClient(nil)
	form := url.Values{
		"weblog_title":    {s.title},
		"user_name":       {Admin.Login},
		"admin_password":  {Admin.Password},
		"admin_password2": {Admin.Password},
		"pw_weak":         {"on"}, // a short password needs the "confirm use of weak password" box
		"admin_email":     {Admin.Email},
		"blog_public":     {"0"},
		"language":        {""},
		"Submit":          {"Install WordPress"},
	}
	status, body, _, err := post(ctx, c, s.url+"/wp-admin/install.php?step=2", form)
	if err != nil {
		return fmt.Errorf("install: %w", err)
	}
	if status != http.StatusOK || !strings.Contains(body, "<h1>Success!</h1>") {
		return fmt.Errorf("install: status %d: %s; php errors: %s", status, pageError(body), rig.Tail(s.dir+"/php-errors.log", 1000))
	}
	s.users[Admin.Login] = 1

	admin, err := s.signInHTTP(ctx, Admin)
	if err != nil {
		return err
	}
	for _, u := range Users[1:] {
		id, err := s.createUser(ctx, admin, u)
		if err != nil {
			return fmt.Errorf("add user %s: %w", u.Login, err)
		}
		s.users[u.Login] = id
	}
	return nil
}

// signInHTTP signs u in through wp-login.php and returns a client carrying
// the session's cookies.
func (s *Site) signInHTTP(ctx context.Context, u User) (*http.Client, error) {
	jar, err := cookiejar.New(nil)
	if err != nil {
		return nil, err
	}
	c := httpClient(jar)
	// The GET sets wordpress_test_cookie, which the POST must carry.
	if _, _, err := get(ctx, c, s.url+"/wp-login.php"); err != nil {
		return nil, fmt.Errorf("sign %s in: %w", u.Login, err)
	}
	form := url.Values{
		"log":         {u.Login},
		"pwd":         {u.Password},
		"wp-submit":   {"Log In"},
		"redirect_to": {s.url + "/wp-admin/"},
		"testcookie":  {"1"},
	}
	status, body, _, err := post(ctx, c, s.url+"/wp-login.php", form)
	if err != nil {
		return nil, fmt.Errorf("sign %s in: %w", u.Login, err)
	}
	if status != http.StatusFound {
		return nil, fmt.Errorf("sign %s in: status %d: %s", u.Login, status, pageError(body))
	}
	return c, nil
}

var createUserNonce = regexp.MustCompile(`name="_wpnonce_create-user" value="([0-9a-f]+)"`)

// createUser adds u through wp-admin/user-new.php, signed in as an
// administrator on c, and returns u's user ID.
func (s *Site) createUser(ctx context.Context, c *http.Client, u User) (int, error) {
	formURL := s.url + "/wp-admin/user-new.php"
	status, body, err := get(ctx, c, formURL)
	if err != nil {
		return 0, err
	}
	m := createUserNonce.FindStringSubmatch(body)
	if status != http.StatusOK || m == nil {
		return 0, fmt.Errorf("the form at %s (status %d) has no create-user nonce: %s", formURL, status, pageError(body))
	}
	form := url.Values{
		"action":               {"createuser"},
		"_wpnonce_create-user": {m[1]},
		"_wp_http_referer":     {"/wp-admin/user-new.php"},
		"user_login":           {u.Login},
		"email":                {u.Email},
		"first_name":           {u.FirstName},
		"last_name":            {u.LastName},
		"url":                  {""},
		"pass1":                {u.Password},
		"pass2":                {u.Password},
		"pw_weak":              {"on"},
		"role":                 {u.Role},
		"createuser":           {"Add New User"},
	}
	status, body, loc, err := post(ctx, c, formURL, form)
	if err != nil {
		return 0, err
	}
	if status != http.StatusFound || !strings.Contains(loc, "update=add") {
		return 0, fmt.Errorf("status %d, location %q: %s", status, loc, pageError(body))
	}
	rows, err := s.Query(ctx, "SELECT ID FROM wp_users WHERE user_login = ?", u.Login)
	if err != nil {
		return 0, err
	}
	if len(rows) != 1 {
		return 0, fmt.Errorf("the form said it added the user, but wp_users has %d rows for it", len(rows))
	}
	return strconv.Atoi(rows[0][0])
}

func get(ctx context.Context, c *http.Client, u string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, "", err
	}
	status, body, _, err := do(c, req)
	return status, body, err
}

func post(ctx context.Context, c *http.Client, u string, form url.Values) (status int, body, location string, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(form.Encode()))
	if err != nil {
		return 0, "", "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return do(c, req)
}

func do(c *http.Client, req *http.Request) (status int, body, location string, err error) {
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return 0, "", "", fmt.Errorf("%s %s: %w", req.Method, req.URL, err)
	}
	return resp.StatusCode, string(b), resp.Header.Get("Location"), nil
}

var (
	errorBlock = regexp.MustCompile(`(?s)<(?:div|p)[^>]*(?:id="login_error"|class="[^"]*(?:error|notice-error|wp-die-message)[^"]*")[^>]*>(.*?)</(?:div|p)>`)
	tags       = regexp.MustCompile(`<[^>]+>`)
	spaces     = regexp.MustCompile(`\s+`)
)

// pageError returns the error message of a WordPress page (a form's error
// notice, wp_die's message), or the start of its text.
func pageError(body string) string {
	text := body
	if m := errorBlock.FindStringSubmatch(body); m != nil {
		text = m[1]
	}
	text = strings.TrimSpace(spaces.ReplaceAllString(html.UnescapeString(tags.ReplaceAllString(text, " ")), " "))
	if len(text) > 300 {
		text = text[:300] + "..."
	}
	return text
}
