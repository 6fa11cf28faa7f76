package config

import (
	"fmt"
	"path/filepath"
)

// DefaultPath returns $XDG_CONFIG_HOME/browserop/config.yaml, or
// ~/.config/browserop/config.yaml when XDG_CONFIG_HOME is unset or not
// absolute, reading both variables from env (os.Environ form). It returns an
// error when neither variable is usable.
func DefaultPath(env []string) (string, error) {
	dir, err := XDGConfigHome(env)
	if err != nil {
		return "", fmt.Errorf("config: locate default config file: %w", err)
	}
	return filepath.Join(dir, "browserop", "config.yaml"), nil
}

// XDGConfigHome returns $XDG_CONFIG_HOME of env (os.Environ form) when it
// is an absolute path (the XDG rules ignore a relative one), else
// $HOME/.config. It returns an error when neither variable is usable.
// browserop's config file and calendar are under it, and so is a systemd
// user unit.
func XDGConfigHome(env []string) (string, error) {
	return xdgDir(envLookup(env), "XDG_CONFIG_HOME", ".config")
}

// ProfileDir returns the Chrome profile directory: browser.profile_dir, or
// $XDG_STATE_HOME/browserop/profile (~/.local/state/browserop/profile),
// reading the variables from env (os.Environ form). It returns an error
// when neither XDG_STATE_HOME nor HOME is set.
func (c Config) ProfileDir(env []string) (string, error) {
	return c.profileDir(envLookup(env))
}

func (c Config) profileDir(getenv func(string) string) (string, error) {
	return orStateFile(c.Browser.ProfileDir, getenv, "profile")
}

// TokenFile returns the API token file: api.token_file, or
// $XDG_STATE_HOME/browserop/token, reading the variables from env
// (os.Environ form). It returns an error when neither XDG_STATE_HOME nor
// HOME is set.
func (c Config) TokenFile(env []string) (string, error) {
	return orStateFile(c.API.TokenFile, envLookup(env), "token")
}

// CalendarDir returns the content calendar directory: calendar.dir, or
// $XDG_CONFIG_HOME/browserop/calendar (~/.config/browserop/calendar),
// reading the variables from env (os.Environ form). It returns an error
// when neither XDG_CONFIG_HOME nor HOME is set.
func (c Config) CalendarDir(env []string) (string, error) {
	return c.calendarDir(envLookup(env))
}

func (c Config) calendarDir(getenv func(string) string) (string, error) {
	if c.Calendar.Dir != "" {
		return c.Calendar.Dir, nil
	}
	dir, err := xdgDir(getenv, "XDG_CONFIG_HOME", ".config")
	if err != nil {
		return "", fmt.Errorf("config: locate calendar directory: %w", err)
	}
	return filepath.Join(dir, "browserop", "calendar"), nil
}

// MediaDir returns the directory media files are read from:
// calendar.media_dir, or the calendar directory (Config.CalendarDir),
// reading the variables from env (os.Environ form). It returns an error
// when that is unset and neither XDG_CONFIG_HOME nor HOME is set.
func (c Config) MediaDir(env []string) (string, error) {
	return c.mediaDir(envLookup(env))
}

func (c Config) mediaDir(getenv func(string) string) (string, error) {
	if c.Calendar.MediaDir != "" {
		return c.Calendar.MediaDir, nil
	}
	return c.calendarDir(getenv)
}

func orStateFile(set string, getenv func(string) string, name string) (string, error) {
	if set != "" {
		return set, nil
	}
	dir, err := xdgDir(getenv, "XDG_STATE_HOME", filepath.Join(".local", "state"))
	if err != nil {
		return "", fmt.Errorf("config: locate %s: %w", name, err)
	}
	return filepath.Join(dir, "browserop", name), nil
}

// xdgDir returns $variable when it is an absolute path (the XDG spec says
// to ignore relative ones), else $HOME/fallback.
func xdgDir(getenv func(string) string, variable, fallback string) (string, error) {
	if d := getenv(variable); filepath.IsAbs(d) {
		return d, nil
	}
	home := getenv("HOME")
	if !filepath.IsAbs(home) {
		return "", fmt.Errorf("neither $%s nor $HOME is set to an absolute path", variable)
	}
	return filepath.Join(home, fallback), nil
}
