package wpsite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ErrNotInstalled is returned by Start and Installed when a program or
// package the site needs is missing: WordPress, its twentytwentythree theme,
// MariaDB, or PHP with mysqli (scripts/setup.sh --tests installs them); and
// by WithTheme's Start and UseTheme when the theme asked for is.
var ErrNotInstalled = errors.New("wordpress test site: not installed")

// WordPressDir is where Debian's wordpress package installs WordPress.
const WordPressDir = "/usr/share/wordpress"

// The themes a site can use, each from its Debian package: Twenty
// Twenty-Three (wordpress-theme-twentytwentythree), a block theme, and
// Twenty Twenty-One (wordpress-theme-twentytwentyone), a classic theme of
// PHP templates.
const (
	TwentyTwentyThree = "twentytwentythree"
	TwentyTwentyOne   = "twentytwentyone"
)

// Theme is the theme a site starts with unless WithTheme says otherwise:
// WordPress 6.1's default, Twenty Twenty-Three.
const Theme = TwentyTwentyThree

// themes are the themes a site can use: the file that shows the theme is
// installed (a block theme's theme.json; a classic theme has none, but
// every theme has a style.css) and the Debian package it comes from.
var themes = map[string]struct{ marker, pkg string }{
	TwentyTwentyThree: {"theme.json", "wordpress-theme-twentytwentythree"},
	TwentyTwentyOne:   {"style.css", "wordpress-theme-twentytwentyone"},
}

// themeDirs are where Debian puts a theme: the package's files, and the
// symlink into them in WordPress's default content directory.
func themeDirs(name string) []string {
	return []string{
		filepath.Join(WordPressDir, "wp-content", "themes", name),
		filepath.Join("/var/lib/wordpress/wp-content/themes", name),
	}
}

// findTheme returns the directory of the installed theme name, or an error
// wrapping ErrNotInstalled that names its package.
func findTheme(name string) (string, error) {
	t, ok := themes[name]
	if !ok {
		return "", fmt.Errorf("wpsite: unknown theme %q (use %s or %s)", name, TwentyTwentyThree, TwentyTwentyOne)
	}
	for _, d := range themeDirs(name) {
		if _, err := os.Stat(filepath.Join(d, t.marker)); err == nil {
			return d, nil
		}
	}
	return "", fmt.Errorf("%w: missing the %s theme (%s; run scripts/setup.sh --tests)", ErrNotInstalled, name, t.pkg)
}

// programs are the absolute paths of what the site runs.
type programs struct {
	mariadbd  string // the server
	installDB string // mariadb-install-db
	client    string // the mariadb command-line client
	php       string
	theme     string // the default theme's directory
}

// findPrograms finds every program and package the site needs, or returns
// an error wrapping ErrNotInstalled that names each one missing.
func findPrograms(ctx context.Context) (programs, error) {
	var p programs
	var missing []string
	find := func(out *string, what string, names ...string) {
		for _, n := range names {
			if path, err := exec.LookPath(n); err == nil {
				*out = path
				return
			}
			// mariadbd is in /usr/sbin, off a non-root PATH.
			for _, dir := range []string{"/usr/sbin", "/usr/bin"} {
				path := filepath.Join(dir, n)
				if st, err := os.Stat(path); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
					*out = path
					return
				}
			}
		}
		missing = append(missing, what)
	}
	find(&p.mariadbd, "mariadbd (mariadb-server)", "mariadbd", "mysqld")
	find(&p.installDB, "mariadb-install-db (mariadb-server)", "mariadb-install-db", "mysql_install_db")
	find(&p.client, "mariadb (mariadb-client)", "mariadb", "mysql")
	find(&p.php, "php (php-cli)", "php")
	if _, err := os.Stat(filepath.Join(WordPressDir, "wp-settings.php")); err != nil {
		missing = append(missing, "WordPress in "+WordPressDir+" (wordpress)")
	}
	if d, err := findTheme(Theme); err == nil {
		p.theme = d
	} else {
		missing = append(missing, "the "+Theme+" theme ("+themes[Theme].pkg+")")
	}
	if p.php != "" {
		cmd := exec.CommandContext(ctx, p.php, "-r", `exit(extension_loaded("mysqli") ? 0 : 1);`)
		if err := cmd.Run(); err != nil {
			missing = append(missing, "PHP's mysqli extension (php-mysql)")
		}
	}
	if len(missing) > 0 {
		return p, fmt.Errorf("%w: missing %s (run scripts/setup.sh --tests)", ErrNotInstalled, strings.Join(missing, ", "))
	}
	return p, nil
}

// Installed returns nil when everything the site needs is installed, else
// an error wrapping ErrNotInstalled that names what is missing.
func Installed(ctx context.Context) error {
	_, err := findPrograms(ctx)
	return err
}
