package browser_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/browser"
)

func TestTargetIDNeverPrints(t *testing.T) {
	raw := "8F1C2D3E4A5B6C7D8E9F0A1B2C3D4E5F"
	id := browser.TargetID(raw)
	for _, s := range []string{fmt.Sprint(id), fmt.Sprintf("%v %s %#v %+v", id, id, id, id), fmt.Sprintf("%v", browser.Target{ID: id})} {
		require.NotContains(t, s, raw)
	}
	require.Equal(t, raw, id.Raw())
	require.Equal(t, browser.ShortID(raw), id.String())
	require.True(t, strings.HasPrefix(id.String(), "tab-"))
	require.NotEqual(t, browser.ShortID(raw), browser.ShortID(raw+"0"))
}

func TestLooseURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"HTTP://Example.COM:80/a?b=2&a=1#frag", "http://example.com/a?a=1&b=2"},
		{"https://example.com:443", "https://example.com/"},
		{"https://user:pw@example.com:8443/p", "https://example.com:8443/p"},
		{"http://127.0.0.1:8080/p/17", "http://127.0.0.1:8080/p/17"},
		{"  http://[::1]:9/x ", "http://[::1]:9/x"},
		{"about:blank", "about:blank"},
		{"not a url", "not a url"},
	} {
		require.Equal(t, tc.want, browser.LooseURL(tc.in), tc.in)
	}
}

func TestOrigin(t *testing.T) {
	require.Equal(t, "http://127.0.0.1:8080", browser.Origin("http://127.0.0.1:8080/p/1?x#y"))
	require.Equal(t, "https://example.com", browser.Origin("HTTPS://EXAMPLE.com:443/"))
	require.Equal(t, "", browser.Origin("about:blank"))
	require.Equal(t, "", browser.Origin("chrome-error://chromewebdata/"))
}

func TestBindingHash(t *testing.T) {
	require.NotEqual(t, browser.BindingHash("ab", "c"), browser.BindingHash("a", "bc"))
	require.Equal(t, browser.BindingHash("a", "b"), browser.BindingHash("a", "b"))
	require.Len(t, browser.BindingHash(), 64)
}

func TestReadActivePort(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) string {
		p := filepath.Join(dir, "DevToolsActivePort")
		require.NoError(t, os.WriteFile(p, []byte(s), 0o600))
		return p
	}
	u, err := browser.ReadActivePort(write("9222\n/devtools/browser/abc-123\n"))
	require.NoError(t, err)
	require.Equal(t, "ws://127.0.0.1:9222/devtools/browser/abc-123", u)
	for _, bad := range []string{"", "9222\n", "x\n/devtools/browser/a", "70000\n/devtools/browser/a", "9222\n/evil", "9222\n/devtools/browser/a?x=1"} {
		_, err := browser.ReadActivePort(write(bad))
		require.ErrorIs(t, err, browser.ErrNoBrowser, "%q", bad)
	}
	_, err = browser.ReadActivePort(filepath.Join(dir, "missing"))
	require.ErrorIs(t, err, browser.ErrNoBrowser)
}

func TestAttachRefusesRemoteDevTools(t *testing.T) {
	for _, u := range []string{"http://10.0.0.5:9222", "ws://example.com:9222/devtools/browser/x", "ftp://127.0.0.1:9222"} {
		_, err := browser.Attach(t.Context(), browser.Config{DevToolsURL: u})
		require.ErrorIs(t, err, browser.ErrConfig, u)
	}
	_, err := browser.Attach(t.Context(), browser.Config{})
	require.ErrorIs(t, err, browser.ErrConfig)
}

func TestFindExecutable(t *testing.T) {
	_, err := browser.FindExecutable("/nonexistent/chrome")
	require.ErrorIs(t, err, browser.ErrNoBrowser)
	require.ErrorContains(t, err, "browser.exec_path")
	t.Setenv("PATH", t.TempDir())
	if _, err := browser.FindExecutable(""); err != nil {
		require.ErrorIs(t, err, browser.ErrNoBrowser)
		require.ErrorContains(t, err, "apt-get install chromium")
		require.ErrorContains(t, err, "browser.exec_path")
	}
}

func TestPrepareProfile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "profile")
	require.NoError(t, browser.PrepareProfile(dir))
	st, err := os.Stat(dir)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), st.Mode().Perm())
	p := filepath.Join(dir, "Default", "Preferences")
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	require.JSONEq(t, `{"net":{"network_prediction_options":2}}`, string(data))

	// Other preferences survive, numbers exactly.
	require.NoError(t, os.WriteFile(p, []byte(`{"profile":{"name":"Ada"},"big":13372036854775807,"net":{"other":true}}`), 0o600))
	require.NoError(t, browser.PrepareProfile(dir))
	data, err = os.ReadFile(p)
	require.NoError(t, err)
	require.JSONEq(t, `{"profile":{"name":"Ada"},"big":13372036854775807,"net":{"other":true,"network_prediction_options":2}}`, string(data))

	require.NoError(t, os.WriteFile(p, []byte(`{not json`), 0o600))
	err = browser.PrepareProfile(dir)
	require.True(t, errors.Is(err, browser.ErrConfig))
}

// TestPersistentCommandLine: the arguments of a persistent launch follow
// chromedp's rules for flags: an extra flag that names a default again
// keeps the default's place and takes its own value, once; a false bool is
// left out; the launch tag comes last. fetchLater is disabled, joined
// with the features an extra flag disables (Chrome reads one list).
func TestPersistentCommandLine(t *testing.T) {
	cfg := browser.Config{Headless: true, ExtraFlags: []string{"--window-size=800,600", "--lang=de"}}
	args, err := browser.PersistentCommandLine(cfg, "/p")
	require.NoError(t, err)
	require.Equal(t, []string{
		"--user-data-dir=/p", "--no-first-run", "--no-default-browser-check",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-breakpad",
		"--disable-features=FetchLaterAPI",
		"--headless", "--window-size=800,600", "--disable-gpu", "--mute-audio", "--lang=de",
		"--remote-debugging-pipe", "--browserop-persistent",
	}, args)

	args, err = browser.PersistentCommandLine(browser.Config{ExtraFlags: []string{"--disable-features=Translate"}}, "/p")
	require.NoError(t, err)
	require.Contains(t, args, "--disable-features=FetchLaterAPI,Translate")
	require.Equal(t, 1, slices.IndexFunc(args, func(a string) bool { return strings.HasPrefix(a, "--disable-features") })-slices.Index(args, "--disable-breakpad"), "once, in its place: %q", args)

	_, err = browser.PersistentCommandLine(browser.Config{ExtraFlags: []string{"--disable-prompt-on-repost"}}, "/p")
	require.ErrorIs(t, err, browser.ErrConfig)
}
