package mwsite

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// dbName is the wiki's database: install.php keeps it in
// dir/data/browserop.sqlite, beside browserop_jobqueue.sqlite,
// browserop_l10n_cache.sqlite and wikicache.sqlite (the object cache:
// sessions, parsed pages).
const dbName = "browserop"

// User is an account of the test site, with its password.
type User struct {
	// Login is the name as typed; MediaWiki's name (UserName) has its
	// first letter capitalised.
	Login    string
	Password string
}

// Admin is the administrator install.php creates (groups sysop,
// bureaucrat, interface-admin; user 1). A sysop's password must have ten
// characters or more.
var Admin = User{Login: "Admin", Password: "admin-test-pass"}

// The docroot is not MediaWiki's tree: Debian's /usr/share/mediawiki has
// LocalSettings.php and images as symlinks into /etc/mediawiki and
// /var/lib/mediawiki, and MediaWiki looks for LocalSettings.php in the
// directory of its entry point (PHP resolves symlinks, so a symlink to
// index.php would find Debian's). So the docroot's entry points are small
// scripts that define MW_CONFIG_FILE, the site's own LocalSettings.php
// outside the docroot, and run MediaWiki's; its static files are
// symlinks, which PHP's server follows.

// entryPoints are MediaWiki's PHP entry points the docroot serves: pages,
// the action API, ResourceLoader, the REST API, the search description
// every page links. Uploads are off, so img_auth.php and thumb.php are not.
var entryPoints = []string{"index.php", "api.php", "load.php", "rest.php", "opensearch_desc.php"}

// staticDirs are the directories of MediaWiki's static files (the skin's
// images and fonts, the logo) linked into the docroot.
var staticDirs = []string{"resources", "skins"}

// buildDocroot makes the docroot at root, its entry points loading the
// LocalSettings.php at settings.
func buildDocroot(root, settings string) error {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return fmt.Errorf("docroot: %w", err)
	}
	for _, name := range entryPoints {
		text := "<?php\n" +
			"// Written by internal/testrig/mwsite: MediaWiki's " + name + " with the test site's own settings.\n" +
			"define( 'MW_CONFIG_FILE', " + phpString(settings) + " );\n" +
			"require " + phpString(filepath.Join(MediaWikiDir, name)) + ";\n"
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			return fmt.Errorf("docroot: %w", err)
		}
	}
	for _, name := range staticDirs {
		if err := os.Symlink(filepath.Join(MediaWikiDir, name), filepath.Join(root, name)); err != nil {
			return fmt.Errorf("docroot: %w", err)
		}
	}
	return nil
}

// install runs MediaWiki's command-line installer: SQLite databases in
// dir/data, the site at its URL with no script path, English, the Vector
// skin alone, Admin as administrator. It writes dir/LocalSettings.php,
// which it keeps in s.installed.
func (s *Site) install(ctx context.Context) error {
	for _, d := range []string{"data", "cache", "images", "tmp"} {
		if err := os.MkdirAll(filepath.Join(s.dir, d), 0o755); err != nil {
			return err
		}
	}
	// The password goes in a file, not on the command line.
	passFile := filepath.Join(s.dir, "admin-password")
	if err := os.WriteFile(passFile, []byte(Admin.Password), 0o600); err != nil {
		return err
	}
	defer os.Remove(passFile)
	args := []string{
		"--dbtype", "sqlite",
		"--dbpath", filepath.Join(s.dir, "data"),
		"--dbname", dbName,
		"--server", s.url,
		"--scriptpath", "",
		"--lang", "en",
		"--skins", "Vector",
		"--passfile", passFile,
		"--confpath", s.dir,
		Name, Admin.Login,
	}
	// install.php reads no LocalSettings.php (it defines its own
	// MW_CONFIG_CALLBACK), so --conf is not passed.
	out, err := s.runPHP(ctx, filepath.Join(MediaWikiDir, "maintenance", "install.php"), args, nil, false)
	_ = os.WriteFile(filepath.Join(s.dir, "install.log"), []byte(out), 0o644)
	if err != nil {
		return fmt.Errorf("install.php: %w", err)
	}
	b, err := os.ReadFile(s.settings)
	if err != nil {
		return fmt.Errorf("install.php wrote no LocalSettings.php: %w; it said: %s", err, lastLines(out, 10))
	}
	s.installed = string(b)
	return nil
}

// writeSettings writes LocalSettings.php: install.php's, then the test
// settings for the site's current URL.
func (s *Site) writeSettings() error {
	return os.WriteFile(s.settings, []byte(s.installed+s.testSettings()), 0o600)
}

