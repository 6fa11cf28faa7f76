package browser

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// ActivePortFileName is the file a Chrome started with a DevTools port writes
// in its user data directory.
const ActivePortFileName = "DevToolsActivePort"

// ReadActivePort parses a DevToolsActivePort file: the first line is the
// port, the second the browser's WebSocket path (/devtools/browser/<id>). It
// returns the loopback WebSocket URL of the browser.
func ReadActivePort(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("%w: read %s: %v (is Chrome running with --remote-debugging-port on this profile?)", ErrNoBrowser, filepath.Base(path), err)
	}
	return parseActivePort(data)
}

func parseActivePort(data []byte) (string, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	var lines []string
	for sc.Scan() && len(lines) < 2 {
		lines = append(lines, strings.TrimSpace(sc.Text()))
	}
	if len(lines) < 2 {
		return "", fmt.Errorf("%w: DevToolsActivePort: want a port line and a path line", ErrNoBrowser)
	}
	port, err := strconv.Atoi(lines[0])
	if err != nil || port < 1 || port > 65535 {
		return "", fmt.Errorf("%w: DevToolsActivePort: bad port %q", ErrNoBrowser, lines[0])
	}
	path := lines[1]
	if !strings.HasPrefix(path, "/devtools/browser/") || strings.ContainsAny(path, " ?#\\") {
		return "", fmt.Errorf("%w: DevToolsActivePort: bad browser path", ErrNoBrowser)
	}
	return "ws://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) + path, nil
}

// checkDevToolsURL accepts http(s) and ws(s) URLs on a loopback host only:
// the DevTools protocol has no authentication, and whoever reaches it owns
// every session of the profile.
func checkDevToolsURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%w: browser.devtools_url: %v", ErrConfig, err)
	}
	switch u.Scheme {
	case "http", "https", "ws", "wss":
	default:
		return fmt.Errorf("%w: browser.devtools_url %q: want http://127.0.0.1:PORT or ws://127.0.0.1:PORT/devtools/browser/ID", ErrConfig, scrubText(raw))
	}
	host := u.Hostname()
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%w: browser.devtools_url host %q is not loopback: DevTools has no authentication, so browserop only attaches on this machine", ErrConfig, host)
	}
	return nil
}

var (
	// Chrome's target, session and browser-context ids are 32 upper-case
	// hex digits.
	rawIDPattern = regexp.MustCompile(`\b[0-9A-F]{32}\b`)
	// The browser's WebSocket path carries a GUID that grants control.
	wsPathPattern = regexp.MustCompile(`/devtools/(browser|page)/[0-9A-Za-z-]+`)
)

// scrubText removes raw DevTools ids and WebSocket paths from a message.
func scrubText(s string) string {
	s = rawIDPattern.ReplaceAllStringFunc(s, ShortID)
	return wsPathPattern.ReplaceAllString(s, "/devtools/$1/…")
}

// scrub returns err with raw ids and DevTools paths removed from its text; it
// still matches the same errors with errors.Is and errors.As.
func scrub(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if clean := scrubText(msg); clean != msg {
		return &redacted{msg: clean, err: err}
	}
	return err
}
