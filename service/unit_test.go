package service

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/errcode"
)

// noProgram is the ExecFunc of a test in which no service manager program
// may run.
func noProgram(t *testing.T) ExecFunc {
	return func(_ context.Context, _ io.Writer, name string, args ...string) error {
		t.Errorf("ran %s %v", name, args)
		return errors.New("no program runs in this test")
	}
}

func TestNew(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	u, err := New("linux", []string{"HOME=" + home}, noProgram(t))
	require.NoError(t, err)
	require.Equal(t, filepath.Join(home, ".config", "systemd", "user", "browserop.service"), u.Path)
	require.Equal(t, "browserop.service", u.Name)
	require.Empty(t, u.LogFile)
	require.False(t, u.Launchd())

	u, err = New("linux", []string{"HOME=" + home, "XDG_CONFIG_HOME=/xdg"}, noProgram(t))
	require.NoError(t, err)
	require.Equal(t, "/xdg/systemd/user/browserop.service", u.Path)

	u, err = New("darwin", []string{"HOME=" + home}, noProgram(t))
	require.NoError(t, err)
	require.Equal(t, filepath.Join(home, "Library", "LaunchAgents", "com.browserop.serve.plist"), u.Path)
	require.Equal(t, "com.browserop.serve", u.Name)
	require.Equal(t, filepath.Join(home, "Library", "Logs", "browserop", "browserop.log"), u.LogFile)
	require.True(t, u.Launchd())
}

func TestNewErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		goos string
		env  []string
		want string
		is   error
	}{
		{"linux", []string{"HOME=relative"}, "configuration error: locate the systemd user unit directory: neither $XDG_CONFIG_HOME nor $HOME is set to an absolute path", errcode.ErrConfig},
		{"darwin", nil, "configuration error: $HOME is not set to an absolute path: it holds ~/Library/LaunchAgents", errcode.ErrConfig},
		{"windows", []string{"HOME=/home/u"}, "usage error: browserop service supports Linux (systemd) and macOS (launchd), not windows; run `browserop serve` under your own supervisor", errcode.ErrUsage},
	} {
		_, err := New(tc.goos, tc.env, noProgram(t))
		require.EqualError(t, err, tc.want, tc.goos)
		require.ErrorIs(t, err, tc.is, tc.goos)
		require.Equal(t, errcode.ExitUsage, errcode.Of(err).Exit)
	}
}

// The unit carries what decides browserop's paths, and nothing a test or
// the harness set for itself.
func TestSpec(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	u, err := New("darwin", []string{
		"HOME=" + home,
		"PATH=/usr/local/bin:/usr/bin",
		"XDG_STATE_HOME=/state",
		"XDG_CACHE_HOME=relative/ignored",
		"XDG_DATA_HOME=/data",
		"BROWSEROP_LOG_LEVEL=warn",
		"BROWSEROP_LOG_LEVEL=debug", // the later one wins, as in os.Environ
		"BROWSEROP_CONFIG=/named/by/the/flag/instead.yaml",
		"BROWSEROP_CRASH_AT=after-reserve",
		"BROWSEROP_TEST_CHROME=/usr/bin/chromium",
		"TERM=xterm",
	}, noProgram(t))
	require.NoError(t, err)
	s, err := u.Spec("config.yaml", "")
	require.NoError(t, err)
	require.Equal(t, thisBinary(t), s.Binary)
	wd, err := os.Getwd()
	require.NoError(t, err)
	require.Equal(t, []string{"serve", "--config", filepath.Join(wd, "config.yaml")}, s.Args, "the file in use, absolute")
	require.Equal(t, map[string]string{
		"PATH":                "/usr/local/bin:/usr/bin",
		"XDG_STATE_HOME":      "/state",
		"XDG_DATA_HOME":       "/data",
		"BROWSEROP_LOG_LEVEL": "debug",
	}, s.Env)
	require.Equal(t, u.LogFile, s.LogFile)

	s, err = u.Spec("", "/l/ledger.db")
	require.NoError(t, err)
	require.Equal(t, []string{"serve", "--ledger", "/l/ledger.db"}, s.Args, "no file in use: the service reads the default one")
}

// A file at the unit's path that browserop did not write is neither
// overwritten nor removed, and no service manager is asked anything.
func TestRefusesUnitItDidNotWrite(t *testing.T) {
	t.Parallel()
	for _, goos := range []string{"linux", "darwin"} {
		t.Run(goos, func(t *testing.T) {
			t.Parallel()
			u, err := New(goos, []string{"HOME=" + t.TempDir()}, noProgram(t))
			require.NoError(t, err)
			theirs := "[Service]\nExecStart=/opt/their/browserop serve\n"
			require.NoError(t, os.MkdirAll(filepath.Dir(u.Path), 0o755))
			require.NoError(t, os.WriteFile(u.Path, []byte(theirs), 0o644))

			done, err := u.Install(context.Background(), Spec{Binary: "/bin/browserop", Args: []string{"serve"}, LogFile: u.LogFile}, false)
			require.EqualError(t, err, fmt.Sprintf("configuration error: refusing to overwrite %s: browserop service install did not write it (it has no %q line); move it away first, or manage it yourself", u.Path, marker))
			require.ErrorIs(t, err, errcode.ErrConfig)
			require.Equal(t, Installed{}, done)

			removed, err := u.Uninstall(context.Background())
			require.ErrorContains(t, err, "refusing to remove "+u.Path)
			require.ErrorIs(t, err, errcode.ErrConfig)
			require.False(t, removed)

			data, err := os.ReadFile(u.Path)
			require.NoError(t, err)
			require.Equal(t, theirs, string(data))
		})
	}
}

func TestNothingInstalled(t *testing.T) {
	t.Parallel()
	u, err := New("linux", []string{"HOME=" + t.TempDir()}, noProgram(t))
	require.NoError(t, err)
	removed, err := u.Uninstall(context.Background())
	require.NoError(t, err)
	require.False(t, removed)
	st, err := u.Status(context.Background())
	require.NoError(t, err)
	require.Equal(t, Status{Path: u.Path}, st)
	require.NoFileExists(t, u.Path)
}

// A launchd agent's logs are its log file: the last n lines of it.
func TestLogsLaunchdFile(t *testing.T) {
	t.Parallel()
	u, err := New("darwin", []string{"HOME=" + t.TempDir()}, noProgram(t))
	require.NoError(t, err)
	var out bytes.Buffer
	err = u.Logs(context.Background(), &out, 2, false)
	require.ErrorIs(t, err, ErrNoLog)
	require.ErrorContains(t, err, u.LogFile)
	require.Empty(t, out.String())

	require.NoError(t, os.MkdirAll(filepath.Dir(u.LogFile), 0o700))
	require.NoError(t, os.WriteFile(u.LogFile, []byte("one\ntwo\nthree\n"), 0o600))
	require.NoError(t, u.Logs(context.Background(), &out, 2, false))
	require.Equal(t, "two\nthree\n", out.String())
	out.Reset()
	require.NoError(t, u.Logs(context.Background(), &out, 10, false))
	require.Equal(t, "one\ntwo\nthree\n", out.String())
}
