package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/storage"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/browser/browsertest"
)

// probeEnv makes this test binary a local attacker's probe (TestAttackerProbe).
const probeEnv = "BROWSEROP_TEST_PROBE_PROFILE"

// probeUser is the second local user the probe runs as.
const probeUser = "browserop-probe"

// probeReport is what a probe found, over all its looks.
type probeReport struct {
	Looks       int                   `json:"looks"`
	ChromeSeen  int                   `json:"chrome_seen"`     // looks while a Chrome ran on the profile
	Ports       map[string]*portReach `json:"ports,omitempty"` // DevTools ports it found, by port
	SocketErr   string                `json:"socket_err,omitempty"`
	SocketTries int                   `json:"socket_tries"` // looks that dialled the socket
	SocketOpen  bool                  `json:"socket_open"`
	Socket      portReach             `json:"socket"` // what it got through the socket
	PortFile    bool                  `json:"port_file"`
}

// portReach is what the probe got through one way in.
type portReach struct {
	Targets   int  `json:"targets"` // targets it could list
	Cookies   int  `json:"cookies"` // cookies it could read
	TabOpened bool `json:"tab_opened"`
}

func (p portReach) any() bool { return p.Targets > 0 || p.Cookies > 0 || p.TabOpened }

// reached reports whether the probe got into the Chrome on its profile:
// through its socket, its DevToolsActivePort file, or a DevTools port one
// of its processes listened on (owned, as the test saw from root). Other
// Chromes on the machine (other tests') may have ports of their own.
func (r probeReport) reached(owned map[int]bool) bool {
	if r.SocketOpen || r.Socket.any() || r.PortFile {
		return true
	}
	for port := range r.Ports {
		if n, _ := strconv.Atoi(port); owned[n] {
			return true
		}
	}
	return false
}

// TestAttackerProbe is not a test: run with probeEnv set (by runProbe, as
// another uid), it looks for a way into the Chrome on the profile, as a
// second local user would, until its stdin closes, and prints what it got.
func TestAttackerProbe(t *testing.T) {
	profile := os.Getenv(probeEnv)
	if profile == "" {
		t.Skip("the probe of TestLocalUserCannotDriveTheBrowser")
	}
	stop := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(stop)
	}()
	var rep probeReport
	for {
		probeOnce(profile, &rep)
		select {
		case <-stop:
			_ = json.NewEncoder(os.Stdout).Encode(rep)
			return
		case <-time.After(150 * time.Millisecond):
		}
	}
}

func probeOnce(profile string, rep *probeReport) {
	rep.Looks++
	if chromeOn(profile) {
		rep.ChromeSeen++
	}
	// The socket first: a look over every port may take long on a busy
	// machine, and each look must try the socket.
	sock := filepath.Join(profile, browser.SocketFileName)
	rep.SocketTries++
	if conn, err := net.DialTimeout("unix", sock, time.Second); err != nil {
		rep.SocketErr = err.Error()
	} else {
		// Connected: does anything answer?
		_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
		_, _ = conn.Write([]byte(`{"id":1,"method":"Target.getTargets"}` + "\x00"))
		if line, err := bufio.NewReader(conn).ReadString(0); err == nil && strings.Contains(line, "targetInfos") {
			rep.SocketOpen = true
		}
		conn.Close()
		if rep.SocketOpen {
			drive(func() (context.Context, context.CancelFunc) {
				return browser.NewRelayAllocator(context.Background(), profile)
			}, &rep.Socket)
		}
	}
	// Every TCP port listening on this machine that speaks DevTools.
	for port := range listeningPorts() {
		addr := "127.0.0.1:" + strconv.Itoa(port)
		c := http.Client{Timeout: time.Second}
		res, err := c.Get("http://" + addr + "/json/version")
		if err != nil {
			continue
		}
		var v map[string]string
		_ = json.NewDecoder(res.Body).Decode(&v)
		res.Body.Close()
		if v["webSocketDebuggerUrl"] == "" {
			continue
		}
		if rep.Ports == nil {
			rep.Ports = map[string]*portReach{}
		}
		key := strconv.Itoa(port)
		if rep.Ports[key] == nil {
			rep.Ports[key] = &portReach{}
		}
		readBrowser(v["webSocketDebuggerUrl"], rep.Ports[key])
	}
	if _, err := os.ReadFile(filepath.Join(profile, browser.ActivePortFileName)); err == nil {
		rep.PortFile = true
	}
}

