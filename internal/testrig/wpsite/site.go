// Package wpsite runs a real WordPress for tests: Debian's WordPress 6.1
// with the twentytwentythree theme (or twentytwentyone: WithTheme,
// Site.UseTheme), on a private MariaDB reached through a
// Unix socket and PHP's built-in web server on loopback, installed through
// its own install form, with an administrator and two authors (alice and
// carol). Everything lives in one directory; nothing system-wide is
// started or changed.
//
// The site uses plain permalinks: a post is /?p=N, an author's archive
// /?author=N, the REST API /index.php?rest_route=/wp/v2/... (no router
// script, so /wp-json/ does not exist).
package wpsite

import (
	"context"
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

// Front is a server in front of WordPress, such as a faultproxy.Proxy:
// WordPress is installed at its URL (its siteurl and home), so that every
// link and redirect of the site goes through it, and Start points it at PHP's
// server.
type Front interface {
	// URL is the front's origin: http://127.0.0.1:PORT.
	URL() string
	// SetTarget makes the front forward to origin.
	SetTarget(origin string) error
}

// Option configures Start.
type Option func(*config)

type config struct {
	front   Front
	workers int
	title   string
	theme   string
}

// WithFront installs the site behind f: Site.URL is f's URL.
func WithFront(f Front) Option { return func(c *config) { c.front = f } }

// WithWorkers sets how many PHP processes serve requests at once (4 unless
// set): the block editor sends several REST requests together.
func WithWorkers(n int) Option { return func(c *config) { c.workers = n } }

// WithTitle sets the site's title ("browserop test site" unless set).
func WithTitle(title string) Option { return func(c *config) { c.title = title } }

// Site is a running WordPress. Its methods are safe for concurrent use.
type Site struct {
	dir     string
	docroot string
	url     string // the public origin: the front's, or PHP's
	origin  string // PHP's server
	title   string
	progs   programs
	db      *database
	php     *rig.Server
	sockDir string // a short directory for the socket, when dir's path is too long

	users map[string]int // login -> user ID

	themeMu sync.Mutex // held while a theme is copied into wp-content

	startLog strings.Builder // how long each step of Start took, in dir/wpsite.log

	closeOnce sync.Once
	closeErr  error
}

// Start creates, starts and installs a WordPress under dir (an empty
// directory the caller owns and removes after Close): a MariaDB data
// directory and server (dir/mysql, socket dir/mysql.sock), the docroot
// (dir/docroot), PHP's server on a free loopback port, the site installed
// through wp-admin/install.php with Admin, then Alice and Carol added
// through wp-admin/user-new.php. Logs are dir/*.log. It returns an error
// wrapping ErrNotInstalled when a package is missing; any other error
// leaves nothing running.
func Start(ctx context.Context, dir string, opts ...Option) (*Site, error) {
	cfg := config{workers: 4, title: "browserop test site", theme: Theme}
	for _, o := range opts {
		o(&cfg)
	}
	progs, err := findPrograms(ctx)
	if err != nil {
		return nil, err
	}
	if cfg.theme != Theme {
		if _, err := findTheme(cfg.theme); err != nil {
			return nil, err
		}
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("wpsite: %w", err)
	}
	s := &Site{dir: dir, docroot: filepath.Join(dir, "docroot"), title: cfg.title, progs: progs, users: map[string]int{}}
	began := time.Now()
	err = s.start(ctx, cfg)
	s.step("start", began, err)
	_ = os.WriteFile(filepath.Join(s.dir, "wpsite.log"), []byte(s.startLog.String()), 0o644)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("wpsite: %w", err)
	}
	return s, nil
}

func (s *Site) start(ctx context.Context, cfg config) error {
	socket := filepath.Join(s.dir, "mysql.sock")
	if len(socket) > 100 { // sun_path holds 108 bytes
		d, err := os.MkdirTemp("", "wpsite-sock-")
		if err != nil {
			return err
		}
		s.sockDir = d
		socket = filepath.Join(d, "mysql.sock")
	}
	dbPass := randomHex(12)
	// PHP's port is chosen before PHP binds it, so another process may take
	// it in between: then PHP fails to listen, and another port is tried.
	port, err := rig.FreePort()
	if err != nil {
		return err
	}
	s.setOrigin(port, cfg.front)

	// The copy of WordPress and the database's start overlap.
	copied := make(chan error, 1)
	go func() {
		copied <- buildDocroot(s.docroot, s.progs.theme, wpConfig(s.url, socket, dbPass))
	}()
	t := time.Now()
	s.db, err = startDatabase(ctx, s.progs, s.dir, socket, dbPass)
	s.step("database", t, err)
	cerr := <-copied
	s.step("database and docroot", t, cerr)
	if err == nil {
		err = cerr
	}
	if err != nil {
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
		if err := os.WriteFile(filepath.Join(s.docroot, "wp-config.php"), []byte(wpConfig(s.url, socket, dbPass)), 0o644); err != nil {
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
	t = time.Now()
	err = s.install(ctx)
	s.step("install", t, err)
	if err != nil || cfg.theme == Theme {
		return err
	}
	t = time.Now()
	err = s.UseTheme(ctx, cfg.theme)
	s.step("theme "+cfg.theme, t, err)
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
	srv, err := rig.StartPHP(ctx, s.progs.php, s.dir, s.docroot, port, workers, os.Environ())
	if err != nil {
		return err
	}
	s.php = srv
	return nil
}

// URL returns the site's origin, http://127.0.0.1:PORT without a trailing
// slash: the front's when the site has one.
func (s *Site) URL() string { return s.url }

// Origin returns PHP's server itself, behind any front. WordPress's links
// and redirects always name URL.
func (s *Site) Origin() string { return s.origin }

// Dir returns the directory the site lives in.
func (s *Site) Dir() string { return s.dir }

// Title returns the site's title.
func (s *Site) Title() string { return s.title }

// UserID returns the WordPress user ID of login, or 0 for no such user of
// the site's own.
func (s *Site) UserID(login string) int { return s.users[login] }

// Close stops PHP's server and MariaDB. It is safe to call more than once
// and returns the first call's error. It leaves the directory to its owner.
func (s *Site) Close() error {
	s.closeOnce.Do(func() {
		if s.php != nil {
			s.php.Stop(5 * time.Second)
		}
		if s.db != nil {
			s.db.srv.Stop(10 * time.Second)
		}
		if s.sockDir != "" {
			s.closeErr = os.RemoveAll(s.sockDir)
		}
	})
	return s.closeErr
}

// httpClient is a client that does not follow redirects: the install and
// admin forms answer with them, and their Location is checked.
func httpClient(jar http.CookieJar) *http.Client {
	return &http.Client{
		Jar:     jar,
		Timeout: 60 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}
