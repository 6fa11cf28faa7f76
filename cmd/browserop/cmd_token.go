package main

import (
	"context"
	"fmt"

	"github.com/browserop/browserop/api"
	"github.com/browserop/browserop/config"
	"github.com/browserop/browserop/errcode"
)

// tokens loads the API tokens, creating the 0600 token file on first use.
func (e *env) tokens(cfg config.Config) (user, agent string, err error) {
	ac, err := cfg.ForAPI(e.environ)
	if err != nil {
		return "", "", err
	}
	user, agent, err = api.LoadOrCreateTokens(ac.TokenFile)
	if err != nil {
		return "", "", fmt.Errorf("%w: %v", errcode.ErrConfig, err)
	}
	return user, agent, nil
}

// cmdToken prints the API's bearer token: the person's (everything), or
// with --agent the one for agents (tasks only; no grants, confirmations or
// resolutions).
func cmdToken(_ context.Context, e *env, args []string) error {
	fs := e.flags("token")
	agentTok := fs.Bool("agent", false, "print the agent token instead of the user token")
	if _, err := parseChecked(fs, args, noArgs(fs)); err != nil {
		return err
	}
	cfg, err := e.config()
	if err != nil {
		return err
	}
	user, agent, err := e.tokens(cfg)
	if err != nil {
		return err
	}
	tok := user
	if *agentTok {
		tok = agent
	}
	if e.json {
		return writeJSON(e.stdout, map[string]string{"token": tok})
	}
	fmt.Fprintln(e.stdout, tok)
	return nil
}
