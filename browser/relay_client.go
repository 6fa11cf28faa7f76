package browser

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/browserop/browserop/internal/regularfile"
)

// relayAllocator is a chromedp Allocator (and Attacher) that connects to
// the relay of a Persistent Launch's Chrome through its socket, as
// remote.Allocator connects to a DevTools port: cancelling the context
// ends the connection, never the browser.
type relayAllocator struct {
	profile string
	wg      sync.WaitGroup
}

// NewRelayAllocator returns an allocator context whose browser is the
// Chrome that a Persistent Launch started on profile, reached through the
// relay socket in it (SocketFileName): only this uid can. A test or a
// harness uses it to act in that Chrome beside browserop.
func NewRelayAllocator(parent context.Context, profile string) (context.Context, context.CancelFunc) {
	return chromedp.NewAllocatorContext(parent, &relayAllocator{profile: profile})
}

func (a *relayAllocator) Allocate(ctx context.Context, opts ...chromedp.BrowserOption) (*chromedp.Browser, error) {
	if chromedp.FromContext(ctx) == nil {
		return nil, chromedp.ErrInvalidContext
	}
	wctx, cancel := context.WithCancel(context.Background())
	a.wg.Go(func() {
		<-ctx.Done()
		chromedp.Cancel(ctx)
		cancel()
	})
	dctx, dcancel := context.WithTimeout(wctx, 10*time.Second)
	defer dcancel()
	conn, err := dialRelay(dctx, a.profile)
	if err != nil {
		return nil, fmt.Errorf("connect to the DevTools relay: %w", err)
	}
	return chromedp.NewBrowserTransport(wctx, chromedp.NewPipeConn(conn, nopWriteCloser{conn}), opts...)
}

func (a *relayAllocator) Wait() { a.wg.Wait() }

// Attaches reports true: the browser runs already.
func (a *relayAllocator) Attaches() bool { return true }

// relayTransport dials the relay of profile for one connection of its own
// (sendBrowserClose).
func relayTransport(ctx context.Context, profile string) (chromedp.Transport, error) {
	conn, err := dialRelay(ctx, profile)
	if err != nil {
		return nil, err
	}
	return chromedp.NewPipeConn(conn, nopWriteCloser{conn}), nil
}

// relayStart is what a starting relay said: Chrome's pid, then ready.
type relayStart struct {
	lines chan string
}

// watchRelay reads the starting relay's lines from r.
func watchRelay(r io.ReadCloser) *relayStart {
	s := &relayStart{lines: make(chan string, 4)}
	go func() {
		defer close(s.lines)
		defer r.Close()
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
	}()
	return s
}

// wait returns Chrome's pid once the relay is ready. pid is set as soon
// as the relay names it, even when the start fails later, so that the
// caller can record it.
func (s *relayStart) wait(deadline time.Time, gotPID func(int)) error {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for {
		select {
		case line, ok := <-s.lines:
			if !ok {
				return fmt.Errorf("%w: the DevTools relay exited before Chrome was ready", ErrNoBrowser)
			}
			switch {
			case strings.HasPrefix(line, "pid "):
				pid, err := strconv.Atoi(strings.TrimPrefix(line, "pid "))
				if err != nil {
					return fmt.Errorf("%w: the DevTools relay said %q", ErrNoBrowser, line)
				}
				gotPID(pid)
			case line == "ready":
				return nil
			case strings.HasPrefix(line, "error: "):
				return fmt.Errorf("%w: %s", ErrNoBrowser, scrubText(strings.TrimPrefix(line, "error: ")))
			}
		case <-timer.C:
			return fmt.Errorf("%w: Chrome was not ready on its DevTools pipe within %v", ErrNoBrowser, persistentStartLimit)
		}
	}
}

// relaySocketThere reports whether profile holds a relay socket.
func relaySocketThere(profile string) bool {
	fi, err := os.Lstat(filepath.Join(profile, SocketFileName))
	return err == nil && fi.Mode()&os.ModeSocket != 0
}

// RelayLogFileName is the relay's log in the profile: what it wrote to
// stderr (a panic's stack, why it ended), kept below relayLogLimit.
const RelayLogFileName = "browserop-relay.log"

// relayLogLimit bounds the relay's log: a longer one starts again empty.
const relayLogLimit = 1 << 20

// openRelayLog opens the relay's log for appending, 0600 (see
// regularfile.OpenAppend: never through a link, never blocking on a FIFO);
// one over relayLogLimit is emptied first.
func openRelayLog(profile string) (*os.File, error) {
	return regularfile.OpenAppend(filepath.Join(profile, RelayLogFileName), 0o600, relayLogLimit)
}
