// Package mwsite runs a real MediaWiki for tests: Debian's MediaWiki 1.39
// with its Vector skin, on SQLite, served by PHP's built-in web server on
// loopback, installed with MediaWiki's own maintenance/install.php, with an
// administrator (Admin) and the users a test adds (CreateUser). Everything
// lives in one directory; nothing system-wide is started, read or changed:
// Debian's /etc/mediawiki and /var/lib/mediawiki stay untouched, since the
// site's entry points name its own LocalSettings.php.
//
// The site uses plain URLs: a page is /index.php?title=Foo_bar, an action
// /index.php?title=Foo_bar&action=edit, the action API /api.php (no path
// info, no short URLs, no router script).
package mwsite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/browserop/browserop/internal/testrig/rig"
)

// Front is a server in front of MediaWiki, such as a faultproxy.Proxy:
// MediaWiki is installed at its URL ($wgServer), so that every link and
// redirect of the site goes through it, and Start points it at PHP's
// server.
type Front interface {
	// URL is the front's origin: http://127.0.0.1:PORT.
	URL() string
	// SetTarget makes the front forward to origin.
	SetTarget(origin string) error
}

// The skins a site can use, both from the Vector skin of Debian's package:
// legacy Vector, which MediaWiki 1.39's installer makes the default, and
// Vector 2022, Wikipedia's.
const (
	SkinVector     = "vector"
	SkinVector2022 = "vector-2022"
)

// Skin is the skin a site uses unless WithSkin says otherwise: the one
// install.php picks, legacy Vector.
const Skin = SkinVector

// Name is the wiki's name ($wgSitename). Its project namespace is named
// after it: "Browserop test wiki:About".
const Name = "browserop test wiki"

// Option configures Start.
type Option func(*config)

type config struct {
	front   Front
	workers int
	skin    string
}

// WithFront installs the site behind f: Site.URL is f's URL.
func WithFront(f Front) Option { return func(c *config) { c.front = f } }

// WithWorkers sets how many PHP processes serve requests at once (4 unless
// set): a page has the browser load several load.php URLs together.
func WithWorkers(n int) Option { return func(c *config) { c.workers = n } }

// WithSkin sets the site's default skin: SkinVector (unless set) or
// SkinVector2022. A request can still ask for another with &useskin=.
func WithSkin(name string) Option { return func(c *config) { c.skin = name } }

// Site is a running MediaWiki. Its methods are safe for concurrent use.
type Site struct {
	dir          string
	docroot      string
	settings     string // LocalSettings.php, outside the docroot
	url          string // the public origin: the front's, or PHP's
	origin       string // PHP's server
	skin         string
	cookiePrefix string
	progs        programs
	php          *rig.Server
	db           *sql.DB // the wiki's SQLite database, read-only

	installed string // LocalSettings.php as install.php wrote it

	startLog strings.Builder // how long each step of Start took, in dir/mwsite.log

	closeOnce sync.Once
	closeErr  error
}

// Start creates, installs and starts a MediaWiki under dir (an empty
// directory the caller owns and removes after Close): install.php writes
// dir/LocalSettings.php, to which the test settings are appended, and the
// SQLite databases in dir/data; the docroot (dir/docroot) holds entry
// points that load that LocalSettings.php and symlinks to MediaWiki's
// static files; PHP's server serves it on a free loopback port. Logs are
// dir/*.log. It returns an error wrapping ErrNotInstalled when a package is
// missing; any other error leaves nothing running.
func Start(ctx context.Context, dir string, opts ...Option) (*Site, error) {
	cfg := config{workers: 4, skin: Skin}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.skin != SkinVector && cfg.skin != SkinVector2022 {
		return nil, fmt.Errorf("mwsite: unknown skin %q (use %s or %s)", cfg.skin, SkinVector, SkinVector2022)
	}
	progs, err := findPrograms(ctx)
	if err != nil {
		return nil, err
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("mwsite: %w", err)
	}
	s := &Site{
		dir:      dir,
		docroot:  filepath.Join(dir, "docroot"),
		settings: filepath.Join(dir, "LocalSettings.php"),
		skin:     cfg.skin,
		// Browsers keep cookies per host, not per port: every site on
		// 127.0.0.1 names its cookies differently.
		cookiePrefix: "mw" + randomHex(4),
		progs:        progs,
	}
	began := time.Now()
	err = s.start(ctx, cfg)
	s.step("start", began, err)
	_ = os.WriteFile(filepath.Join(s.dir, "mwsite.log"), []byte(s.startLog.String()), 0o644)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("mwsite: %w", err)
	}
	return s, nil
}

