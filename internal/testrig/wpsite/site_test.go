package wpsite

import (
	"context"
	"errors"
	"fmt"
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

func TestSite(t *testing.T) {
	start := time.Now()
	site := shared.Site(t)
	t.Logf("Start took %v", time.Since(start))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	if site.URL() != proxy.URL() || site.Origin() == proxy.URL() {
		t.Errorf("URL(), Origin() = %q, %q; want the proxy's %q, and PHP's", site.URL(), site.Origin(), proxy.URL())
	}
	if home, err := site.Option(ctx, "home"); err != nil || home != proxy.URL() {
		t.Errorf("option home = %q, %v; want %q", home, err, proxy.URL())
	}
	if reqs := proxy.Requests(); len(reqs) == 0 || reqs[0].URI != "/wp-admin/install.php?step=2" {
		t.Errorf("the proxy saw %+v first, want the install", reqs)
	}
	for _, u := range Users {
		if site.UserID(u.Login) == 0 {
			t.Errorf("UserID(%q) = 0", u.Login)
		}
	}

	t.Run("SQL", func(t *testing.T) {
		const title = `A "quoted" title's \ backslash`
		id, err := site.InsertPost(ctx, Post{Author: Alice.Login, Title: title, Content: "<p>hello</p>"})
		if err != nil {
			t.Fatal(err)
		}
		n, err := site.CountPublished(ctx, title)
		if err != nil || n != 1 {
			t.Fatalf("CountPublished = %d, %v; want 1", n, err)
		}
		author, err := site.Count(ctx, "SELECT post_author FROM wp_posts WHERE ID = ?", id)
		if err != nil || author != site.UserID(Alice.Login) {
			t.Errorf("post_author = %d, %v; want %d", author, err, site.UserID(Alice.Login))
		}
		if err := site.SetOption(ctx, "comment_moderation", "1"); err != nil {
			t.Fatal(err)
		}
		if v, err := site.Option(ctx, "comment_moderation"); err != nil || v != "1" {
			t.Errorf("Option(comment_moderation) = %q, %v; want 1", v, err)
		}
		if err := site.SetPreferences(ctx, Alice.Login, "core/edit-post", map[string]any{"welcomeGuide": false}); err != nil {
			t.Fatal(err)
		}
		got, err := site.PHP(ctx, `global $wpdb; $p = get_user_meta( 2, $wpdb->get_blog_prefix() . 'persisted_preferences', true ); echo json_encode( $p['core/edit-post'] );`)
		if err != nil || got != `{"welcomeGuide":false}` {
			t.Errorf("persisted preferences = %q, %v; want {\"welcomeGuide\":false}", got, err)
		}
	})

	t.Run("SignIn", func(t *testing.T) {
		b := browsertest.Launch(t)
		tab, err := b.NewTab(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		if err := site.SignIn(ctx, tab, Alice.Login, Alice.Password); err != nil {
			t.Fatal(err)
		}
		name, err := tab.Text(ctx, AdminBarDisplayName)
		if err != nil || name != Alice.DisplayName() {
			t.Errorf("admin bar display name = %q, %v; want %q", name, err, Alice.DisplayName())
		}
		login, err := tab.Text(ctx, AdminBarUsername)
		if err != nil || login != Alice.Login {
			t.Errorf("admin bar username = %q, %v; want %q", login, err, Alice.Login)
		}
		// Carol's display name is her login: the menu leaves .username out.
		if _, err := tab.Navigate(ctx, site.URL()+"/wp-login.php?action=logout"); err != nil {
			t.Fatal(err)
		}
		if err := site.SignIn(ctx, tab, Carol.Login, "wrong password"); err == nil || !strings.Contains(err.Error(), "refused") {
			t.Errorf("SignIn with a wrong password: %v, want a refusal", err)
		}
	})
}

// TestSignedOut runs a site of its own, without a front: PHP's server is
// the site. It starts with Twenty Twenty-One (WithTheme).
func TestSignedOut(t *testing.T) {
	site := ForTest(t, WithTheme(TwentyTwentyOne))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if site.URL() != site.Origin() {
		t.Errorf("URL() = %q, want Origin() %q", site.URL(), site.Origin())
	}
	b := browsertest.Launch(t)
	tab, err := b.NewTab(ctx, site.URL()+"/")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := SignedIn(ctx, tab); !errors.Is(err, ErrSignedOut) {
		t.Errorf("SignedIn on the signed-out home page: %v, want ErrSignedOut", err)
	}
	if got, err := site.Theme(ctx); err != nil || got != TwentyTwentyOne {
		t.Errorf("Theme() = %q, %v; want %q (WithTheme)", got, err, TwentyTwentyOne)
	}
	if n, err := tab.Count(ctx, `link[href*="/wp-content/themes/twentytwentyone/style.css"]`); err != nil || n != 1 {
		t.Errorf("the home page links Twenty Twenty-One's style.css %d times (%v), want once", n, err)
	}
}

// TestTheme switches the shared site to Twenty Twenty-One and back: the
// front page is drawn by the theme in use.
func TestTheme(t *testing.T) {
	site := shared.Site(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	front := func() string {
		t.Helper()
		_, body, err := get(ctx, httpClient(nil), site.URL()+"/")
		if err != nil {
			t.Fatal(err)
		}
		return body
	}
	if got, err := site.Theme(ctx); err != nil || got != Theme {
		t.Fatalf("Theme() = %q, %v; want %q", got, err, Theme)
	}
	if err := site.UseTheme(ctx, "twentytwenty"); err == nil || errors.Is(err, ErrNotInstalled) {
		t.Errorf("UseTheme of a theme wpsite does not know: %v, want an error that is not ErrNotInstalled", err)
	}
	t.Run("TwentyTwentyOne", func(t *testing.T) {
		site.ThemeForTest(t, TwentyTwentyOne)
		if got, err := site.Theme(ctx); err != nil || got != TwentyTwentyOne {
			t.Fatalf("Theme() = %q, %v; want %q", got, err, TwentyTwentyOne)
		}
		if body := front(); !strings.Contains(body, "/wp-content/themes/twentytwentyone/style.css") || !strings.Contains(body, `id="main" class="site-main"`) {
			t.Errorf("the front page is not Twenty Twenty-One's: %s", pageError(body))
		}
		// Switching again copies nothing and changes nothing.
		if err := site.UseTheme(ctx, TwentyTwentyOne); err != nil {
			t.Fatal(err)
		}
	})
	if got, err := site.Theme(ctx); err != nil || got != Theme {
		t.Fatalf("after the subtest, Theme() = %q, %v; want %q again", got, err, Theme)
	}
	if body := front(); !strings.Contains(body, "/wp-content/themes/twentytwentythree/") || strings.Contains(body, "/themes/twentytwentyone/") {
		t.Errorf("the front page is not Twenty Twenty-Three's again")
	}
}
