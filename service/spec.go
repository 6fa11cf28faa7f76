package service

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/browserop/browserop/config"
	"github.com/browserop/browserop/errcode"
)

// Spec returns what u runs: this binary (absolute, symlinks resolved),
// `serve`, `--config configFile` and `--ledger ledgerFile` for those that
// are not "" (made absolute), and the variables of the environment New
// was given that decide the paths browserop uses: the XDG directories that are
// absolute, PATH to find Chrome, and the BROWSEROP_* config overrides
// (config.IsOverride), so that the service sees what the installing shell
// saw. A path that cannot be made absolute is an errcode.ErrConfig error.
func (u *Unit) Spec(configFile, ledgerFile string) (Spec, error) {
	bin, err := os.Executable()
	if err == nil {
		bin, err = filepath.EvalSymlinks(bin)
	}
	if err != nil {
		return Spec{}, fmt.Errorf("locate the browserop binary: %w", err)
	}
	s := Spec{Binary: bin, Args: []string{"serve"}, Env: map[string]string{}, LogFile: u.LogFile}
	if configFile != "" {
		abs, err := filepath.Abs(configFile)
		if err != nil {
			return Spec{}, fmt.Errorf("%w: --config %q: %v", errcode.ErrConfig, configFile, err)
		}
		s.Args = append(s.Args, "--config", abs)
	}
	if ledgerFile != "" {
		abs, err := filepath.Abs(ledgerFile)
		if err != nil {
			return Spec{}, fmt.Errorf("%w: --ledger %q: %v", errcode.ErrConfig, ledgerFile, err)
		}
		s.Args = append(s.Args, "--ledger", abs)
	}
	vars := map[string]string{}
	for _, kv := range u.env {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			vars[k] = v
		}
	}
	for k, v := range vars {
		switch {
		case k == "XDG_CONFIG_HOME" || k == "XDG_STATE_HOME" || k == "XDG_DATA_HOME" || k == "XDG_CACHE_HOME":
			if filepath.IsAbs(v) {
				s.Env[k] = v
			}
		case k == "PATH" && v != "":
			s.Env[k] = v
		case config.IsOverride(k):
			s.Env[k] = v
		}
	}
	return s, nil
}
