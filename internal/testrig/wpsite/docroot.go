package wpsite

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The docroot is a copy of Debian's WordPress, not the tree itself: its
// wp-config.php reads /etc/wordpress/config-HOST.php, and symlinks into it
// do not work, because PHP resolves them: wp-load.php behind a symlink sets
// ABSPATH to /usr/share/wordpress/ and loads Debian's wp-config.php again,
// and wp-admin/admin.php finds wp-load.php through __DIR__. So every file is
// copied (60 MB, a fraction of a second), and a relative symlink of the
// package (into /usr/share/php and /usr/share/javascript) becomes an
// absolute one to the same file.

// skipTop are the entries of WordPressDir the docroot does not take: ours
// replace them (wp-config.php, wp-content) or nothing needs them.
var skipTop = map[string]bool{
	"wp-config.php":        true,
	"wp-config-sample.php": true,
	"wp-content":           true,
	".htaccess":            true, // a symlink to /etc/wordpress/htaccess, for Apache
}

// buildDocroot makes the docroot at root: WordPress, our wp-config.php
// (config), a private wp-content with the default theme (from its
// directory theme), an uploads directory and our must-use plugin.
func buildDocroot(root, theme, config string) error {
	entries, err := os.ReadDir(WordPressDir)
	if err != nil {
		return fmt.Errorf("docroot: %w", err)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return fmt.Errorf("docroot: %w", err)
	}
	for _, e := range entries {
		if skipTop[e.Name()] {
			continue
		}
		if err := copyTree(filepath.Join(WordPressDir, e.Name()), filepath.Join(root, e.Name())); err != nil {
			return fmt.Errorf("docroot: %w", err)
		}
	}
	content := filepath.Join(root, "wp-content")
	for _, d := range []string{"plugins", "themes", "uploads", "mu-plugins", "upgrade"} {
		if err := os.MkdirAll(filepath.Join(content, d), 0o755); err != nil {
			return fmt.Errorf("docroot: %w", err)
		}
	}
	if err := copyTheme(root, Theme, theme); err != nil {
		return fmt.Errorf("docroot: %w", err)
	}
	files := map[string]string{
		filepath.Join(root, "wp-config.php"):                       config,
		filepath.Join(content, "mu-plugins", "browserop-test.php"): muPlugin,
	}
	for path, text := range files {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			return fmt.Errorf("docroot: %w", err)
		}
	}
	return nil
}

// copyTheme copies the theme name from its directory dir (Debian's, maybe
// a symlink) into the docroot at root's private wp-content.
func copyTheme(root, name, dir string) error {
	from, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return fmt.Errorf("theme %s: %w", name, err)
	}
	if err := copyTree(from, filepath.Join(root, "wp-content", "themes", name)); err != nil {
		return fmt.Errorf("theme %s: %w", name, err)
	}
	return nil
}

