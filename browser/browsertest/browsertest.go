// Package browsertest launches headless Chromium for tests of browserop's
// packages. A test that needs a browser skips with a clear message when none
// is installed, except when the CI environment variable is set: CI installs
// one, so there the test fails.
package browsertest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/browserop/browserop/browser"
)

// Config returns the Config of a headless test browser on profile dir:
// sandbox off only when running as root (containers), a short action
// timeout, and /dev/shm left alone. DevToolsPort is set, so that a test
// can attach a second client (the person) through DevToolsActivePort; a
// test of what browserop's own launches expose clears it.
func Config(dir string) browser.Config {
	return browser.Config{
		ProfileDir:    dir,
		Headless:      true,
		NoSandbox:     os.Geteuid() == 0,
		ActionTimeout: 10 * time.Second,
		DevToolsPort:  true,
	}
}

// Executable returns the browser to test with. When there is none it skips
// tb, or fails it when CI is set.
func Executable(tb testing.TB) string {
	tb.Helper()
	p, err := browser.FindExecutable(os.Getenv("BROWSEROP_TEST_CHROME"))
	if err != nil {
		missing(tb, err)
	}
	return p
}

func missing(tb testing.TB, err error) {
	tb.Helper()
	if os.Getenv("CI") != "" {
		tb.Fatalf("browsertest: CI is set but no browser is usable: %v", err)
	}
	tb.Skipf("browsertest: skipping, no browser: %v", err)
}

// Launch starts a headless browser on a fresh temporary profile and closes
// it, and removes the profile, when the test ends. It skips tb when no
// browser is installed (fails under CI).
func Launch(tb testing.TB) *browser.Browser {
	tb.Helper()
	exe := Executable(tb)
	dir, err := os.MkdirTemp("", "browserop-test-profile-")
	if err != nil {
		tb.Fatalf("browsertest: %v", err)
	}
	cfg := Config(dir)
	cfg.ExecPath = exe
	b, err := launch(cfg)
	if err != nil {
		_ = RemoveAll(dir)
		tb.Fatalf("browsertest: launch: %v", err)
	}
	tb.Cleanup(func() {
		if err := b.Close(); err != nil {
			tb.Logf("browsertest: close: %v", err)
		}
		// A killed browser's helpers can write to the profile for a moment.
		if err := RemoveAll(dir); err != nil {
			tb.Errorf("%v", err)
		}
	})
	return b
}

func launch(cfg browser.Config) (*browser.Browser, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return browser.Launch(ctx, cfg)
}

// Shared is one browser for a whole test package, started in TestMain so
// that the tests of a package do not each pay for a browser start.
type Shared struct {
	b   *browser.Browser
	dir string
	err error
}

// Start launches the shared browser on a temporary profile. It never fails:
// an error is kept and reported by Browser to each test.
//
//	var shared *browsertest.Shared
//
//	func TestMain(m *testing.M) {
//		shared = browsertest.Start()
//		code := m.Run()
//		shared.Close()
//		os.Exit(code)
//	}
func Start() *Shared {
	s := &Shared{}
	exec, err := browser.FindExecutable(os.Getenv("BROWSEROP_TEST_CHROME"))
	if err != nil {
		s.err = err
		return s
	}
	s.dir, err = os.MkdirTemp("", "browserop-test-profile-")
	if err != nil {
		s.err = err
		return s
	}
	cfg := Config(s.dir)
	cfg.ExecPath = exec
	s.b, s.err = launch(cfg)
	return s
}

// Browser returns the shared browser, or skips tb when no browser is
// installed (fails under CI, or when the browser failed to start).
func (s *Shared) Browser(tb testing.TB) *browser.Browser {
	tb.Helper()
	if s.err != nil {
		if errors.Is(s.err, browser.ErrNoBrowser) {
			missing(tb, s.err)
		}
		tb.Fatalf("browsertest: shared browser: %v", s.err)
	}
	return s.b
}

// Close stops the shared browser and removes its profile.
func (s *Shared) Close() error {
	var err error
	if s.b != nil {
		err = s.b.Close()
	}
	if s.dir != "" {
		if rerr := RemoveAll(s.dir); rerr != nil && err == nil {
			err = rerr
		}
	}
	return err
}

// RemoveAll removes a profile directory, retrying for a few seconds while
// the last helper processes of a stopped browser let go of it.
func RemoveAll(dir string) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := os.RemoveAll(dir)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("browsertest: remove %s: %w", dir, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ForwardSocket forwards a loopback TCP port to the unix socket sock, as
// `ssh -L PORT:SOCKET` does, until the test ends, and returns the port's
// address (127.0.0.1:PORT).
func ForwardSocket(tb testing.TB, sock string) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("browsertest: %v", err)
	}
	tb.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				u, err := net.Dial("unix", sock)
				if err != nil {
					return
				}
				defer u.Close()
				go func() {
					_, _ = io.Copy(u, c)
					_ = u.(*net.UnixConn).CloseWrite()
				}()
				_, _ = io.Copy(c, u)
			}()
		}
	}()
	return ln.Addr().String()
}
