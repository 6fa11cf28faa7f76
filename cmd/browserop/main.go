// Command browserop drives a person's own Chrome through the DevTools
// Protocol and makes every external effect it causes trustworthy: reserved
// under an idempotency key, done once, verified, and reconciled when
// uncertain.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
