package mwsite

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/browserop/browserop/browser"
)

// The sign-in form of Special:UserLogin and the personal tools that name
// the signed-in user, the same in both skins.
const (
	LoginUserSelector   = "#wpName1"
	LoginPassSelector   = "#wpPassword1"
	LoginSubmitSelector = "#wpLoginAttempt"
	// LoginErrorSelector is the form's error box: "Incorrect username or
	// password entered."
	LoginErrorSelector = "#userloginForm .mw-message-box-error"
	// UserPageSelector is the link to the signed-in user's page among the
	// personal tools, its text the user's name (in Vector 2022 it sits in
	// the user menu's dropdown, in the DOM but hidden until opened). A
	// signed-out page has #pt-anonuserpage ("Not logged in") instead.
	UserPageSelector = "#pt-userpage a"
)

// SignIn signs tab in to the site as login with pass through
// Special:UserLogin, as a person would: it fills the form, submits it once
// and checks that the personal tools of the page it lands on (the main
// page) name login. A refused sign-in returns the form's error message.
func (s *Site) SignIn(ctx context.Context, tab *browser.Tab, login, pass string) error {
	if _, err := tab.Navigate(ctx, s.PageURL("Special:UserLogin")); err != nil {
		return fmt.Errorf("sign %s in: %w", login, err)
	}
	if err := tab.WaitVisible(ctx, LoginUserSelector, 0); err != nil {
		return fmt.Errorf("sign %s in: %w", login, err)
	}
	// The page's script may move the focus while the fields are typed
	// into: they are read back and typed again once.
	for attempt := 1; ; attempt++ {
		ok, err := fillLogin(ctx, tab, login, pass)
		if err != nil {
			return fmt.Errorf("sign %s in: %w", login, err)
		}
		if ok {
			break
		}
		if attempt == 2 {
			return fmt.Errorf("sign %s in: the form does not hold what was typed", login)
		}
	}
	if _, err := tab.ClickOnceAndWait(ctx, LoginSubmitSelector); err != nil {
		return fmt.Errorf("sign %s in: %w", login, err)
	}
	if n, err := tab.Count(ctx, LoginErrorSelector); err == nil && n > 0 {
		msg, _ := tab.Text(ctx, LoginErrorSelector)
		return fmt.Errorf("sign %s in: refused: %s", login, strings.TrimSpace(msg))
	}
	who, err := SignedIn(ctx, tab)
	if err != nil {
		return fmt.Errorf("sign %s in: %w", login, err)
	}
	if who != UserName(login) {
		return fmt.Errorf("sign %s in: the personal tools name %q", login, who)
	}
	return nil
}

// fillLogin types login and pass into the form and reports whether both
// fields hold them. (The name field may hold the last user's name, from
// the PREFIXUserName cookie: Fill replaces it.)
func fillLogin(ctx context.Context, tab *browser.Tab, login, pass string) (bool, error) {
	if _, err := tab.Fill(ctx, LoginUserSelector, login); err != nil {
		return false, err
	}
	if _, err := tab.Fill(ctx, LoginPassSelector, pass); err != nil {
		return false, err
	}
	for sel, want := range map[string]string{LoginUserSelector: login, LoginPassSelector: pass} {
		got, err := tab.Value(ctx, sel)
		if err != nil {
			return false, err
		}
		if got != want {
			return false, nil
		}
	}
	return true, nil
}

// ErrSignedOut is returned by SignedIn for a page without the link to the
// user's page: nobody is signed in (or the page is not MediaWiki's).
var ErrSignedOut = errors.New("no one is signed in")

// SignedIn returns MediaWiki's name of the user the personal tools of
// tab's page name (UserPageSelector's text). A page without them returns
// ErrSignedOut.
func SignedIn(ctx context.Context, tab *browser.Tab) (string, error) {
	n, err := tab.Count(ctx, UserPageSelector)
	if err != nil {
		return "", err
	}
	if n == 0 {
		return "", ErrSignedOut
	}
	who, err := tab.Text(ctx, UserPageSelector)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(who), nil
}
