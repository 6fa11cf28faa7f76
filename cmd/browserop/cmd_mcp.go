package main

import (
	"context"
	"errors"
	"io"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browserop/browserop/mcptools"
)

// cmdMCP serves browserop's MCP tools over stdio, for desktop clients that
// start the server themselves: it reads JSON-RPC from standard input and
// writes it to standard output, and logs nothing there. It opens the
// ledger from the configuration and only works with tasks; the operator
// (browserop serve or run) performs what the tasks submit. It ends when
// the client closes standard input, or on SIGINT or SIGTERM.
func cmdMCP(ctx context.Context, e *env, args []string) error {
	fs := e.flags("mcp")
	svc, db, _, err := e.openTaskCommand(ctx, fs, args, noArgs(fs))
	if err != nil {
		return err
	}
	defer db.Close()
	server := mcptools.NewServer(svc, version)
	err = server.Run(ctx, &mcp.IOTransport{Reader: os.Stdin, Writer: writeCloser(e.stdout)})
	if err == nil || errors.Is(err, io.EOF) || ctx.Err() != nil {
		return nil // the client went away, or a signal asked us to stop
	}
	return err
}

// writeCloser is w, closed when it can be.
func writeCloser(w io.Writer) io.WriteCloser {
	if wc, ok := w.(io.WriteCloser); ok {
		return wc
	}
	return nopWriteCloser{w}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
