package main

import (
	"fmt"
	"os"
	"path/filepath"
)

// DefaultConfigPath returns $XDG_CONFIG_HOME/browserop/config.yaml, or
// ~/.config/browserop/config.yaml when XDG_CONFIG_HOME is unset or not
// absolute, reading both variables from env (os.Environ form). It returns an
// error when neither variable is usable.
func DefaultConfigPath(env []string) (string, error) {
	dir, err := xdgDir(envLookup(env), "XDG_CONFIG_HOME", ".config")
	if err != nil {
		return "", fmt.Errorf("config: locate default config file: %w", err)
	}
	return filepath.Join(dir, "browserop", "config.yaml"), nil
}

// ProfileDir returns the Chrome profile directory: browser.profile_dir, or
// $XDG_STATE_HOME/browserop/profile (~/.local/state/browserop/profile). It
// returns an error when neither XDG_STATE_HOME nor HOME is set.
func (c Config) ProfileDir() (string, error) {
	return c.profileDir(os.Getenv)
}

func (c Config) profileDir(getenv func(string) string) (string, error) {
	return orStateFile(c.Browser.ProfileDir, getenv, "profile")
}

// TokenFile returns the API token file: api.token_file, or
// $XDG_STATE_HOME/browserop/token. It returns an error when neither
// XDG_STATE_HOME nor HOME is set.
func (c Config) TokenFile() (string, error) {
	return orStateFile(c.API.TokenFile, os.Getenv, "token")
}

// CalendarDir returns the content calendar directory: calendar.dir, or
// $XDG_CONFIG_HOME/browserop/calendar (~/.config/browserop/calendar). It
// returns an error when neither XDG_CONFIG_HOME nor HOME is set.
func (c Config) CalendarDir() (string, error) {
	return c.calendarDir(os.Getenv)
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
// calendar.media_dir, or the calendar directory (Config.CalendarDir). It
// returns an error when that is unset and neither XDG_CONFIG_HOME nor
// HOME is set.
func (c Config) MediaDir() (string, error) {
	return c.mediaDir(os.Getenv)
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
