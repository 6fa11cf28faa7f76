package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/errcode"
)

// What a command reports for a configuration it cannot use: a
// configuration error (exit 2), with the message it printed when the
// command layer wrapped these errors itself.
func TestLoadErrorsAreConfigErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(body), 0o600))
		return path
	}
	badKey := write("bad-key.yaml", "schedul: '@hourly'\n")
	badValue := write("bad-value.yaml", "log:\n  level: debug\nbrowser: {headless: maybe}\n")
	invalid := write("invalid.yaml", "api: {addr: '0.0.0.0:80'}\n")
	missing := filepath.Join(dir, "missing.yaml")
	tests := []struct {
		name     string
		path     string
		explicit bool
		env      []string
		want     string
	}{
		{"BadKey", badKey, true, nil, "configuration error: config: " + badKey + `:1: unknown key "schedul"; did you mean "schedule"?`},
		{"BadValue", badValue, true, nil, "configuration error: config: " + badValue + `:3: browser.headless: want true or false, got "maybe"`},
		{"Invalid", invalid, true, nil, `configuration error: config: api.addr: host must be a loopback address (127.0.0.1, ::1) or localhost, got "0.0.0.0"`},
		{"MissingExplicitFile", missing, true, nil, "configuration error: config: " + missing + ": file does not exist"},
		{"Directory", dir, true, nil, "configuration error: config: " + dir + ": not a regular file (a directory)"},
		{"BadEnv", missing, false, []string{"BROWSEROP_LOG_LEVL=debug"}, `configuration error: config: environment variable BROWSEROP_LOG_LEVL matches no config key; did you mean "BROWSEROP_LOG_LEVEL"?`},
		{"NoDefaultFile", "", false, nil, "configuration error: config: locate default config file: neither $XDG_CONFIG_HOME nor $HOME is set to an absolute path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Load(tt.path, tt.explicit, tt.env)
			require.EqualError(t, err, tt.want)
			require.ErrorIs(t, err, errcode.ErrConfig)
			require.Equal(t, errcode.ExitUsage, errcode.Of(err).Exit)
		})
	}
}

// A failed validation's problems stay reachable through Load's error.
func TestLoadValidationFieldErrors(t *testing.T) {
	t.Parallel()
	_, err := loadString(t, "log: {level: loud}\n")
	var fe *FieldError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, "log.level", fe.Field)
	require.ErrorIs(t, err, errcode.ErrConfig)
}

func TestFile(t *testing.T) {
	t.Parallel()
	env := []string{"HOME=/home/u", "BROWSEROP_CONFIG=/from/env.yaml"}
	tests := []struct {
		name         string
		flag         string
		env          []string
		want         string
		wantExplicit bool
	}{
		{"Flag", "/from/flag.yaml", env, "/from/flag.yaml", true},
		{"Env", "", env, "/from/env.yaml", true},
		{"EnvLastWins", "", append(env, "BROWSEROP_CONFIG=/later.yaml"), "/later.yaml", true},
		{"Default", "", []string{"HOME=/home/u"}, "/home/u/.config/browserop/config.yaml", false},
		{"DefaultXDG", "", []string{"HOME=/home/u", "XDG_CONFIG_HOME=/xdg"}, "/xdg/browserop/config.yaml", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path, explicit, err := File(tt.flag, tt.env)
			require.NoError(t, err)
			require.Equal(t, tt.want, path)
			require.Equal(t, tt.wantExplicit, explicit)
		})
	}

	t.Run("ErrConfig", func(t *testing.T) {
		t.Parallel()
		_, _, err := File("", []string{"HOME=relative"})
		require.EqualError(t, err, "configuration error: config: locate default config file: neither $XDG_CONFIG_HOME nor $HOME is set to an absolute path")
		require.True(t, errors.Is(err, errcode.ErrConfig))
	})
}

// The default file of File is what Load reads for no path: a missing one
// means the defaults, an explicit one must exist.
func TestFileThenLoad(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	env := []string{"HOME=" + home}
	path, explicit, err := File("", env)
	require.NoError(t, err)
	cfg, err := Load(path, explicit, env)
	require.NoError(t, err)
	require.Equal(t, Default(), cfg)

	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, []byte("schedule: '@hourly'\n"), 0o600))
	cfg, err = Load(path, explicit, env)
	require.NoError(t, err)
	require.Equal(t, "@hourly", cfg.Schedule)

	gone := filepath.Join(home, "gone.yaml")
	path, explicit, err = File("", append(env, "BROWSEROP_CONFIG="+gone))
	require.NoError(t, err)
	_, err = Load(path, explicit, env)
	require.EqualError(t, err, "configuration error: config: "+gone+": file does not exist")
}

func TestIsOverride(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"BROWSEROP_LOG_LEVEL":   true,
		"BROWSEROP_LEDGER_PATH": true,
		"BROWSEROP_CONFIG":      false,
		"BROWSEROP_CRASH_AT":    false,
		"BROWSEROP_PAUSE_AT":    false,
		"BROWSEROP_TEST_CHROME": false,
		"BROWSEROPX":            false,
		"PATH":                  false,
	} {
		require.Equal(t, want, IsOverride(name), name)
	}
}
