package browser

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// SocketFileName is the unix socket in the profile directory where the
// relay of a Persistent Launch's Chrome takes DevTools clients: the pipe
// framing (JSON messages each ended by a NUL byte, as over
// --remote-debugging-pipe) or HTTP, as Chrome's own DevTools port answers
// it (/json/version, /json/list, and WebSocket at /devtools/browser/… and
// /devtools/page/ID), for a person who forwards it over SSH to sign in.
const SocketFileName = "browserop-devtools.sock"

// relayEnv selects the relay: a process started with it set to a profile
// directory runs the relay on that profile (relayMain) and exits, whatever
// the binary is. Checked in an init function, so that any binary that
// links this package (browserop, and each test binary) can be one.
const relayEnv = "BROWSEROP_DEVTOOLS_RELAY"

// relayStartLimit bounds the relay's first exchange with Chrome.
const relayStartLimit = 45 * time.Second

func init() {
	if profile := os.Getenv(relayEnv); profile != "" {
		os.Exit(relayMain(profile, os.Args[1:]))
	}
}

// relayMain runs the relay: argv is Chrome's executable and arguments. It
// tells its starter on stdout "pid N" once Chrome runs, then "ready" once
// the socket takes clients, or "error: …"; then it closes stdout, so that
// nothing it writes later reaches a reader that is gone.
func relayMain(profile string, argv []string) int {
	_ = os.Unsetenv(relayEnv)
	signal.Ignore(syscall.SIGHUP, syscall.SIGINT, syscall.SIGPIPE)
	say := func(format string, a ...any) {
		fmt.Fprintf(os.Stdout, format+"\n", a...)
	}
	fail := func(err error) int {
		say("error: %s", strings.ReplaceAll(err.Error(), "\n", " "))
		_ = os.Stdout.Close()
		return 1
	}
	if len(argv) == 0 {
		return fail(errors.New("relay: no Chrome to start"))
	}
	// Chrome reads commands from its fd 3 and writes to its fd 4.
	chromeR, relayW, err := os.Pipe()
	if err != nil {
		return fail(err)
	}
	relayR, chromeW, err := os.Pipe()
	if err != nil {
		return fail(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.ExtraFiles = []*os.File{chromeR, chromeW}
	if err := cmd.Start(); err != nil {
		return fail(fmt.Errorf("start: %v", err))
	}
	_ = chromeR.Close()
	_ = chromeW.Close()
	say("pid %d", cmd.Process.Pid)
	relayLog("started Chrome (pid %d)", cmd.Process.Pid)

	// SIGTERM (a service stopping, a log-out) is passed to Chrome, which
	// closes as it would on its own; the relay follows it.
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	go func() {
		for range term {
			_ = cmd.Process.Signal(syscall.SIGTERM)
		}
	}()

	r := newRelay(func(b []byte) error {
		return writeFrame(relayW, b)
	})
	chromeDone := make(chan struct{})
	go func() {
		defer close(chromeDone)
		br := bufio.NewReaderSize(relayR, 1<<20)
		for {
			b, err := readFrame(br)
			if err != nil {
				r.end()
				return
			}
			r.fromChrome(b)
		}
	}()
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		_ = relayW.Close()
		close(exited)
	}()

	// The relay's own discovery, before any client: the state a client
	// that asks for discovery is given.
	started := make(chan error, 1)
	go func() {
		_, err := r.call("Target.setDiscoverTargets", map[string]bool{"discover": true}, "", true)
		started <- err
	}()
	select {
	case err := <-started:
		if err != nil {
			_ = cmd.Process.Kill()
			return fail(fmt.Errorf("no answer from Chrome on its pipe: %v", err))
		}
	case <-time.After(relayStartLimit):
		_ = cmd.Process.Kill()
		return fail(fmt.Errorf("no answer from Chrome on its pipe within %v", relayStartLimit))
	}

	path := filepath.Join(profile, SocketFileName)
	ln, err := listenPrivate(path)
	if err != nil {
		_ = cmd.Process.Kill()
		return fail(err)
	}
	say("ready")
	_ = os.Stdout.Close()

	web := newRelayWeb(r)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go serveRelayConn(r, web, conn)
		}
	}()
	<-chromeDone
	_ = ln.Close()
	web.close()
	// Only our own socket: a later relay may have bound the name anew.
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSocket != 0 {
		_ = os.Remove(path)
	}
	select {
	case <-exited:
		relayLog("Chrome (pid %d) ended: %v", cmd.Process.Pid, exitState(waitErr))
	case <-time.After(10 * time.Second):
		relayLog("Chrome (pid %d) closed its pipe and had not ended 10s later", cmd.Process.Pid)
	}
	return 0
}

// relayLog writes one dated line to the relay's stderr: its log in the
// profile (RelayLogFileName).
func relayLog(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "%s relay: %s\n", time.Now().UTC().Format(time.RFC3339), fmt.Sprintf(format, a...))
}

// exitState says how a process ended, from its Wait error.
func exitState(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// serveRelayConn serves one connection: from another uid it is closed at
// once; HTTP goes to the web front; anything else speaks the pipe framing.
func serveRelayConn(r *relay, web *relayWeb, conn net.Conn) {
	if err := checkPeer(conn); err != nil {
		_ = conn.Close()
		return
	}
	br := bufio.NewReaderSize(conn, 1<<16)
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	head, err := br.Peek(1)
	if err != nil {
		_ = conn.Close()
		return
	}
	_ = conn.SetReadDeadline(time.Time{})
	if head[0] != '{' && head[0] != 0 && head[0] != ' ' && head[0] != '\n' {
		web.take(&peekedConn{Conn: conn, r: br})
		return
	}
	c, err := r.join(false)
	if err != nil {
		_ = conn.Close()
		return
	}
	r.serveClient(c,
		func() ([]byte, error) { return readFrame(br) },
		func(b []byte) error {
			return writeFrame(conn, b)
		},
		func() { _ = conn.Close() })
}

// peekedConn is a connection whose first bytes were read into r.
type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *peekedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// nopWriteCloser is the write side of a relay connection given to
// chromedp.NewPipeConn, which closes both sides, and they are one.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// dialRelay connects to the relay socket in profile.
func dialRelay(ctx context.Context, profile string) (net.Conn, error) {
	return dialPrivate(ctx, filepath.Join(profile, SocketFileName))
}