// readBrowser does, on a Chrome's browser endpoint, what proves control
// without touching it: list the targets and read every cookie (HttpOnly
// ones included). It opens no tab: other tests' Chromes may listen on
// this machine, and a tab of the probe's would be foreign to them.
func readBrowser(wsURL string, rep *portReach) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, wsURL, nil)
	if err != nil {
		return
	}
	defer conn.CloseNow()
	conn.SetReadLimit(64 << 20)
	for id, method := range []string{"Target.getTargets", "Storage.getCookies"} {
		if err := conn.Write(ctx, websocket.MessageText, fmt.Appendf(nil, `{"id":%d,"method":%q}`, id+1, method)); err != nil {
			return
		}
		for {
			_, raw, err := conn.Read(ctx)
			if err != nil {
				return
			}
			var m struct {
				ID     int `json:"id"`
				Result struct {
					TargetInfos []json.RawMessage `json:"targetInfos"`
					Cookies     []json.RawMessage `json:"cookies"`
				} `json:"result"`
			}
			if json.Unmarshal(raw, &m) != nil || m.ID != id+1 {
				continue
			}
			rep.Targets = max(rep.Targets, len(m.Result.TargetInfos))
			rep.Cookies = max(rep.Cookies, len(m.Result.Cookies))
			break
		}
	}
}

// drive does what the attacker is after: list the tabs, read every
// cookie (HttpOnly ones included), open a tab in the signed-in profile.
func drive(open func() (context.Context, context.CancelFunc), rep *portReach) {
	actx, acancel := open()
	defer acancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	if err := chromedp.Do(ctx); err != nil {
		return
	}
	c := chromedp.FromContext(ctx)
	cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
	defer ccancel()
	if res, err := chromedp.CallBrowser(cctx, target.GetTargets, target.GetTargetsParams{}); err == nil {
		rep.Targets = max(rep.Targets, len(res.TargetInfos))
	}
	if res, err := chromedp.CallBrowser(cctx, storage.GetCookies, storage.GetCookiesParams{}); err == nil {
		rep.Cookies = max(rep.Cookies, len(res.Cookies))
	}
	if c != nil && c.Target != nil {
		rep.TabOpened = true // chromedp.Run opened one
	}
}

// chromeOn reports whether a Chrome runs on profile, by the command lines
// every user can read.
func chromeOn(profile string) bool {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if strings.Contains(string(raw), "--user-data-dir="+profile+"\x00") && !strings.Contains(string(raw), "--type=") {
			return true
		}
	}
	return false
}

// listeningPorts maps each TCP port in LISTEN state (on loopback or any
// address) to its socket's inode, from /proc/net/tcp and tcp6, which every
// user can read.
func listeningPorts() map[int]string {
	ports := map[int]string{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		raw, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(raw), "\n")[1:] {
			fs := strings.Fields(line)
			if len(fs) < 10 || fs[3] != "0A" {
				continue
			}
			_, hexPort, ok := strings.Cut(fs[1], ":")
			if !ok {
				continue
			}
			if p, err := strconv.ParseInt(hexPort, 16, 32); err == nil {
				ports[int(p)] = fs[9]
			}
		}
	}
	return ports
}

