package browser

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// DefaultActionTimeout is the deadline of one page action when
// Config.ActionTimeout is zero.
const DefaultActionTimeout = 15 * time.Second

// Config says which browser to drive and how. The zero value is not usable:
// Launch needs ProfileDir, Attach needs DevToolsURL, DevToolsActivePortFile or
// ProfileDir.
type Config struct {
	// ExecPath is the Chrome or Chromium executable for Launch. Empty means
	// FindExecutable looks for one.
	ExecPath string

	// ProfileDir is the dedicated user data directory (--user-data-dir).
	// Chrome 136 and later ignore remote debugging on the default profile, so
	// browserop always uses a profile of its own, which the person logs into
	// once. Launch creates it with mode 0700. Attach reads its
	// DevToolsActivePort file when no other address is given.
	ProfileDir string

	// Headless runs a launched browser without a window.
	Headless bool

	// Persistent is for Launch only: the launched Chrome outlives this
	// process, so that a tab the person opens in it is not lost when
	// browserop ends or crashes. Chrome starts detached, without the
	// parent-death signal, under a DevTools relay (relay.go) that holds
	// its pipe and takes clients of this uid only on SocketFileName in the
	// profile; Launch records its pid and startup tabs in
	// LaunchRecordFileName; a later Launch with Persistent reattaches to it.
	// The Browser is then Dedicated: Close stops Chrome, Disconnect leaves it
	// running, and the caller picks one by Browser.Others. Without it, the
	// launched Chrome dies with this process and with Close or Disconnect.
	Persistent bool

	// DevToolsURL is the DevTools address of a running browser for Attach:
	// http://127.0.0.1:9222 or a ws://127.0.0.1:9222/devtools/browser/...
	// URL. Only loopback addresses are accepted: DevTools has no
	// authentication.
	DevToolsURL string

	// DevToolsActivePortFile is the DevToolsActivePort file that a running
	// Chrome wrote (first line the port, second line the browser path). Empty
	// means ProfileDir/DevToolsActivePort.
	DevToolsActivePortFile string

	// ExtraFlags are more command line switches for a launched browser, as
	// "--name" or "--name=value". Switches that would weaken the guarantees
	// (see forbiddenFlags) are refused.
	ExtraFlags []string

	// DevToolsPort is for tests and the torture harness only (browserop's
	// configuration has no way to set it): a Launch without Persistent
	// also opens an ephemeral loopback DevTools port and writes
	// DevToolsActivePort, as a person's own Chrome started for attach mode
	// does, so that a test can play that person or attach a second client.
	// Without it a launched Chrome has no port at all (any local user could
	// reach one): chromedp drives it over its pipe.
	DevToolsPort bool

	// NoSandbox passes --no-sandbox. Chrome needs it when it runs as root,
	// for example in a container. Never set it for a person's desktop.
	NoSandbox bool

	// ActionTimeout is the deadline of each page action. Zero means
	// DefaultActionTimeout.
	ActionTimeout time.Duration
}

func (c Config) actionTimeout() time.Duration {
	if c.ActionTimeout > 0 {
		return c.ActionTimeout
	}
	return DefaultActionTimeout
}

// forbiddenFlags are switches browserop never passes, whoever asks.
var forbiddenFlags = map[string]string{
	// A reload after a POST would silently submit the form again.
	"disable-prompt-on-repost": "a reload would silently re-submit a form",
	// These swap the keychain for a mock store, which can log a real
	// profile out of every site.
	"password-store":    "it replaces the keychain and can log the profile out",
	"use-mock-keychain": "it replaces the keychain and can log the profile out",
	// browserop chooses the profile and the transport itself.
	"user-data-dir":            "set Config.ProfileDir instead",
	"remote-debugging-pipe":    "browserop drives its Chrome over the DevTools pipe itself",
	"remote-debugging-port":    "a DevTools port lets any local user drive the signed-in profile",
	"remote-debugging-address": "a DevTools port lets any local user drive the signed-in profile",
	"headless":                 "set Config.Headless instead",
	"no-sandbox":               "set Config.NoSandbox instead",
}

// parseFlag splits "--name=value" or "--name" into name and value.
func parseFlag(f string) (name string, value any, err error) {
	if !strings.HasPrefix(f, "--") || len(f) < 3 {
		return "", nil, fmt.Errorf("%w: extra flag %q: want --name or --name=value", ErrConfig, f)
	}
	name, v, hasValue := strings.Cut(f[2:], "=")
	if name == "" || strings.ContainsAny(name, " \t\n") {
		return "", nil, fmt.Errorf("%w: extra flag %q: bad name", ErrConfig, f)
	}
	if why, bad := forbiddenFlags[name]; bad {
		return "", nil, fmt.Errorf("%w: extra flag --%s is not allowed: %s", ErrConfig, name, why)
	}
	if !hasValue {
		return name, true, nil
	}
	return name, v, nil
}

// execCandidates are the names FindExecutable looks up on PATH, in order.
var execCandidates = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// macCandidates are the macOS application bundles FindExecutable tries.
var macCandidates = []string{
	"/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
	"/Applications/Chromium.app/Contents/MacOS/Chromium",
}

// FindExecutable returns the browser to launch: configured when it is not
// empty (a path, or a name looked up on PATH), else the first of chromium,
// chromium-browser, google-chrome and google-chrome-stable on PATH, else the
// macOS application paths. When none is found it returns an error wrapping
// ErrNoBrowser that says how to install one.
func FindExecutable(configured string) (string, error) {
	if configured != "" {
		p, err := exec.LookPath(configured)
		if err != nil {
			return "", fmt.Errorf("%w: browser.exec_path %q is not an executable: %v", ErrNoBrowser, configured, err)
		}
		return p, nil
	}
	for _, name := range execCandidates {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	if runtime.GOOS == "darwin" {
		for _, p := range macCandidates {
			if st, err := os.Stat(p); err == nil && !st.IsDir() {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("%w: no Chrome or Chromium found (looked for %s on PATH): install one (Debian/Ubuntu: apt-get install chromium; macOS: install Google Chrome) or set browser.exec_path",
		ErrNoBrowser, strings.Join(execCandidates, ", "))
}

// ensureProfileDir creates dir with mode 0700, or checks that an existing
// one is a directory that only its owner can read.
func ensureProfileDir(dir string) (string, error) {
	if dir == "" {
		return "", fmt.Errorf("%w: browser.profile_dir is empty: browserop needs a dedicated profile directory", ErrConfig)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("%w: browser.profile_dir %q: %v", ErrConfig, dir, err)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return "", fmt.Errorf("%w: create profile dir: %v", ErrConfig, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("%w: profile dir: %v", ErrConfig, err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("%w: browser.profile_dir %q is not a directory", ErrConfig, dir)
	}
	if st.Mode().Perm()&0o077 != 0 {
		// MkdirAll does not change an existing directory. The profile holds
		// the person's sessions, so tighten it rather than refuse.
		if err := os.Chmod(abs, 0o700); err != nil {
			return "", fmt.Errorf("%w: profile dir %q is readable by others and chmod failed: %v", ErrConfig, dir, err)
		}
	}
	return abs, nil
}

var errRootSandbox = errors.New("chrome refuses to run as root with its sandbox on: run browserop as a normal user, or set browser.no_sandbox in a container")
