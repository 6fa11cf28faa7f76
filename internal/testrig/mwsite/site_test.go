package mwsite

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/browserop/browserop/browser/browsertest"
	"github.com/browserop/browserop/internal/testrig/faultproxy"
)

var _ Front = (*faultproxy.Proxy)(nil)

// The package's tests share one site, behind a fault proxy that passes
// everything, as the tests of other packages use it.
var (
	proxy  *faultproxy.Proxy
	shared *Shared
)

func TestMain(m *testing.M) {
	var err error
	proxy, err = faultproxy.Start("")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	shared = NewShared(WithFront(proxy))
	code := m.Run()
	if err := shared.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	proxy.Close()
	os.Exit(code)
}

// Alice is the user the shared site's tests add.
var alice = User{Login: "alice", Password: "alice-test-pass"}

func TestSite(t *testing.T) {
	start := time.Now()
	site := shared.Site(t)
	t.Logf("Start took %v", time.Since(start))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	if site.URL() != proxy.URL() || site.Origin() == proxy.URL() {
		t.Errorf("URL(), Origin() = %q, %q; want the proxy's %q, and PHP's", site.URL(), site.Origin(), proxy.URL())
	}
	if err := site.CreateUser(ctx, alice.Login, alice.Password); err != nil {
		t.Fatal(err)
	}

	t.Run("FrontPage", func(t *testing.T) {
		// Plain HTTP, no cookies: / redirects to the main page, at the
		// front's URL, and the page's absolute links name the front.
		c := httpClient(nil)
		status, _, loc, err := get(ctx, c, site.URL()+"/")
		if err != nil {
			t.Fatal(err)
		}
		if want := site.PageURL(MainPage); status != http.StatusMovedPermanently || loc != want {
			t.Errorf("GET / = %d to %q, want 301 to %q", status, loc, want)
		}
		status, body, _, err := get(ctx, c, site.PageURL(MainPage))
		if err != nil {
			t.Fatal(err)
		}
		if status != http.StatusOK || !strings.Contains(body, "MediaWiki has been installed") {
			t.Fatalf("GET the main page = %d: %s", status, pageError(body))
		}
		for _, want := range []string{
			`href="` + proxy.URL() + `/index.php?title=Main_Page`, // "Retrieved from"
			`"wgUserName":null`,
			`skin-vector-legacy`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("the main page lacks %s", want)
			}
		}
		if strings.Contains(body, site.Origin()) {
			t.Errorf("the main page names PHP's own origin %s", site.Origin())
		}
		seen := false
		for _, r := range proxy.Requests() {
			seen = seen || r.URI == "/index.php?title=Main_Page"
		}
		if !seen {
			t.Errorf("the proxy did not see the main page's request: %+v", proxy.Requests())
		}
	})

	t.Run("Users", func(t *testing.T) {
		se, err := site.SignInHTTP(ctx, alice.Login, alice.Password)
		if err != nil {
			t.Fatal(err)
		}
		if se.User() != "Alice" || UserName(alice.Login) != "Alice" {
			t.Errorf("User() = %q, UserName = %q; want Alice", se.User(), UserName(alice.Login))
		}
		names := map[string]bool{}
		for _, c := range se.Cookies() {
			names[c.Name] = true
		}
		if p := site.CookiePrefix(); !names[p+"_session"] || !names[p+"UserName"] {
			t.Errorf("the session's cookies are %v, want %s_session and %sUserName", names, p, p)
		}
		if _, err := site.SignInHTTP(ctx, Admin.Login, Admin.Password); err != nil {
			t.Errorf("the administrator: %v", err)
		}
		if _, err := site.SignInHTTP(ctx, alice.Login, "wrong password"); err == nil || !strings.Contains(err.Error(), "refused") {
			t.Errorf("a wrong password: %v, want a refusal", err)
		}
		if err := site.CreateUser(ctx, "Alice", "another-pass"); !errors.Is(err, ErrUserExists) {
			t.Errorf("CreateUser of an existing name: %v, want ErrUserExists", err)
		}
	})

	t.Run("Edits", func(t *testing.T) {
		const title = "Mwsite edit test"
		se, err := site.SignInHTTP(ctx, alice.Login, alice.Password)
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := site.PageExists(ctx, title); err != nil || ok {
			t.Fatalf("PageExists before the edit = %v, %v; want false", ok, err)
		}
		if _, err := site.PageText(ctx, title); !errors.Is(err, ErrNoPage) {
			t.Errorf("PageText of no page: %v, want ErrNoPage", err)
		}
		res, err := se.Edit(ctx, title, "First ''text''.", "first")
		if err != nil {
			t.Fatal(err)
		}
		if !res.New || res.NewRevID == 0 {
			t.Errorf("the first edit answered %+v, want a new page", res)
		}
		counts := func(wantRevs, wantAlice, wantAdmin int, wantText string) {
			t.Helper()
			// Lower case and underscores name the same page.
			if ok, err := site.PageExists(ctx, "mwsite_edit test"); err != nil || !ok {
				t.Errorf("PageExists = %v, %v; want true", ok, err)
			}
			if text, err := site.PageText(ctx, title); err != nil || text != wantText {
				t.Errorf("PageText = %q, %v; want %q", text, err, wantText)
			}
			if n, err := site.RevisionCount(ctx, title); err != nil || n != wantRevs {
				t.Errorf("RevisionCount = %d, %v; want %d", n, err, wantRevs)
			}
			if n, err := site.RevisionsBy(ctx, title, alice.Login); err != nil || n != wantAlice {
				t.Errorf("RevisionsBy(alice) = %d, %v; want %d", n, err, wantAlice)
			}
			if n, err := site.RevisionsBy(ctx, title, Admin.Login); err != nil || n != wantAdmin {
				t.Errorf("RevisionsBy(Admin) = %d, %v; want %d", n, err, wantAdmin)
			}
		}
		counts(1, 1, 0, "First ''text''.")
		if _, err := se.Edit(ctx, title, "Second text.", "second"); err != nil {
			t.Fatal(err)
		}
		counts(2, 2, 0, "Second text.")
		// The same text again is a null edit.
		if res, err := se.Edit(ctx, title, "Second text.", "again"); err != nil || !res.NoChange || res.NewRevID != 0 {
			t.Errorf("the same text again: %+v, %v; want a null edit", res, err)
		}
		counts(2, 2, 0, "Second text.")
		if err := site.EditPage(ctx, Admin.Login, title, "Third, by the administrator.", "third"); err != nil {
			t.Fatal(err)
		}
		counts(3, 2, 1, "Third, by the administrator.")
		if n, err := site.RevisionCount(ctx, "Never written"); err != nil || n != 0 {
			t.Errorf("RevisionCount of no page = %d, %v; want 0", n, err)
		}
	})

	t.Run("Sections", func(t *testing.T) {
		const talk = "Talk:Mwsite section test"
		se, err := site.SignInHTTP(ctx, alice.Login, alice.Password)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := site.SectionCount(ctx, talk, "Question"); err != nil || n != 0 {
			t.Errorf("SectionCount of no page = %d, %v; want 0", n, err)
		}
		for _, h := range []string{"Question", "Another", "Question"} {
			if _, err := se.NewSection(ctx, talk, h, "Why? ~~~~"); err != nil {
				t.Fatal(err)
			}
		}
		for h, want := range map[string]int{"Question": 2, "Another": 1, "Missing": 0} {
			if n, err := site.SectionCount(ctx, talk, h); err != nil || n != want {
				t.Errorf("SectionCount(%q) = %d, %v; want %d", h, n, err, want)
			}
		}
		if n, err := site.RevisionsBy(ctx, "talk:mwsite section test", alice.Login); err != nil || n != 3 {
			t.Errorf("RevisionsBy on the talk page = %d, %v; want 3", n, err)
		}
	})

	t.Run("Watch", func(t *testing.T) {
		const title = "Mwsite watch test"
		if err := site.EditPage(ctx, Admin.Login, title, "Watch me.", ""); err != nil {
			t.Fatal(err)
		}
		se, err := site.SignInHTTP(ctx, alice.Login, alice.Password)
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := site.Watched(ctx, alice.Login, title); err != nil || ok {
			t.Fatalf("Watched before = %v, %v; want false", ok, err)
		}
		if err := se.Watch(ctx, title); err != nil {
			t.Fatal(err)
		}
		for _, tt := range []string{title, "Talk:" + title} {
			if ok, err := site.Watched(ctx, alice.Login, tt); err != nil || !ok {
				t.Errorf("Watched(%q) after watching = %v, %v; want true", tt, ok, err)
			}
		}
		if ok, err := site.Watched(ctx, Admin.Login, title); err != nil || ok {
			t.Errorf("Watched by Admin = %v, %v; want false", ok, err)
		}
		if err := se.Unwatch(ctx, title); err != nil {
			t.Fatal(err)
		}
		if ok, err := site.Watched(ctx, alice.Login, title); err != nil || ok {
			t.Errorf("Watched after unwatching = %v, %v; want false", ok, err)
		}
		if _, err := site.Watched(ctx, "Nobody here", title); err == nil {
			t.Errorf("Watched of no user: no error")
		}
	})

	t.Run("Anonymous", func(t *testing.T) {
		se, err := site.SignInHTTP(ctx, alice.Login, alice.Password)
		if err != nil {
			t.Fatal(err)
		}
		anon := site.Anonymous()
		if name, isAnon, err := anon.UserInfo(ctx); err != nil || !isAnon || name != "127.0.0.1" {
			t.Errorf("an anonymous session is %q (anon %v, %v), want anonymous 127.0.0.1", name, isAnon, err)
		}
		if name, isAnon, err := se.UserInfo(ctx); err != nil || isAnon || name != "Alice" {
			t.Errorf("Alice's session is %q (anon %v, %v), want Alice", name, isAnon, err)
		}
		page := "/index.php?title=" + MainPage
		for _, c := range []struct {
			who  *Session
			want string
		}{{anon, `"wgUserName":null`}, {se, `"wgUserName":"Alice"`}} {
			status, body, _, err := c.who.Get(ctx, page)
			if err != nil || status != http.StatusOK || !strings.Contains(body, c.want) {
				t.Errorf("GET %s as %q: %d, %v; want a page with %s", page, c.who.User(), status, err, c.want)
			}
		}
		// The anonymous session holds no cookie of Alice's.
		for _, c := range anon.Cookies() {
			for _, a := range se.Cookies() {
				if c.Name == a.Name && c.Value == a.Value || strings.HasSuffix(c.Name, "UserName") {
					t.Errorf("the anonymous session has the cookie %s=%s", c.Name, c.Value)
				}
			}
		}
	})

	t.Run("Browser", func(t *testing.T) {
		b := browsertest.Launch(t)
		tab, err := b.NewTab(ctx, site.PageURL(MainPage))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := SignedIn(ctx, tab); !errors.Is(err, ErrSignedOut) {
			t.Errorf("SignedIn on a signed-out page: %v, want ErrSignedOut", err)
		}
		if err := site.SignIn(ctx, tab, alice.Login, "wrong password"); err == nil || !strings.Contains(err.Error(), "refused") {
			t.Errorf("SignIn with a wrong password: %v, want a refusal", err)
		}
		if err := site.SignIn(ctx, tab, alice.Login, alice.Password); err != nil {
			t.Fatal(err)
		}
		if who, err := SignedIn(ctx, tab); err != nil || who != "Alice" {
			t.Errorf("SignedIn = %q, %v; want Alice", who, err)
		}
		// The edit form saves as the signed-in user and lands on the page.
		const title = "Mwsite browser test"
		if _, err := tab.Navigate(ctx, site.PageURL(title)+"&action=edit"); err != nil {
			t.Fatal(err)
		}
		for sel, text := range map[string]string{"#wpTextbox1": "Typed in Chrome.", "#wpSummary": "from the browser"} {
			if got, err := tab.Fill(ctx, sel, text); err != nil || got != text {
				t.Fatalf("fill %s: %q, %v", sel, got, err)
			}
		}
		if _, err := tab.ClickOnceAndWait(ctx, "#wpSave"); err != nil {
			t.Fatal(err)
		}
		if u, err := tab.URL(ctx); err != nil || u != site.PageURL(title) {
			t.Errorf("after saving the tab is at %q (%v), want %q", u, err, site.PageURL(title))
		}
		if n, err := site.RevisionsBy(ctx, title, alice.Login); err != nil || n != 1 {
			t.Errorf("RevisionsBy after the browser's save = %d, %v; want 1", n, err)
		}
		if text, err := site.PageText(ctx, title); err != nil || text != "Typed in Chrome." {
			t.Errorf("PageText after the browser's save = %q, %v", text, err)
		}
	})
}