// profilePorts returns the TCP ports that processes of a Chrome on
// profile listen on. Only root can see another user's descriptors, so
// this is the test's view, not the probe's.
func profilePorts(profile string) []int {
	byInode := map[string]int{}
	for port, inode := range listeningPorts() {
		byInode["socket:["+inode+"]"] = port
	}
	var ports []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(raw), "--user-data-dir="+profile+"\x00") {
			continue
		}
		fds, _ := os.ReadDir(filepath.Join("/proc", e.Name(), "fd"))
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join("/proc", e.Name(), "fd", fd.Name()))
			if port, ok := byInode[link]; err == nil && ok {
				ports = append(ports, port)
			}
		}
	}
	return ports
}

// watchPorts collects, until the test ends or stop is called, every TCP
// port a Chrome on profile listens on.
func watchPorts(t *testing.T, profile string) (stop func() map[int]bool) {
	owned := map[int]bool{}
	var mu sync.Mutex
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			ports := profilePorts(profile)
			mu.Lock()
			for _, p := range ports {
				owned[p] = true
			}
			mu.Unlock()
			select {
			case <-done:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	var once sync.Once
	stop = func() map[int]bool {
		once.Do(func() { close(done); <-finished })
		mu.Lock()
		defer mu.Unlock()
		return owned
	}
	t.Cleanup(func() { stop() })
	return stop
}

// runningProbe is a probe looking until stop.
type runningProbe struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   strings.Builder
}

// startProbe starts this test binary as a probe on profile: as uid/gid
// when cred is set, else as this process's user.
func startProbe(t *testing.T, bin, profile string, cred *syscall.Credential) *runningProbe {
	t.Helper()
	cmd := exec.Command(bin, "-test.run=^TestAttackerProbe$", "-test.v=false")
	cmd.Env = []string{probeEnv + "=" + profile, "PATH=/usr/bin:/bin", "HOME=/"}
	cmd.Dir = "/"
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	p := &runningProbe{cmd: cmd}
	var err error
	p.stdin, err = cmd.StdinPipe()
	require.NoError(t, err)
	cmd.Stdout = &p.out
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return p
}

func (p *runningProbe) stop(t *testing.T) probeReport {
	t.Helper()
	_ = p.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		_ = p.cmd.Process.Kill()
		t.Fatal("the probe did not stop")
	}
	var rep probeReport
	for _, line := range strings.Split(p.out.String(), "\n") {
		if strings.HasPrefix(line, "{") {
			require.NoError(t, json.Unmarshal([]byte(line), &rep), line)
			return rep
		}
	}
	t.Fatalf("the probe printed no report: %q", p.out.String())
	return rep
}

// secondUser returns the credentials of a second local user, made when
// missing, and a copy of this test binary it can run. It needs root.
func secondUser(t *testing.T) (*syscall.Credential, string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to act as a second local user (CI runs as root)")
	}
	u, err := user.Lookup(probeUser)
	if err != nil {
		out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", probeUser).CombinedOutput()
		require.NoError(t, err, "useradd: %s", out)
		u, err = user.Lookup(probeUser)
		require.NoError(t, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	require.NotZero(t, uid)
	self, err := os.Executable()
	require.NoError(t, err)
	dir, err := os.MkdirTemp("", "browserop-probe-bin-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	bin := filepath.Join(dir, "probe")
	raw, err := os.ReadFile(self)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bin, raw, 0o755))
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, bin
}

// openParents makes every folder above dir traversable by others, as a
// home directory often is: then only the profile's own modes and the
// relay's check stand between another user and the socket.
func openParents(t *testing.T, dir string) {
	t.Helper()
	for d := filepath.Dir(dir); d != "/" && d != "."; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		require.NoError(t, err)
		if fi.Mode().Perm()&0o005 != 0o005 {
			require.NoError(t, os.Chmod(d, fi.Mode().Perm()|0o055))
		}
	}
}

