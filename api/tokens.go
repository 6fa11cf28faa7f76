package api

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/browserop/browserop/internal/privatedir"
	"github.com/browserop/browserop/internal/regularfile"
)

// Token prefixes: they tell a person (and secret scanners) which token a
// string is; the 256 random bits follow.
const (
	userTokenPrefix  = "bop_user_"
	agentTokenPrefix = "bop_agent_"
	tokenBytes       = 32
	maxTokenFile     = 4096
)

// tokenFile is the token file's JSON.
type tokenFile struct {
	User  string `json:"user"`
	Agent string `json:"agent"`
}

// LoadOrCreateTokens reads the user and agent tokens from the token file at
// path. On first start, when there is no file, it creates one (directory
// 0700, file 0600) holding two new random 256-bit tokens. It refuses a
// folder that is not the running user's alone (privatedir.Check), a file
// that others can read or write (it must be 0600), that is not a regular
// file, that another user owns, or whose tokens are malformed or equal.
//
// To rotate both tokens, stop the daemon, delete the file and start again.
func LoadOrCreateTokens(path string) (user, agent string, err error) {
	if path == "" {
		return "", "", errors.New("api token file: empty path (set api.token_file)")
	}
	// The tokens' folder is the person's alone: in a folder others can
	// write, the file could be swapped between the checks and the read.
	if err := privatedir.Make(filepath.Dir(path)); err != nil {
		return "", "", fmt.Errorf("api token file %s: %w", path, err)
	}
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return createTokens(path)
	}
	return openTokens(path)
}

// openTokens opens and reads an existing token file, refusing a symbolic
// link: whoever can point it elsewhere could hand the daemon their tokens.
func openTokens(path string) (string, string, error) {
	li, err := os.Lstat(path)
	if err != nil {
		return "", "", fmt.Errorf("api token file %s: %w", path, err)
	}
	if li.Mode()&fs.ModeSymlink != 0 {
		return "", "", fmt.Errorf("api token file %s is a symbolic link; browserop refuses it: point api.token_file at the file itself", path)
	}
	f, _, err := regularfile.Open(path)
	if err != nil {
		return "", "", fmt.Errorf("api token file %s: %w", path, err)
	}
	defer f.Close()
	return readTokens(f, li, path)
}

func readTokens(f *os.File, li fs.FileInfo, path string) (string, string, error) {
	fi, err := f.Stat()
	if err != nil {
		return "", "", fmt.Errorf("api token file %s: %w", path, err)
	}
	if !os.SameFile(li, fi) {
		return "", "", fmt.Errorf("api token file %s changed while it was opened; try again", path)
	}
	if !fi.Mode().IsRegular() {
		return "", "", fmt.Errorf("api token file %s: not a regular file", path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return "", "", fmt.Errorf("api token file %s is mode %04o: others can read it, so browserop refuses it; "+
			"run `chmod 600 %s` if nobody else could have read it, otherwise delete it to create new tokens", path, perm, path)
	}
	if err := privatedir.CheckOwner(fi); err != nil {
		return "", "", fmt.Errorf("api token file %s: %w", path, err)
	}
	raw, err := io.ReadAll(io.LimitReader(f, maxTokenFile+1))
	if err != nil {
		return "", "", fmt.Errorf("api token file %s: %w", path, err)
	}
	if len(raw) > maxTokenFile {
		return "", "", fmt.Errorf("api token file %s: larger than %d bytes; it is not a browserop token file", path, maxTokenFile)
	}
	var tf tokenFile
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&tf); err != nil {
		// No echo of the content: it holds secrets.
		return "", "", fmt.Errorf("api token file %s: not a browserop token file (want JSON {\"user\": ..., \"agent\": ...}); delete it to create new tokens", path)
	}
	if err := checkToken(tf.User, userTokenPrefix); err != nil {
		return "", "", fmt.Errorf("api token file %s: user token: %w", path, err)
	}
	if err := checkToken(tf.Agent, agentTokenPrefix); err != nil {
		return "", "", fmt.Errorf("api token file %s: agent token: %w", path, err)
	}
	if strings.TrimPrefix(tf.User, userTokenPrefix) == strings.TrimPrefix(tf.Agent, agentTokenPrefix) {
		return "", "", fmt.Errorf("api token file %s: the user and agent tokens are equal", path)
	}
	return tf.User, tf.Agent, nil
}

// checkToken accepts prefix followed by at least 256 bits of base64url.
func checkToken(tok, prefix string) error {
	body, ok := strings.CutPrefix(tok, prefix)
	if !ok {
		return fmt.Errorf("must start with %q", prefix)
	}
	b, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil || len(b) < tokenBytes {
		return fmt.Errorf("must be %q followed by %d random bytes in unpadded base64url", prefix, tokenBytes)
	}
	return nil
}

func newToken(prefix string) string {
	b := make([]byte, tokenBytes)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return prefix + base64.RawURLEncoding.EncodeToString(b)
}

// createTokens writes a new token file atomically: a private temporary
// file, synced, then linked into place so that a file another process
// created meanwhile is never overwritten (it is read instead).
func createTokens(path string) (string, string, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", fmt.Errorf("api token file: create directory %s: %w", dir, err)
	}
	tf := tokenFile{User: newToken(userTokenPrefix), Agent: newToken(agentTokenPrefix)}
	raw, _ := json.MarshalIndent(tf, "", "  ")
	tmp, err := os.CreateTemp(dir, ".token-*")
	if err != nil {
		return "", "", fmt.Errorf("api token file %s: %w", path, err)
	}
	tmpName := tmp.Name()
	defer os.Remove(tmpName)
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return "", "", fmt.Errorf("api token file %s: %w", path, err)
	}
	if _, err := tmp.Write(append(raw, '\n')); err != nil {
		tmp.Close()
		return "", "", fmt.Errorf("api token file %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return "", "", fmt.Errorf("api token file %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return "", "", fmt.Errorf("api token file %s: %w", path, err)
	}
	if err := os.Link(tmpName, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return openTokens(path)
		}
		return "", "", fmt.Errorf("api token file %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return tf.User, tf.Agent, nil
}