// TestNoFront runs a site of its own, without a front (PHP's server is the
// site), with Vector 2022 and two workers.
func TestNoFront(t *testing.T) {
	start := time.Now()
	site := ForTest(t, WithSkin(SkinVector2022), WithWorkers(2))
	t.Logf("Start took %v", time.Since(start))
	if log, err := os.ReadFile(site.Dir() + "/mwsite.log"); err == nil {
		t.Logf("its steps:\n%s", log)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if site.URL() != site.Origin() {
		t.Errorf("URL() = %q, want Origin() %q", site.URL(), site.Origin())
	}
	if site.CookiePrefix() == shared.Site(t).CookiePrefix() {
		t.Errorf("two sites share the cookie prefix %q", site.CookiePrefix())
	}
	status, body, _, err := site.Anonymous().Get(ctx, "/index.php?title="+MainPage)
	if err != nil {
		t.Fatal(err)
	}
	if status != http.StatusOK || !strings.Contains(body, "skin-vector-2022") || !strings.Contains(body, `href="`+site.Origin()+`/index.php?title=Main_Page`) {
		t.Errorf("the main page (%d) is not Vector 2022's at %s: %s", status, site.Origin(), pageError(body))
	}
}

func TestStartRefusesUnknownSkin(t *testing.T) {
	if _, err := Start(context.Background(), t.TempDir(), WithSkin("monobook")); err == nil || errors.Is(err, ErrNotInstalled) {
		t.Errorf("Start with an unknown skin: %v, want an error that is not ErrNotInstalled", err)
	}
}

func TestTitles(t *testing.T) {
	for _, c := range []struct {
		in  string
		ns  int
		key string
	}{
		{"Foo bar", 0, "Foo_bar"},
		{"  foo__bar ", 0, "Foo_bar"},
		{"talk:foo bar", 1, "Foo_bar"},
		{"User talk:alice", 3, "Alice"},
		{"user_talk:Alice", 3, "Alice"},
		{"Browserop test wiki:About", 4, "About"},
		{"Project talk:About", 5, "About"},
		{"Image:X.png", 6, "X.png"},
		{"Notanamespace:x", 0, "Notanamespace:x"},
		{":Main Page", 0, "Main_Page"},
		{"élan", 0, "Élan"},
	} {
		ns, key, err := splitTitle(c.in)
		if err != nil || ns != c.ns || key != c.key {
			t.Errorf("splitTitle(%q) = %d, %q, %v; want %d, %q", c.in, ns, key, err, c.ns, c.key)
		}
	}
	for _, bad := range []string{"", "Talk:", "A [b]", "Special:Contributions/Alice"} {
		if _, _, err := splitTitle(bad); err == nil {
			t.Errorf("splitTitle(%q): no error", bad)
		}
	}
	if got := UserName("alice_b  c"); got != "Alice b c" {
		t.Errorf("UserName = %q", got)
	}
	if got := wikiURLEncode("Talk:Foo bar/B&c?"); got != "Talk:Foo_bar/B%26c%3F" {
		t.Errorf("wikiURLEncode = %q", got)
	}
}

func TestCountSections(t *testing.T) {
	text := "Intro\n== Question ==\nWhy?\n==Question==  \n=== Question ===\n== Question ===\n= Question =\n==Other==\n== Question"
	if n := countSections(text, " Question "); n != 2 {
		t.Errorf("countSections = %d, want 2", n)
	}
	if n := countSections(text, "Other"); n != 1 {
		t.Errorf("countSections(Other) = %d, want 1", n)
	}
}
