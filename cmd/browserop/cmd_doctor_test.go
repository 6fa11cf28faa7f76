package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/browser/browsertest"
)

// TestDoctorMediaDir: doctor says where media files are read from, fails
// on a calendar.media_dir that is not there, and reads the calendar's
// media from it as every pass does.
func TestDoctorMediaDir(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	cfgDir := filepath.Join(c.dir, "config", "browserop")
	calDir := filepath.Join(cfgDir, "calendar")
	mediaDir := filepath.Join(c.dir, "media")
	require.NoError(t, os.MkdirAll(calDir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(calDir, "cal.yaml"), []byte(`entries:
  - id: pic
    site: demo
    actor: alice
    type: post
    at: 2099-01-01T10:00:00Z
    text: a picture
    media:
      - file: pic.png
        alt: A picture
`), 0o600))

	// Unset: the calendar directory, where pic.png is not.
	_, out, _ := c.run("doctor", "--no-browser")
	require.Contains(t, out, "ok   media      "+calDir+" (the calendar directory: calendar.media_dir is unset)")
	require.Contains(t, out, "FAIL calendar")
	require.Contains(t, out, `entry "pic": media[0] "pic.png": no such file or directory`)

	require.NoError(t, os.WriteFile(filepath.Join(cfgDir, "config.yaml"), []byte("calendar:\n  media_dir: "+mediaDir+"\n"), 0o600))
	code, out, _ := c.run("doctor", "--no-browser")
	require.Equal(t, 2, code, out)
	require.Contains(t, out, "FAIL media      "+mediaDir+" (calendar.media_dir): no such file or directory")
	require.Contains(t, out, "-> create it, or fix calendar.media_dir")

	require.NoError(t, os.Mkdir(mediaDir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(mediaDir, "pic.png"), []byte("\x89PNG\r\n\x1a\nrest"), 0o600))
	_, out, _ = c.run("doctor", "--no-browser")
	require.Contains(t, out, "ok   media      "+mediaDir+" (calendar.media_dir)")
	require.Contains(t, out, "ok   calendar   "+calDir+": 1 valid entries")
}

// In attach mode doctor warns that the person's Chrome answers any local
// user on its DevTools port, and says how to avoid it.
func TestDoctorAttachModeWarnsOfThePort(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	cfgDir := filepath.Join(c.dir, "config", "browserop")
	require.NoError(t, os.MkdirAll(cfgDir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(cfgDir, "config.yaml"), []byte("browser:\n  devtools_url: http://127.0.0.1:9/\n"), 0o600))
	_, out, _ := c.run("doctor", "--no-browser")
	require.Contains(t, out, "warn devtools   that Chrome's DevTools port answers any local user of this machine, not only you")
	require.Contains(t, out, "-> on a machine others can log in to, start that Chrome with its debugging port only while browserop runs")

	// In launch mode it says where the launched Chrome is reached, and that
	// nobody else can.
	browsertest.Executable(t)
	l := newCLI(t)
	_, out, _ = l.run("doctor", "--no-browser")
	require.Regexp(t, `ok   devtools   the Chrome browserop launches has no DevTools port: browserop reaches it through /\S+/browserop-devtools\.sock, which only your user can open`, out)
}
