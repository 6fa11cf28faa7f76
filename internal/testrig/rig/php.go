package rig

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ErrListen is PHP's server failing to listen on its port (taken since
// FreePort found it free): start again on another.
var ErrListen = errors.New("php -S could not listen")

// StartPHP starts PHP's built-in server (the php binary) on 127.0.0.1:port
// with workers processes, serving docroot, its errors logged to
// dir/php-errors.log and its output to dir/php-server.log, env its
// environment; it waits until the server accepts connections.
func StartPHP(ctx context.Context, php, dir, docroot string, port, workers int, env []string) (*Server, error) {
	addr := "127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.Command(php,
		"-d", "display_errors=0",
		"-d", "log_errors=1",
		"-d", "error_log="+filepath.Join(dir, "php-errors.log"),
		"-d", "memory_limit=256M",
		"-S", addr, "-t", docroot)
	cmd.Dir = docroot
	cmd.Env = append(env, "PHP_CLI_SERVER_WORKERS="+strconv.Itoa(workers))
	logPath := filepath.Join(dir, "php-server.log")
	srv, err := StartServer("php -S", cmd, logPath)
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		if err := srv.Exited(); err != nil {
			if strings.Contains(Tail(logPath, 500), "Failed to listen") {
				return nil, fmt.Errorf("%w: %w", ErrListen, err)
			}
			return nil, err
		}
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return srv, nil
		}
		select {
		case <-wctx.Done():
			srv.Stop(time.Second)
			return nil, fmt.Errorf("php -S on %s not ready: %w", addr, wctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
