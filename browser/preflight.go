package browser

import (
	"fmt"
	"os"
	"path/filepath"
)

// Preflight finds, before anything is due, the configuration errors that
// Launch or Attach would otherwise meet only when a pass first needs the
// browser: a devtools_url that is not on loopback (attach mode); running as
// root without NoSandbox, and a profile held by a Chrome that browserop did
// not start (launch mode). Each error wraps ErrConfig and says what to
// change. persistent is whether the caller launches persistently (a Chrome
// a run left on the profile is then browserop's and fine).
func Preflight(cfg Config, persistent bool) error {
	if cfg.DevToolsURL != "" {
		if err := checkDevToolsURL(cfg.DevToolsURL); err != nil {
			return fmt.Errorf("%w; set browser.devtools_url to the address of a Chrome on this machine, e.g. http://127.0.0.1:9222", err)
		}
		return nil
	}
	if cfg.DevToolsActivePortFile != "" {
		return nil
	}
	if os.Geteuid() == 0 && !cfg.NoSandbox {
		return fmt.Errorf("%w: %w", ErrConfig, errRootSandbox)
	}
	if cfg.ProfileDir == "" {
		return nil // Launch says what is missing
	}
	abs, err := filepath.Abs(cfg.ProfileDir)
	if err != nil {
		return fmt.Errorf("%w: browser.profile_dir %q: %v", ErrConfig, cfg.ProfileDir, err)
	}
	pid, held := profileInUse(abs)
	if !held || persistent && ProfileRunning(abs) {
		return nil
	}
	return fmt.Errorf("%w: profile %s is in use by a Chrome that browserop did not start (pid %d): quit that Chrome, "+
		"or let browserop attach to it: start it with --remote-debugging-port=9222 and set browser.devtools_url: http://127.0.0.1:9222 "+
		"(or browser.devtools_active_port_file: %s)",
		ErrConfig, abs, pid, filepath.Join(abs, ActivePortFileName))
}
