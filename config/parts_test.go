package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/budgets"
	"github.com/browserop/browserop/errcode"
	"github.com/browserop/browserop/operator"
)

// Every setting of a file reaches the configuration of the package it is
// for.
func TestPartsFromFile(t *testing.T) {
	t.Parallel()
	cfg, err := Load("testdata/custom.yaml", true, nil)
	require.NoError(t, err)

	bc, err := cfg.ForBrowser(nil)
	require.NoError(t, err)
	require.Equal(t, browser.Config{
		ExecPath:               "chromium",
		ProfileDir:             "/home/u/.local/state/browserop/profile-2",
		Headless:               false,
		DevToolsActivePortFile: "/home/u/.config/chromium/DevToolsActivePort",
		NoSandbox:              true,
		ActionTimeout:          30 * time.Second,
		ExtraFlags:             []string{"--disable-features=A,B", "--mute-audio"},
	}, bc)

	oc, err := cfg.ForOperator(nil)
	require.NoError(t, err)
	require.Equal(t, operator.Config{
		LeaseName:        "other-operator",
		LeaseTTL:         5 * time.Minute,
		Heartbeat:        time.Minute,
		Skew:             10 * time.Second,
		CalendarDir:      "/home/u/calendar",
		MediaDir:         "/home/u/calendar",
		Grace:            time.Hour,
		PublishLate:      true,
		QualityThreshold: 0.75,
		ActionTimeout:    30 * time.Second,
		Ceiling:          []string{"demo.test", "*.example.com"},
	}, oc)

	ac, err := cfg.ForAPI(nil)
	require.NoError(t, err)
	require.Equal(t, APIConfig{Addr: "[::1]:8080", TokenFile: "/run/user/1000/browserop/token", MaxBody: 4096}, ac)

	p, err := cfg.Policy()
	require.NoError(t, err)
	var social budgets.Limit
	for _, l := range p.Limits() {
		if l.Name == "social" {
			social = l
		}
	}
	require.ElementsMatch(t, []string{"reply", "like", "follow"}, social.Formats)
	require.Equal(t, 60, social.Max)
	require.Equal(t, DefaultGroupWindow, social.Window)
}

// Unset, the paths are the XDG locations of the environment given.
func TestPartsDefaultLocations(t *testing.T) {
	t.Parallel()
	env := []string{"HOME=/home/u", "XDG_STATE_HOME=/state"}
	cfg := Default()
	cfg.Calendar.MediaDir = "/srv/media"

	bc, err := cfg.ForBrowser(env)
	require.NoError(t, err)
	require.Equal(t, "/state/browserop/profile", bc.ProfileDir)
	require.True(t, bc.Headless)

	oc, err := cfg.ForOperator(env)
	require.NoError(t, err)
	require.Equal(t, "/home/u/.config/browserop/calendar", oc.CalendarDir)
	require.Equal(t, "/srv/media", oc.MediaDir)
	require.Equal(t, "browser-operator", oc.LeaseName)
	require.Nil(t, oc.BrowserRunning, "how the browser is reached is the caller's")
	require.False(t, oc.StopIdleBrowser)

	ac, err := cfg.ForAPI(env)
	require.NoError(t, err)
	require.Equal(t, "/state/browserop/token", ac.TokenFile)
	require.Equal(t, "127.0.0.1:7465", ac.Addr)
	require.Equal(t, "", cfg.API.TokenFile, "the configuration itself is unchanged")
}

// Without a HOME to put them under, the parts are configuration errors
// that say what is missing.
func TestPartsErrConfig(t *testing.T) {
	t.Parallel()
	cfg := Default()
	_, err := cfg.ForBrowser(nil)
	require.EqualError(t, err, "configuration error: config: locate profile: neither $XDG_STATE_HOME nor $HOME is set to an absolute path")
	require.ErrorIs(t, err, errcode.ErrConfig)

	_, err = cfg.ForOperator([]string{"XDG_STATE_HOME=/state"})
	require.EqualError(t, err, "configuration error: config: locate calendar directory: neither $XDG_CONFIG_HOME nor $HOME is set to an absolute path")
	require.ErrorIs(t, err, errcode.ErrConfig)

	_, err = cfg.ForAPI([]string{"XDG_CONFIG_HOME=/config"})
	require.EqualError(t, err, "configuration error: config: locate token: neither $XDG_STATE_HOME nor $HOME is set to an absolute path")
	require.ErrorIs(t, err, errcode.ErrConfig)

	cfg.Budgets.Groups["g"] = GroupBudget{Formats: []string{"retweet"}, Limit: 1, Window: time.Hour}
	_, err = cfg.Policy()
	require.ErrorIs(t, err, errcode.ErrConfig)
	require.ErrorContains(t, err, "retweet")
}
