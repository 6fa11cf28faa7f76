package browser

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/browserop/browserop/internal/atomicfile"
	"github.com/browserop/browserop/internal/procstat"
)

// networkPredictionNever is Chrome's value of the preference
// net.network_prediction_options that turns off preconnects and preloading
// ("Preload pages" off in Settings).
const networkPredictionNever = 2

// PrepareProfile makes a dedicated profile safe to drive before Chrome starts
// on it (Launch calls it; `browserop login` should too). It creates the
// directory 0700 and turns off network prediction in
// <dir>/Default/Preferences, keeping every other preference.
//
// Why: Chrome re-sends a request, a form POST included, when the connection
// it went out on closes before any response header and that connection was
// reused or opened speculatively (a preconnect). Preconnects make that
// likely on every submission; with them off, and with the "Connection: close"
// that owned tabs send, a submission goes out once. See
// docs/decisions/2026-11-30-browser-no-silent-resend.md.
//
// It must not run while Chrome uses the profile (Chrome would overwrite the
// file); it returns an error wrapping ErrConfig when the profile is locked by a
// running Chrome or its Preferences file is not JSON.
func PrepareProfile(dir string) error {
	abs, err := ensureProfileDir(dir)
	if err != nil {
		return err
	}
	if pid, ok := profileInUse(abs); ok {
		return errProfileInUse(abs, pid)
	}
	def := filepath.Join(abs, "Default")
	if err := os.MkdirAll(def, 0o700); err != nil {
		return fmt.Errorf("%w: prepare profile: %v", ErrConfig, err)
	}
	path := filepath.Join(def, "Preferences")
	prefs := map[string]any{}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("%w: prepare profile: %v", ErrConfig, err)
	default:
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber() // keep Chrome's 64-bit numbers exact
		if err := dec.Decode(&prefs); err != nil {
			return fmt.Errorf("%w: profile Preferences is not JSON (%v): start Chrome on the profile once, or remove the file", ErrConfig, err)
		}
	}
	netPrefs, _ := prefs["net"].(map[string]any)
	if netPrefs == nil {
		netPrefs = map[string]any{}
	}
	if n, ok := netPrefs["network_prediction_options"].(json.Number); ok && n.String() == strconv.Itoa(networkPredictionNever) {
		return nil
	}
	netPrefs["network_prediction_options"] = networkPredictionNever
	prefs["net"] = netPrefs
	out, err := json.Marshal(prefs)
	if err != nil {
		return fmt.Errorf("%w: prepare profile: %v", ErrConfig, err)
	}
	if err := atomicfile.Write(path, out, 0o600); err != nil {
		return fmt.Errorf("%w: prepare profile: %v", ErrConfig, err)
	}
	return nil
}

// profileInUse reads Chrome's SingletonLock (a symlink to "host-pid") and
// reports whether a process with that pid runs on this host.
func profileInUse(dir string) (int, bool) {
	if runtime.GOOS == "windows" {
		return 0, false
	}
	target, err := os.Readlink(filepath.Join(dir, "SingletonLock"))
	if err != nil {
		return 0, false
	}
	i := strings.LastIndexByte(target, '-')
	if i < 0 {
		return 0, false
	}
	host, _ := os.Hostname()
	if target[:i] != host {
		return 0, false
	}
	pid, err := strconv.Atoi(target[i+1:])
	if err != nil || pid <= 0 {
		return 0, false
	}
	if !chromeAlive(pid, dir) {
		return 0, false
	}
	return pid, true
}

// errProfileInUse is the error for a profile that a running Chrome holds
// and browserop may not take over.
func errProfileInUse(dir string, pid int) error {
	return fmt.Errorf("%w: profile %s is in use by a running Chrome (pid %d): attach to it instead, or quit it first", ErrConfig, dir, pid)
}

// liveChromeOn reports whether pid is a running (not zombie or dead)
// process whose command line uses the profile dir: a pid that a crashed
// Chrome left as a zombie, or that another program reused, does not hold
// the profile.
func liveChromeOn(pid int, dir string) bool {
	state, _, exists := procstat.Read(pid)
	if !exists || procstat.Gone(state) {
		return false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return true // cannot tell: assume it is the profile's Chrome
	}
	abs, _ := filepath.Abs(dir)
	for _, arg := range strings.Split(string(cmdline), "\x00") {
		if v, ok := strings.CutPrefix(arg, "--user-data-dir="); ok {
			if va, err := filepath.Abs(v); err == nil && va == abs {
				return true
			}
			return false
		}
	}
	return false
}

// LaunchLockFileName is the file in the profile directory that a
// Persistent Launch locks from its last look at the profile until its
// Chrome is recorded, so that no two processes start Chrome on one profile
// at once: a second Chrome would hand off to the first and exit, its relay
// with it, and that start's cleanup race the first's. The lock goes with the
// process that holds it, a crash included.
const LaunchLockFileName = "browserop-launch.lock"

// launchLockWait bounds the wait for another process's launch on the same
// profile: its start, connection and record.
const launchLockWait = persistentStartLimit + 10*time.Second

// lockLaunch takes the profile's launch lock, waiting while another
// process launches Chrome on it.
func lockLaunch(ctx context.Context, profile string) (*launchLock, error) {
	path := filepath.Join(profile, LaunchLockFileName)
	deadline := time.Now().Add(launchLockWait)
	for {
		l, ok, err := tryLock(path)
		if err != nil {
			return nil, fmt.Errorf("%w: lock %s: %v", ErrConfig, LaunchLockFileName, err)
		}
		if ok {
			return l, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%w: another process has been launching Chrome on %s for over %v", ErrTimeout, profile, launchLockWait)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
