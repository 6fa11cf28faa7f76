package wpsite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// WithTheme starts the site with the theme name (TwentyTwentyThree, the
// default, or TwentyTwentyOne) instead: installed with the default, then
// switched as UseTheme does. Start fails with an error wrapping
// ErrNotInstalled when the theme's package is missing.
func WithTheme(name string) Option { return func(c *config) { c.theme = name } }

// UseTheme makes name (TwentyTwentyThree or TwentyTwentyOne) the site's
// theme: it copies the theme from its Debian package into the site's
// private wp-content the first time, and sets WordPress's template and
// stylesheet options by SQL, as a person's Appearance > Themes > Activate
// sets them (without the hooks a theme may run once on activation: neither
// of these runs any). The next request WordPress serves uses it; a test
// that switches a shared site switches it back when it ends (ThemeForTest).
// It returns an error wrapping ErrNotInstalled when the theme's package is
// missing, and checks, through WordPress itself, that the theme is the one
// in use and has no errors.
func (s *Site) UseTheme(ctx context.Context, name string) error {
	if err := s.installTheme(name); err != nil {
		return err
	}
	for _, opt := range []string{"template", "stylesheet"} {
		if err := s.SetOption(ctx, opt, name); err != nil {
			return fmt.Errorf("wpsite: use theme %s: %w", name, err)
		}
	}
	got, err := s.activeTheme(ctx)
	if err != nil {
		return fmt.Errorf("wpsite: use theme %s: %w", name, err)
	}
	if got != name {
		return fmt.Errorf("wpsite: use theme %s: WordPress uses %q", name, got)
	}
	return nil
}

// Theme returns the theme the site uses: its stylesheet option.
func (s *Site) Theme(ctx context.Context) (string, error) {
	return s.Option(ctx, "stylesheet")
}

// installTheme copies name into the private wp-content unless it is there.
func (s *Site) installTheme(name string) error {
	s.themeMu.Lock()
	defer s.themeMu.Unlock()
	if _, err := os.Stat(filepath.Join(s.docroot, "wp-content", "themes", name, "style.css")); err == nil {
		return nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("wpsite: theme %s: %w", name, err)
	}
	dir, err := findTheme(name)
	if err != nil {
		return err
	}
	if err := copyTheme(s.docroot, name, dir); err != nil {
		return fmt.Errorf("wpsite: %w", err)
	}
	return nil
}

// activeTheme asks WordPress which theme it uses, and fails when its
// stylesheet and template differ (no child theme here) or the theme has
// errors (a missing template file, a broken style.css header).
func (s *Site) activeTheme(ctx context.Context) (string, error) {
	out, err := s.PHP(ctx, `$t = wp_get_theme();
echo json_encode( array( get_stylesheet(), get_template(), $t->exists(), $t->errors() ? $t->errors()->get_error_message() : '' ) );`)
	if err != nil {
		return "", err
	}
	var got []any
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &got); err != nil || len(got) != 4 {
		return "", fmt.Errorf("which theme: %q", out)
	}
	stylesheet, _ := got[0].(string)
	template, _ := got[1].(string)
	exists, _ := got[2].(bool)
	problem, _ := got[3].(string)
	switch {
	case !exists:
		return "", fmt.Errorf("the theme %q does not exist in wp-content", stylesheet)
	case problem != "":
		return "", fmt.Errorf("the theme %q: %s", stylesheet, problem)
	case template != stylesheet:
		return "", fmt.Errorf("the theme's stylesheet %q and template %q differ", stylesheet, template)
	}
	return stylesheet, nil
}
