package api

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Listen opens the API's TCP listener on addr, which must be host:port with
// a loopback host: 127.0.0.0/8, ::1 or localhost. Any other host (an empty
// one, 0.0.0.0, a LAN address, a name) is refused with an error saying so,
// and so is a listener that ends up on a non-loopback address.
func Listen(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("api: listen address %q: want host:port with a loopback host (127.0.0.1, [::1] or localhost): %w", addr, err)
	}
	if !loopbackHost(host) {
		return nil, fmt.Errorf("api: refusing to listen on %q: the API listens on loopback only (127.0.0.0/8, ::1 or localhost), never on other interfaces", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("api: listen on %s: %w", addr, err)
	}
	if ta, ok := ln.Addr().(*net.TCPAddr); !ok || !ta.IP.IsLoopback() {
		ln.Close()
		return nil, fmt.Errorf("api: %q resolved to %s, which is not a loopback address; refusing it", addr, ln.Addr())
	}
	return ln, nil
}

// Serve serves h on ln with timeouts suited to a local API until ctx is
// done, then shuts down: requests in flight get 5s to finish, then the
// remaining connections (long-lived MCP streams) are closed. It returns nil
// after a shutdown caused by ctx.
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	err := srv.Shutdown(sctx)
	if err != nil {
		// Long-lived streams (MCP) do not end by themselves.
		_ = srv.Close()
		err = nil
	}
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}