// TestLocalUserCannotDriveTheBrowser: a second local user (another uid),
// probing as an attacker would (every listening TCP port for DevTools,
// the relay socket, the DevToolsActivePort file), can neither list the
// targets, read a cookie nor open a tab in the Chrome browserop launched:
// while `login` waits for a sign-in and while a pass runs. The same probe
// as the person's own uid gets in through the socket, and as another uid
// it gets in to a Chrome with a DevTools port, the way browserop launched
// Chrome before: the probe can see what it looks for.
func TestLocalUserCannotDriveTheBrowser(t *testing.T) {
	cred, probe := secondUser(t)

	t.Run("while login waits", func(t *testing.T) {
		w := newWorld(t, opts{browser: true, noSignIn: true})
		openParents(t, w.profile)
		p := w.start([]string{"DISPLAY=", "WAYLAND_DISPLAY="}, "login", "--site", "demo", "--timeout", "5m")
		eventually(t, 60*time.Second, "login waits", func() bool {
			return strings.Contains(p.Stdout.String(), "browserop waits until you are signed in")
		})
		ports := watchPorts(t, w.profile)
		other := startProbe(t, probe, w.profile, cred)
		time.Sleep(2 * time.Second)
		// Even with the profile opened up by mistake, the relay refuses
		// another uid.
		require.NoError(t, os.Chmod(w.profile, 0o755))
		require.NoError(t, os.Chmod(filepath.Join(w.profile, browser.SocketFileName), 0o666))
		time.Sleep(2 * time.Second)
		rep := other.stop(t)
		owned := ports()
		require.NoError(t, os.Chmod(w.profile, 0o700))
		require.NoError(t, os.Chmod(filepath.Join(w.profile, browser.SocketFileName), 0o600))
		mine := startProbe(t, probe, w.profile, nil)
		time.Sleep(time.Second)
		own := mine.stop(t)
		p.signal(syscall.SIGTERM)
		p.code(30 * time.Second)

		require.NotZero(t, rep.ChromeSeen, "the probe looked while Chrome ran: %+v", rep)
		require.Empty(t, owned, "the login Chrome listens on TCP")
		require.False(t, rep.reached(owned), "another uid reached the login browser: %+v", rep)
		require.NotZero(t, rep.SocketTries, "the probe tried the socket: %+v", rep)
		require.True(t, own.SocketOpen, "the person's own uid reaches it: %+v", own)
		require.NotZero(t, own.Socket.Targets)
	})

	t.Run("while a pass runs", func(t *testing.T) {
		w := newWorld(t, opts{browser: true})
		openParents(t, w.profile)
		var es []entry
		for i := range 4 {
			es = append(es, entry{ID: fmt.Sprintf("probe-%d", i), Type: "post", Text: fmt.Sprintf("probed post %d", i), At: time.Now().Add(-time.Second)})
		}
		w.writeCalendar(es...)
		ports := watchPorts(t, w.profile)
		other := startProbe(t, probe, w.profile, cred)
		code, sum, errs := w.pass()
		rep := other.stop(t)
		owned := ports()
		require.Equal(t, 0, code, "%+v\n%s", sum, errs)
		require.NotZero(t, rep.ChromeSeen, "the probe looked while Chrome ran: %+v", rep)
		require.Empty(t, owned, "the pass's Chrome listens on TCP")
		require.False(t, rep.reached(owned), "another uid reached the pass's browser: %+v", rep)
	})

	t.Run("a Chrome with a DevTools port is open to it", func(t *testing.T) {
		cfg := browsertest.Config(t.TempDir())
		cfg.ExecPath = browsertest.Executable(t)
		require.True(t, cfg.DevToolsPort)
		b, err := browser.Launch(context.Background(), cfg)
		require.NoError(t, err)
		defer b.Close()
		ports := watchPorts(t, cfg.ProfileDir)
		other := startProbe(t, probe, cfg.ProfileDir, cred)
		time.Sleep(3 * time.Second)
		rep := other.stop(t)
		owned := ports()
		require.NotEmpty(t, owned, "the test sees the port of a Chrome on the profile")
		require.True(t, rep.reached(owned), "%+v", rep)
		for port := range owned {
			r := rep.Ports[strconv.Itoa(port)]
			require.NotNil(t, r, "the probe found port %d: %+v", port, rep)
			require.NotZero(t, r.Targets, "%+v", rep)
		}
	})
}
