package wpsite

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/browserop/browserop/browser"
)

// The sign-in form of wp-login.php and the admin bar's account menu.
const (
	LoginUserSelector   = "#user_login"
	LoginPassSelector   = "#user_pass"
	LoginSubmitSelector = "#wp-submit"
	LoginErrorSelector  = "#login_error"
	// AdminBarDisplayName is the display name in the admin bar's account
	// menu (in the DOM on every page of a signed-in user, shown on hover).
	AdminBarDisplayName = "#wp-admin-bar-user-info .display-name"
	// AdminBarUsername is the login in the same menu, present only when it
	// differs from the display name.
	AdminBarUsername = "#wp-admin-bar-user-info .username"
)

// SignIn signs tab in to the site as login with pass through wp-login.php,
// as a person would: it fills the form, submits it once and checks that the
// admin bar of the page it lands on names login. The tab ends on that page
// (wp-admin/). A refused sign-in returns the page's error message.
func (s *Site) SignIn(ctx context.Context, tab *browser.Tab, login, pass string) error {
	if _, err := tab.Navigate(ctx, s.url+"/wp-login.php"); err != nil {
		return fmt.Errorf("sign %s in: %w", login, err)
	}
	if err := tab.WaitVisible(ctx, LoginUserSelector, 0); err != nil {
		return fmt.Errorf("sign %s in: %w", login, err)
	}
	// wp-login.php focuses and selects #user_login 200 ms after it loads:
	// should that land between the focus and the keystrokes of a field, the
	// text goes to the wrong one. The fields are read back and typed again
	// once; the focus happens only once.
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
	if who != login {
		return fmt.Errorf("sign %s in: the admin bar names %q", login, who)
	}
	return nil
}

// fillLogin types login and pass into the form and reports whether both
// fields hold them.
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

// ErrSignedOut is returned by SignedIn for a page without the admin bar's
// account menu: nobody is signed in (or the page is not WordPress's).
var ErrSignedOut = errors.New("no one is signed in")

// SignedIn returns the login of the user the admin bar of tab's page names:
// the .username of its account menu, or its .display-name when WordPress
// left the login out because the two are the same. A page without the menu
// returns ErrSignedOut.
func SignedIn(ctx context.Context, tab *browser.Tab) (string, error) {
	n, err := tab.Count(ctx, AdminBarDisplayName)
	if err != nil {
		return "", err
	}
	if n == 0 {
		return "", ErrSignedOut
	}
	sel := AdminBarDisplayName
	if n, err := tab.Count(ctx, AdminBarUsername); err != nil {
		return "", err
	} else if n > 0 {
		sel = AdminBarUsername
	}
	who, err := tab.Text(ctx, sel)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(who), nil
}
