package main

import (
	"errors"
	"fmt"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/config"
	"github.com/browserop/browserop/errcode"
)

// preflight checks the browser part of cfg (see preflight below).
func (e *env) preflight(cfg config.Config) error {
	bc, err := cfg.ForBrowser(e.environ)
	if err != nil {
		return err
	}
	return preflight(bc)
}

// preflight finds the browser configuration errors that a pass would meet
// only once something is due (browser.Preflight): found at start, they
// are configuration errors (exit 2) whether or not anything is due.
func preflight(bc browser.Config) error {
	if err := browser.Preflight(bc, !attachMode(bc)); err != nil {
		return fmt.Errorf("%w: %w", errcode.ErrConfig, err)
	}
	return nil
}

// connectError turns what connecting to the browser returns into what a
// person reads: a configuration error is one (exit 2); a Chrome that does
// not answer says what to check instead of the DevTools client's
// internals.
func connectError(bc browser.Config, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, browser.ErrConfig):
		return fmt.Errorf("%w: %w", errcode.ErrConfig, err)
	case errors.Is(err, browser.ErrNoBrowser) && attachMode(bc):
		where := "browser.devtools_url " + bc.DevToolsURL
		if bc.DevToolsURL == "" {
			where = "the port in browser.devtools_active_port_file " + bc.DevToolsActivePortFile
		}
		return &readableError{err: err, msg: fmt.Sprintf("Chrome is not reachable at %s: check that Chrome is running, "+
			"that it was started with --remote-debugging-port (the same port), and that nothing else uses that port", where)}
	case errors.Is(err, browser.ErrNoBrowser):
		return &readableError{err: err, msg: fmt.Sprintf("could not start or reach Chrome on profile %s: check browser.exec_path "+
			"(or that chromium or google-chrome is installed and on PATH) and run `browserop doctor`", bc.ProfileDir)}
	}
	return err
}

// readableError is an error whose text is written for a person; the
// error it stands for is still there for errors.Is.
type readableError struct {
	err error
	msg string
}

func (r *readableError) Error() string { return r.msg }
func (r *readableError) Unwrap() error { return r.err }
