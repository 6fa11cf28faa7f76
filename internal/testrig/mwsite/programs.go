package mwsite

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
// package the site needs is missing: MediaWiki with its Vector skin, or
// PHP with the extensions MediaWiki needs on SQLite (scripts/setup.sh
// --tests installs them).
var ErrNotInstalled = errors.New("mediawiki test site: not installed")

// MediaWikiDir is where Debian's mediawiki package installs MediaWiki. The
// package's configuration (/etc/mediawiki, /var/lib/mediawiki) is never
// read or written: every site has its own LocalSettings.php.
const MediaWikiDir = "/usr/share/mediawiki"

// phpExtensions are the PHP extensions the site needs and the Debian
// package of each: SQLite through PDO, ICU (MediaWiki 1.39 refuses to run
// without intl), multibyte strings and the DOM (php-xml has both xml and
// dom).
var phpExtensions = []struct{ name, pkg string }{
	{"pdo_sqlite", "php-sqlite3"},
	{"intl", "php-intl"},
	{"mbstring", "php-mbstring"},
	{"xml", "php-xml"},
	{"dom", "php-xml"},
}

// programs are the absolute paths of what the site runs.
type programs struct {
	php string
}

// findPrograms finds every program and package the site needs, or returns
// an error wrapping ErrNotInstalled that names each one missing.
func findPrograms(ctx context.Context) (programs, error) {
	var p programs
	var missing []string
	if path, err := exec.LookPath("php"); err == nil {
		p.php = path
	} else if st, err := os.Stat("/usr/bin/php"); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
		p.php = "/usr/bin/php"
	} else {
		missing = append(missing, "php (php-cli)")
	}
	for _, f := range []struct{ path, what string }{
		{filepath.Join(MediaWikiDir, "maintenance", "install.php"), "MediaWiki in " + MediaWikiDir + " (mediawiki)"},
		{filepath.Join(MediaWikiDir, "skins", "Vector", "skin.json"), "MediaWiki's Vector skin (mediawiki)"},
	} {
		if _, err := os.Stat(f.path); err != nil {
			missing = append(missing, f.what)
		}
	}
	if p.php != "" {
		// One PHP run prints the extensions that are not loaded.
		names := make([]string, len(phpExtensions))
		for i, e := range phpExtensions {
			names[i] = `"` + e.name + `"`
		}
		code := `foreach ([` + strings.Join(names, ", ") + `] as $e) { if (!extension_loaded($e)) { echo $e, "\n"; } }`
		out, err := exec.CommandContext(ctx, p.php, "-r", code).Output()
		if err != nil {
			return p, fmt.Errorf("mwsite: %s -r: %w", p.php, err)
		}
		seen := map[string]bool{}
		for _, name := range strings.Fields(string(out)) {
			for _, e := range phpExtensions {
				if e.name == name && !seen[e.pkg] {
					seen[e.pkg] = true
					missing = append(missing, "PHP's "+e.name+" extension ("+e.pkg+")")
				}
			}
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
