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
// MariaDB, or PHP with mysqli (scripts/setup.sh --tests installs them).
var ErrNotInstalled = errors.New("wordpress test site: not installed")

// WordPressDir is where Debian's wordpress package installs WordPress.
const WordPressDir = "/usr/share/wordpress"

// Theme is the theme the site uses, from Debian's
// wordpress-theme-twentytwentythree.
const Theme = "twentytwentythree"

// themeDirs are where Debian puts the theme: the package's files, and the
// symlink into them in WordPress's default content directory.
var themeDirs = []string{
	filepath.Join(WordPressDir, "wp-content", "themes", Theme),
	filepath.Join("/var/lib/wordpress/wp-content/themes", Theme),
}

// programs are the absolute paths of what the site runs.
type programs struct {
	mariadbd  string // the server
	installDB string // mariadb-install-db
	client    string // the mariadb command-line client
	php       string
	theme     string // the theme's directory
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
	for _, d := range themeDirs {
		if _, err := os.Stat(filepath.Join(d, "theme.json")); err == nil {
			p.theme = d
			break
		}
	}
	if p.theme == "" {
		missing = append(missing, "the "+Theme+" theme (wordpress-theme-twentytwentythree)")
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