// copyTree copies src (a file, a symlink or a directory) to dst, keeping
// permission bits. A relative symlink becomes an absolute one to what it
// names in src, so that it still resolves from dst.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(path), target)
			}
			return os.Symlink(target, to)
		case d.IsDir():
			info, err := d.Info()
			if err != nil {
				return err
			}
			return os.MkdirAll(to, info.Mode().Perm()|0o700)
		default:
			return copyFile(path, to)
		}
	})
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	info, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, info.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// wpConfig is the docroot's wp-config.php: the private database on socket,
// the site at url, and WordPress kept quick and off the network.
func wpConfig(url, socket, dbPass string) string {
	var keys strings.Builder
	for _, k := range []string{"AUTH_KEY", "SECURE_AUTH_KEY", "LOGGED_IN_KEY", "NONCE_KEY",
		"AUTH_SALT", "SECURE_AUTH_SALT", "LOGGED_IN_SALT", "NONCE_SALT"} {
		fmt.Fprintf(&keys, "define( '%s', %s );\n", k, phpString(randomHex(32)))
	}
	return `<?php
// Written by internal/testrig/wpsite: a throwaway WordPress for browserop's tests.
define( 'DB_NAME', ` + phpString(dbName) + ` );
define( 'DB_USER', ` + phpString(dbUser) + ` );
define( 'DB_PASSWORD', ` + phpString(dbPass) + ` );
// "localhost:<path>" makes mysqli use the Unix socket at <path>.
define( 'DB_HOST', ` + phpString("localhost:"+socket) + ` );
define( 'DB_CHARSET', 'utf8mb4' );
define( 'DB_COLLATE', '' );
$table_prefix = 'wp_';
` + keys.String() + `
// The site's address is fixed (a proxy in front of PHP's server may own it).
define( 'WP_HOME', ` + phpString(url) + ` );
define( 'WP_SITEURL', ` + phpString(url) + ` );
define( 'WP_DEFAULT_THEME', ` + phpString(Theme) + ` );

// Quick and quiet: no cron spawned over HTTP, no request leaves the machine,
// no updates, no plugin or theme installs (the must-use plugin blocks the
// rest: every HTTP request, mail, emoji and avatars from CDNs).
define( 'DISABLE_WP_CRON', true );
define( 'WP_HTTP_BLOCK_EXTERNAL', true );
define( 'AUTOMATIC_UPDATER_DISABLED', true );
define( 'WP_AUTO_UPDATE_CORE', false );
define( 'DISALLOW_FILE_MODS', true );
define( 'WP_ENVIRONMENT_TYPE', 'local' );

// PHP's own error log (php -d error_log) keeps errors; WP_DEBUG would add
// PHP 8.2's deprecation notices about WordPress 6.1.
define( 'WP_DEBUG', false );

if ( ! defined( 'ABSPATH' ) ) {
	define( 'ABSPATH', __DIR__ . '/' );
}
require_once ABSPATH . 'wp-settings.php';
`
}

// muPlugin is a must-use plugin (loaded on every request, the installer's
// too) that keeps the site off the network.
const muPlugin = `<?php
/*
 * Plugin Name: browserop test site
 * Description: Written by internal/testrig/wpsite. Keeps the test WordPress off the network.
 */

// No HTTP request leaves WordPress, not even one to itself: update checks,
// the pattern directory, loopback tests (the installer's permalink probe
// would otherwise wait on PHP's own server), oEmbed discovery, pings.
add_filter(
	'pre_http_request',
	function () {
		return new WP_Error( 'http_request_blocked', 'browserop test site: outgoing HTTP is disabled' );
	},
	0
);
add_filter( 'should_load_remote_block_patterns', '__return_false' );

// Mail is accepted and dropped: there is no MTA.
add_filter( 'pre_wp_mail', '__return_true' );

// The emoji script would load images from s.w.org.
remove_action( 'wp_head', 'print_emoji_detection_script', 7 );
remove_action( 'admin_print_scripts', 'print_emoji_detection_script' );
remove_action( 'wp_print_styles', 'print_emoji_styles' );
remove_action( 'admin_print_styles', 'print_emoji_styles' );
add_filter( 'emoji_svg_url', '__return_false' );

// Tests that post many comments as one user turn WordPress's comment flood
// check (one comment per 15 s) off with the option browserop_test_flood =
// "off", and on again (WordPress's default) to see it refuse.
add_action(
	'init',
	function () {
		if ( get_option( 'browserop_test_flood' ) === 'off' ) {
			remove_action( 'check_comment_flood', 'check_comment_flood_db', 10 );
		}
	}
);

// Tests that need WordPress to refuse an upload lower its limit with the
// option browserop_test_upload_limit (bytes): the block editor then refuses
// a larger file itself, as it does one over PHP's upload_max_filesize.
add_filter(
	'upload_size_limit',
	function ( $limit ) {
		$max = (int) get_option( 'browserop_test_upload_limit', 0 );
		return $max > 0 ? min( $limit, $max ) : $limit;
	}
);

// Tests that need the media library's newest item to be another upload
// than the one just made (another user's, made in between) set the option
// browserop_test_attachment_title: every upload is then titled so.
add_filter(
	'wp_insert_attachment_data',
	function ( $data ) {
		$title = (string) get_option( 'browserop_test_attachment_title', '' );
		if ( '' !== $title ) {
			$data['post_title'] = $title;
		}
		return $data;
	}
);

// Avatars stay in the page (img.avatar) but are WordPress's own blank image
// instead of one from gravatar.com.
add_filter(
	'get_avatar_url',
	function () {
		return includes_url( 'images/blank.gif' );
	}
);
`

// phpString returns s as a single-quoted PHP string literal.
func phpString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