// testSettings are what LocalSettings.php gets after install.php's
// settings: the site's address and URLs, its own directories, and
// MediaWiki kept quick, quiet, off the network and free of limits.
func (s *Site) testSettings() string {
	path := func(name string) string { return phpString(filepath.Join(s.dir, name)) }
	return `
# Appended by internal/testrig/mwsite: a throwaway MediaWiki for browserop's tests.

# The site's address is fixed (a proxy in front of PHP's server may own it),
# and its URLs are plain: /index.php?title=Foo_bar.
$wgServer = ` + phpString(s.url) + `;
$wgCanonicalServer = $wgServer;
$wgScriptPath = '';
$wgUsePathInfo = false;
$wgArticlePath = '/index.php?title=$1';
$wgCookiePrefix = ` + phpString(s.cookiePrefix) + `;
$wgCookieSecure = false;
$wgForceHTTPS = false;

# English, UTC, the skin asked for.
$wgLanguageCode = 'en';
$wgLocaltimezone = 'UTC';
$wgDefaultSkin = ` + phpString(s.skin) + `;

# Everything the wiki writes stays in the site's directory.
$wgCacheDirectory = ` + path("cache") + `;
$wgUploadDirectory = ` + path("images") + `;
$wgTmpDirectory = ` + path("tmp") + `;

# No mail: there is no MTA.
$wgEnableEmail = false;
$wgEnableUserEmail = false;
$wgEmailAuthentication = false;
$wgEmailConfirmToEdit = false;
$wgEnotifUserTalk = false;
$wgEnotifWatchlist = false;

# Nothing from the network: no Commons, no pingback, no external images,
# no DNS blacklists, and a quick failure for any HTTP request MediaWiki
# would make.
$wgUseInstantCommons = false;
$wgPingback = false;
$wgAllowExternalImages = false;
$wgEnableDnsBlacklist = false;
$wgHTTPTimeout = 2;
$wgHTTPConnectTimeout = 1;
$wgAsyncHTTPTimeout = 2;
$wgUseImageMagick = false;

# No uploads.
$wgEnableUploads = false;

# Caches: none in memory (there is no APCu or memcached), the object cache
# (sessions, parsed pages) in wikicache.sqlite, the localisation cache in
# files under cache/.
$wgMainCacheType = CACHE_NONE;
$wgSessionCacheType = CACHE_DB;
$wgParserCacheType = CACHE_DB;

# No limits: tests edit, sign in and fail to sign in quickly and often.
# (No extension is loaded, ConfirmEdit's captchas included.)
$wgRateLimits = [];
$wgPasswordAttemptThrottle = false;
$wgAccountCreationThrottle = 0;

# Jobs run at the end of requests, in the request itself.
$wgJobRunRate = 1;
$wgRunJobsAsync = false;

# A page is watched only when a user asks: not on creating or editing it.
$wgDefaultUserOptions['watchdefault'] = 0;
$wgDefaultUserOptions['watchcreations'] = 0;
$wgDefaultUserOptions['watchmoves'] = 0;
$wgDefaultUserOptions['watchdeletion'] = 0;
$wgDefaultUserOptions['watchrollback'] = 0;
$wgDefaultUserOptions['watchuploads'] = 0;

# Errors go to logs in the site's directory, and pages say what failed.
$wgShowExceptionDetails = true;
$wgDebugLogGroups['exception'] = ` + path("mw-exception.log") + `;
$wgDebugLogGroups['error'] = ` + path("mw-error.log") + `;
`
}

// maintenance runs MediaWiki's maintenance script name (such as
// "createAndPromote.php") with args and stdin (nil for none) on the site's
// settings, and returns what it printed.
func (s *Site) maintenance(ctx context.Context, name string, args []string, stdin io.Reader) (string, error) {
	script := filepath.Join(MediaWikiDir, "maintenance", name)
	// --conf names the site's LocalSettings.php; MW_CONFIG_FILE in the
	// environment (runPHP) does too, for any script that reads it.
	return s.runPHP(ctx, script, append([]string{"--conf", s.settings}, args...), stdin, true)
}