func (s *Site) start(ctx context.Context, cfg config) error {
	// PHP's port is chosen before PHP binds it, so another process may take
	// it in between: then PHP fails to listen, and another port is tried.
	port, err := rig.FreePort()
	if err != nil {
		return err
	}
	s.setOrigin(port, cfg.front)

	t := time.Now()
	err = buildDocroot(s.docroot, s.settings)
	s.step("docroot", t, err)
	if err != nil {
		return err
	}
	t = time.Now()
	err = s.install(ctx)
	s.step("install.php", t, err)
	if err != nil {
		return err
	}
	if err := s.writeSettings(); err != nil {
		return err
	}
	t = time.Now()
	for attempt := 1; ; attempt++ {
		err = s.startPHP(ctx, port, cfg.workers)
		if err == nil || attempt == 3 || !errors.Is(err, rig.ErrListen) {
			break
		}
		if port, err = rig.FreePort(); err != nil {
			return err
		}
		s.setOrigin(port, cfg.front)
		// Without a front, $wgServer names PHP's port.
		if err := s.writeSettings(); err != nil {
			return err
		}
	}
	s.step("php", t, err)
	if err != nil {
		return err
	}
	if cfg.front != nil {
		if err := cfg.front.SetTarget(s.origin); err != nil {
			return fmt.Errorf("front: %w", err)
		}
	}
	if s.db, err = openDB(filepath.Join(s.dir, "data", dbName+".sqlite")); err != nil {
		return err
	}
	// The first request fills the localisation cache (a second or so):
	// it is made here, straight to PHP, not by a test through the front.
	t = time.Now()
	err = s.warmUp(ctx)
	s.step("first page", t, err)
	return err
}

// step notes in the start log how long a step took and how it ended.
func (s *Site) step(name string, began time.Time, err error) {
	fmt.Fprintf(&s.startLog, "%s %s: %v", time.Now().Format(time.RFC3339Nano), name, time.Since(began).Round(time.Millisecond))
	if err != nil {
		fmt.Fprintf(&s.startLog, " (%v)", err)
	}
	s.startLog.WriteByte('\n')
}

func (s *Site) setOrigin(port int, front Front) {
	s.origin = "http://127.0.0.1:" + strconv.Itoa(port)
	s.url = s.origin
	if front != nil {
		s.url = front.URL()
	}
}

// startPHP starts PHP's built-in server on port, serving the docroot
// (rig.StartPHP).
func (s *Site) startPHP(ctx context.Context, port, workers int) error {
	srv, err := rig.StartPHP(ctx, s.progs.php, s.dir, s.docroot, port, workers, phpEnv())
	if err != nil {
		return err
	}
	s.php = srv
	return nil
}

// warmUp asks PHP's server for the main page and checks that MediaWiki
// draws it.
func (s *Site) warmUp(ctx context.Context) error {
	u := s.origin + "/index.php?title=" + MainPage
	status, body, _, err := get(ctx, httpClient(nil), u)
	if err != nil {
		return err
	}
	if status != http.StatusOK || !strings.Contains(body, `"wgPageName":"`+MainPage+`"`) {
		return fmt.Errorf("GET %s: status %d: %s; php errors: %s; mediawiki errors: %s", u, status, pageError(body),
			rig.Tail(filepath.Join(s.dir, "php-errors.log"), 1000), rig.Tail(filepath.Join(s.dir, "mw-exception.log"), 1000))
	}
	return nil
}

// MainPage is the title of the page install.php creates and / redirects to.
const MainPage = "Main_Page"

// URL returns the site's origin, http://127.0.0.1:PORT without a trailing
// slash: the front's when the site has one.
func (s *Site) URL() string { return s.url }

// Origin returns PHP's server itself, behind any front. MediaWiki's links
// and redirects always name URL.
func (s *Site) Origin() string { return s.origin }

// PageURL returns the address of title on the site, as MediaWiki writes
// it: URL/index.php?title=Foo_bar.
func (s *Site) PageURL(title string) string {
	return s.url + "/index.php?title=" + wikiURLEncode(title)
}

// Dir returns the directory the site lives in.
func (s *Site) Dir() string { return s.dir }

// Skin returns the site's default skin.
func (s *Site) Skin() string { return s.skin }

// CookiePrefix returns the prefix of the site's cookie names
// ($wgCookiePrefix): PREFIX_session, PREFIXUserName, PREFIXUserID. It is
// random, so that sites sharing 127.0.0.1 do not share cookies.
func (s *Site) CookiePrefix() string { return s.cookiePrefix }

// Close stops PHP's server and closes the database. It is safe to call more
// than once and returns the first call's error. It leaves the directory to
// its owner.
func (s *Site) Close() error {
	s.closeOnce.Do(func() {
		if s.php != nil {
			s.php.Stop(5 * time.Second)
		}
		if s.db != nil {
			s.closeErr = s.db.Close()
		}
	})
	return s.closeErr
}

// httpClient is a client that does not follow redirects: a save answers
// with one, and its Location is checked.
func httpClient(jar http.CookieJar) *http.Client {
	return &http.Client{
		Jar:     jar,
		Timeout: 60 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}
