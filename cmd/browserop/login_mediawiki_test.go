package main

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/browser/browsertest"
	"github.com/browserop/browserop/bundled"
	"github.com/browserop/browserop/internal/testrig/faultproxy"
	"github.com/browserop/browserop/internal/testrig/mwsite"
	"github.com/browserop/browserop/sites"
)

// TestLoginLeavesAMediaWikiSignInAlone: while the person signs in to a
// MediaWiki, login's check of who is signed in sends the wiki nothing
// that could replace the new session with an anonymous one (a request
// with the cookie of before the sign-in, answered while its POST is in
// flight): it reads the person's own tab, and asks the wiki in a second
// tab only once that tab has been quiet. Checked here every 50ms, much
// more often than login does, the wiki (behind a proxy that logs every
// request) sees no request of login's own until login reports the
// sign-in, and the account is still signed in afterwards.
func TestLoginLeavesAMediaWikiSignInAlone(t *testing.T) {
	proxy, err := faultproxy.Start("")
	require.NoError(t, err)
	t.Cleanup(func() { proxy.Close() })
	site := mwsite.ForTest(t, mwsite.WithFront(proxy))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	alice := mwsite.User{Login: "alice", Password: "alice-wiki-pass"}
	require.NoError(t, site.CreateUser(ctx, alice.Login, alice.Password))
	raw, err := fs.ReadFile(bundled.Sites, "sites/mediawiki.yaml")
	require.NoError(t, err)
	y := strings.Replace(string(raw), "  - http://127.0.0.1:8080\n", "  - "+site.URL()+"\n", 1) + "\naccounts:\n  alice:\n    name: \"Alice\"\n"
	d, err := sites.Parse("mediawiki.yaml", []byte(y))
	require.NoError(t, err)

	b := browsertest.Launch(t)
	shown, err := b.NewTab(ctx, "about:blank")
	require.NoError(t, err)
	shown.SetActionTimeout(20 * time.Second)
	_, err = d.OpenLogin(ctx, shown)
	require.NoError(t, err)

	newTab := func(ctx context.Context) (*browser.Tab, error) { return b.NewTab(ctx, "about:blank") }
	type result struct {
		who string
		err error
	}
	done := make(chan result, 1)
	go func() {
		who, err := waitSignedIn(ctx, b, shown, d, newTab, 50*time.Millisecond)
		done <- result{who, err}
	}()
	time.Sleep(300 * time.Millisecond) // the checks are running
	require.NoError(t, site.SignIn(ctx, shown, alice.Login, alice.Password), "the person signs in")
	select {
	case r := <-done:
		require.NoError(t, r.err)
		require.Equal(t, "alice", r.who)
	case <-ctx.Done():
		t.Fatal("login never saw the sign-in")
	}
	for _, r := range proxy.Requests() {
		require.NotContains(t, r.URI, "Special:BlankPage", "login's own check reached the wiki during the sign-in: %s %s", r.Method, r.URI)
	}

	check, err := b.NewTab(ctx, "about:blank")
	require.NoError(t, err)
	check.SetActionTimeout(20 * time.Second)
	_, err = check.Navigate(ctx, site.PageURL("Special:BlankPage"))
	require.NoError(t, err)
	who, err := mwsite.SignedIn(ctx, check)
	if errors.Is(err, mwsite.ErrSignedOut) {
		t.Fatal("the sign-in was undone")
	}
	require.NoError(t, err)
	require.Equal(t, "Alice", who, "still signed in")
}