// Maintenance runs MediaWiki's maintenance script name ("edit.php",
// "runJobs.php", ...) with args on the site's database and settings, and
// returns what it printed (standard output and error). A failing script
// is an error with its last lines.
func (s *Site) Maintenance(ctx context.Context, name string, args ...string) (string, error) {
	if strings.ContainsAny(name, `/\`) {
		return "", fmt.Errorf("mwsite: maintenance script %q: a name in %s/maintenance, not a path", name, MediaWikiDir)
	}
	return s.maintenance(ctx, name, args, nil)
}

// runPHP runs the PHP script with args, in the site's directory, and
// returns its combined output. With config set, MW_CONFIG_FILE names the
// site's LocalSettings.php.
func (s *Site) runPHP(ctx context.Context, script string, args []string, stdin io.Reader, config bool) (string, error) {
	cmd := exec.CommandContext(ctx, s.progs.php, append([]string{
		"-d", "display_errors=stderr",
		"-d", "log_errors=0",
		"-d", "memory_limit=512M",
		script,
	}, args...)...)
	cmd.Dir = s.dir
	cmd.Env = phpEnv()
	if config {
		cmd.Env = append(cmd.Env, "MW_CONFIG_FILE="+s.settings)
	}
	cmd.Stdin = stdin
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s: %v: %s", filepath.Base(script), err, lastLines(out.String(), 10))
	}
	return out.String(), nil
}

// phpEnv is the environment of the site's PHP processes: the test's,
// without MediaWiki's own variables (MW_INSTALL_PATH, MW_CONFIG_FILE), so
// that a developer's setting cannot point the site at another wiki.
func phpEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MW_") {
			env = append(env, kv)
		}
	}
	return env
}

// ErrUserExists is returned by CreateUser for a name the wiki has already.
var ErrUserExists = errors.New("mwsite: the account exists")

// CreateUser adds the account login (MediaWiki's name is UserName(login))
// with password, in no group, through maintenance/createAndPromote.php. A
// password MediaWiki's policy refuses (too common, the name itself) is an
// error; an existing name is an error wrapping ErrUserExists.
func (s *Site) CreateUser(ctx context.Context, login, password string) error {
	// The password goes on the command line: test passwords are no secret,
	// and the script has no other way in.
	out, err := s.maintenance(ctx, "createAndPromote.php", []string{login, password}, nil)
	if err != nil {
		if strings.Contains(out, "Account exists") {
			return fmt.Errorf("create user %s: %w", login, ErrUserExists)
		}
		return fmt.Errorf("create user %s: %w", login, err)
	}
	return nil
}

// EditPage saves text as title's new revision as user with summary,
// through maintenance/edit.php: straight into the wiki, not through the
// editor, for pages a test needs before it starts. Text identical to the
// current revision saves nothing. A user the wiki does not have is added
// by edit.php, without a password; an IP address is refused.
func (s *Site) EditPage(ctx context.Context, user, title, text, summary string) error {
	args := []string{"--user", user, "--summary", summary, title}
	if _, err := s.maintenance(ctx, "edit.php", args, strings.NewReader(text)); err != nil {
		return fmt.Errorf("edit %s as %s: %w", title, user, err)
	}
	return nil
}

func get(ctx context.Context, c *http.Client, u string) (int, string, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, "", "", err
	}
	return do(c, req)
}

func post(ctx context.Context, c *http.Client, u string, form url.Values) (status int, body, location string, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(form.Encode()))
	if err != nil {
		return 0, "", "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return do(c, req)
}

func do(c *http.Client, req *http.Request) (status int, body, location string, err error) {
	req.Header.Set("User-Agent", "browserop-mwsite")
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return 0, "", "", fmt.Errorf("%s %s: %w", req.Method, req.URL, err)
	}
	return resp.StatusCode, string(b), resp.Header.Get("Location"), nil
}

var (
	errorBlock = regexp.MustCompile(`(?s)<(?:div|p)[^>]*class="[^"]*(?:mw-message-box-error|mw-message-box-warning|errorbox|error)[^"]*"[^>]*>(.*?)</(?:div|p)>`)
	tags       = regexp.MustCompile(`<[^>]+>`)
	spaces     = regexp.MustCompile(`\s+`)
)

// pageError returns the error message of a MediaWiki page (an error or
// warning box), or the start of its text.
func pageError(body string) string {
	text := body
	if m := errorBlock.FindStringSubmatch(body); m != nil {
		text = m[1]
	}
	text = strings.TrimSpace(spaces.ReplaceAllString(html.UnescapeString(tags.ReplaceAllString(text, " ")), " "))
	if len(text) > 300 {
		text = text[:300] + "..."
	}
	return text
}

// lastLines returns the last n lines of s, for error messages.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// phpString returns s as a single-quoted PHP string literal.
func phpString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
