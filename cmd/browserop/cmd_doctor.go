package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/calendar"
	"github.com/browserop/browserop/config"
	"github.com/browserop/browserop/errcode"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/operator"
	"github.com/browserop/browserop/sites"
)

// check is one line of `browserop doctor`.
type check struct {
	Name   string `json:"check"`
	Status string `json:"status"` // ok, warn (works, but look), fail (must be fixed)
	Detail string `json:"detail"`
	Next   string `json:"next,omitempty"` // what to do
}

// configFileInUse returns the configuration file the flags and environment
// name, and whether it exists.
func (e *env) configFileInUse() (string, bool) {
	path, _, err := config.File(e.configPath, e.environ)
	if err != nil {
		return "", false
	}
	_, err = os.Stat(path)
	return path, err == nil
}

// setupHints says what is missing for browserop to do anything, each with
// the next step: `run` prints them after a pass with nothing due.
func (e *env) setupHints(cfg config.Config, adapters []sites.Adapter) []string {
	var out []string
	if path, ok := e.configFileInUse(); !ok {
		out = append(out, fmt.Sprintf("no configuration file (%s): the defaults are in use; copy bundled/browserop.example.yaml there to change them", path))
	}
	calDir, err := cfg.CalendarDir(e.environ)
	if err == nil {
		if cal, err := calendar.Load(calDir, cfg.Calendar.MediaDir); err == nil && len(cal.Entries) == 0 && len(cal.Problems) == 0 {
			out = append(out, fmt.Sprintf("no calendar entries in %s: write a YAML file there (the format is in docs/operator.md, 'The content calendar')", calDir))
		}
	}
	bc, err := cfg.ForBrowser(e.environ)
	if err == nil && !attachMode(bc) && !profileUsed(bc.ProfileDir) {
		site := "NAME"
		if len(adapters) > 0 {
			site = adapters[0].Name()
		}
		out = append(out, fmt.Sprintf("nobody signed in yet on profile %s: run `browserop login --site %s`", bc.ProfileDir, site))
	}
	return out
}

// output runs a program of the system and returns its trimmed standard
// output.
func (e *env) output(ctx context.Context, name string, args ...string) (string, error) {
	var b bytes.Buffer
	err := e.exec(ctx, &b, name, args...)
	return strings.TrimSpace(b.String()), err
}

// profileUsed reports whether Chrome ever ran on the profile (it writes
// Local State there on its first start).
func profileUsed(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "Local State"))
	return err == nil
}

// cmdDoctor checks the installation step by step and says what to do
// about each problem: config, ledger, Chrome, profile, sign-in per site,
// calendar, service, API. It exits 2 when a check fails.
func cmdDoctor(ctx context.Context, e *env, args []string) error {
	fs := e.flags("doctor")
	noBrowser := fs.Bool("no-browser", false, "do not start or attach to Chrome to read who is signed in")
	if _, err := parseChecked(fs, args, noArgs(fs)); err != nil {
		return err
	}
	var checks []check
	add := func(name, status, detail, next string) {
		checks = append(checks, check{name, status, detail, next})
	}
	path, exists := e.configFileInUse()
	cfg, err := e.config()
	switch {
	case err != nil:
		add("config", "fail", err.Error(), "fix the file (every key is documented in bundled/browserop.example.yaml)")
		return e.printChecks(checks)
	case exists:
		add("config", "ok", path+": found and valid", "")
	default:
		add("config", "ok", path+": no file, the defaults are in use", "")
	}

	// The ledger, never created here.
	lpath := e.ledgerPath
	if lpath == "" {
		lpath = cfg.Ledger.Path
	}
	if lpath == "" {
		lpath, _ = ledger.DefaultPathEnv(e.getenv)
	}
	// tabLedger records the tabs the sign-in check opens: only a ledger
	// that exists and is up to date (doctor neither creates nor migrates
	// it); noTabLedger says why there is none.
	var tabLedger *ledger.DB
	noTabLedger := ""
	if db, err := ledger.Open(ctx, lpath, ledger.Options{MustExist: true, SkipMigrate: true}); err != nil {
		if errors.Is(err, ledger.ErrNoLedger) {
			add("ledger", "ok", lpath+": not created yet (the first run creates it)", "")
			noTabLedger = "the ledger, which records every tab browserop opens, is not created yet"
		} else {
			add("ledger", "fail", err.Error(), "move the file away, or point ledger.path at the right one")
			noTabLedger = "the ledger, which records every tab browserop opens, cannot be opened"
		}
	} else {
		v, verr := db.SchemaVersion(ctx)
		switch {
		case verr != nil:
			add("ledger", "fail", fmt.Sprintf("%s: %v", lpath, verr), "")
			noTabLedger = "the ledger, which records every tab browserop opens, cannot be read"
		case v < ledger.LatestSchemaVersion():
			add("ledger", "warn", fmt.Sprintf("%s: schema %d, %d migration(s) pending", lpath, v, ledger.LatestSchemaVersion()-v), "the next command applies them (or: browserop migrate)")
			noTabLedger = "the ledger, which records every tab browserop opens, has migrations pending"
		default:
			add("ledger", "ok", fmt.Sprintf("%s: schema %d, up to date", lpath, v), "")
		}
		if noTabLedger == "" {
			tabLedger = db
			defer db.Close()
		} else {
			db.Close()
		}
	}

	adapters, err := loadSites(cfg)
	if err != nil {
		add("sites", "fail", err.Error(), "fix the adapter files in sites.dir")
	}
	bc, err := cfg.ForBrowser(e.environ)
	if err != nil {
		add("browser", "fail", err.Error(), "")
		return e.printChecks(checks)
	}

	// Chrome and the profile.
	chromeOK := true
	if attachMode(bc) {
		add("chrome", "ok", "attach mode: browserop uses the Chrome at "+dash(bc.DevToolsURL+bc.DevToolsActivePortFile), "")
		// The person's choice, said plainly: Chrome's DevTools port has no
		// authentication, and loopback is every local user's.
		add("devtools", "warn", "that Chrome's DevTools port answers any local user of this machine, not only you: "+
			"whoever reaches it can read that profile's cookies and open tabs signed in as you",
			"on a machine others can log in to, start that Chrome with its debugging port only while browserop runs, on a profile of its own, and close it after")
	} else if exe, err := browser.FindExecutable(bc.ExecPath); err != nil {
		chromeOK = false
		add("chrome", "fail", err.Error(), "install Chromium or Chrome, or set browser.exec_path")
	} else {
		ver, verr := e.output(ctx, exe, "--version")
		if verr != nil || ver == "" {
			ver = "version unknown"
		}
		add("chrome", "ok", exe+": "+ver, "")
		add("devtools", "ok", "the Chrome browserop launches has no DevTools port: browserop reaches it through "+
			filepath.Join(bc.ProfileDir, browser.SocketFileName)+", which only your user can open", "")
	}
	if err := preflight(bc); err != nil {
		chromeOK = false
		add("profile", "fail", errcode.Reason(err), "")
	} else if !attachMode(bc) {
		switch {
		case browser.ProfileRunning(bc.ProfileDir):
			add("profile", "ok", bc.ProfileDir+": in use by the Chrome browserop launched (it holds tabs of yours, or a run left it)", "")
		case !profileUsed(bc.ProfileDir):
			add("profile", "warn", bc.ProfileDir+": never used", "browserop login --site NAME")
		default:
			add("profile", "ok", bc.ProfileDir+": not in use", "")
		}
	}

	// Who is signed in, per site: read from each site's own page.
	switch {
	case *noBrowser || !chromeOK:
		add("sign-in", "warn", "not checked", "run browserop doctor without --no-browser once Chrome is fine")
	case tabLedger == nil && (attachMode(bc) || browser.ProfileRunning(bc.ProfileDir)):
		// The tabs would outlive doctor in a Chrome that runs on, with no
		// record of them.
		add("sign-in", "warn", "not checked: "+noTabLedger, "browserop migrate (it creates the ledger), then browserop doctor")
	default:
		checks = append(checks, e.signedIn(ctx, bc, adapters, tabLedger)...)
	}

	// The calendar.
	if calDir, err := cfg.CalendarDir(e.environ); err != nil {
		add("calendar", "fail", err.Error(), "")
	} else if cal, err := calendar.Load(calDir, cfg.Calendar.MediaDir); err != nil {
		add("calendar", "fail", err.Error(), "")
	} else {
		cal = operator.JudgeCalendar(cal, adapters, cfg.Authority.Ceiling) // as every pass judges it
		var probs []string
		for _, p := range cal.Problems {
			probs = append(probs, p.Error())
		}
		switch {
		case len(probs) > 0:
			add("calendar", "fail", strings.Join(probs, "\n"), "fix these entries; the others run")
		case len(cal.Entries) == 0:
			add("calendar", "warn", calDir+": no entries", "write a YAML file there (docs/operator.md, 'The content calendar')")
		default:
			add("calendar", "ok", fmt.Sprintf("%s: %d valid entries", calDir, len(cal.Entries)), "")
		}
	}

	// The media directory: entries' and intents' images are read there.
	if dir, err := cfg.MediaDir(e.environ); err != nil {
		add("media", "fail", err.Error(), "")
	} else {
		source := "calendar.media_dir"
		if cfg.Calendar.MediaDir == "" {
			source = "the calendar directory: calendar.media_dir is unset"
		}
		fi, err := os.Stat(dir)
		switch {
		case err == nil && fi.IsDir():
			add("media", "ok", fmt.Sprintf("%s (%s)", dir, source), "")
		case cfg.Calendar.MediaDir == "":
			add("media", "ok", fmt.Sprintf("%s (%s): not there yet", dir, source), "")
		case err == nil:
			add("media", "fail", dir+" (calendar.media_dir) is not a directory: entries and intents that attach media are refused",
				"fix calendar.media_dir")
		default:
			add("media", "fail", fmt.Sprintf("%s (calendar.media_dir): %v: entries and intents that attach media are refused", dir, errors.Unwrap(err)),
				"create it, or fix calendar.media_dir")
		}
	}

	// The service.
	if u, err := e.unit(); err != nil {
		add("service", "warn", err.Error(), "")
	} else if st, err := u.Status(ctx); err != nil {
		add("service", "fail", err.Error(), "")
	} else if !st.Installed {
		add("service", "warn", "not installed", "browserop service install")
	} else if !st.Ours {
		add("service", "warn", st.Path+": not written by browserop service install", "")
	} else if st.Active != "active" && st.Active != "running" {
		add("service", "warn", fmt.Sprintf("%s: installed, %s", st.Path, st.Active), "browserop service logs; then browserop service install starts it")
	} else {
		add("service", "ok", st.Path+": installed and running", "")
	}

	// The API, where serve listens.
	user, _, err := e.tokens(cfg)
	if err != nil {
		add("api", "fail", err.Error(), "")
	} else {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+cfg.API.Addr+"/v1/status", nil)
		req.Header.Set("Authorization", "Bearer "+user)
		client := &http.Client{Timeout: 3 * time.Second}
		resp, err := client.Do(req)
		switch {
		case err != nil:
			add("api", "warn", "nothing answers at http://"+cfg.API.Addr, "it runs with browserop serve (the service)")
		case resp.StatusCode != http.StatusOK:
			resp.Body.Close()
			add("api", "fail", fmt.Sprintf("http://%s/v1/status answered %s", cfg.API.Addr, resp.Status), "is another program on api.addr?")
		default:
			resp.Body.Close()
			add("api", "ok", "http://"+cfg.API.Addr+" answers", "")
		}
	}
	return e.printChecks(checks)
}

// signedIn reads, per site, who is signed in, in a tab of its own: on the
// Chrome browserop left running (or the person's, in attach mode), else on
// a Chrome started for this and stopped again. Each tab is a probe tab
// recorded in db (operator.Probe), closed with proof or kept as the
// cleanup preference says; a check says so when any is left open.
func (e *env) signedIn(ctx context.Context, bc browser.Config, adapters []sites.Adapter, db *ledger.DB) (out []check) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	b, release, err := inspectBrowser(ctx, bc)
	if err != nil {
		return []check{{"sign-in", "fail", connectError(bc, err).Error(), ""}}
	}
	if db == nil {
		// No ledger to record tabs in: only in a Chrome started for doctor
		// alone, which stops with it and every tab in it.
		if !b.Launched() || b.Dedicated() {
			release(nil)
			return []check{{"sign-in", "warn", "not checked: a Chrome runs on the profile, and the ledger that would record doctor's tabs in it is not there",
				"browserop migrate (it creates the ledger), then browserop doctor"}}
		}
		return e.signedInUnrecorded(ctx, b, release, bc, adapters)
	}
	probe := operator.NewProbe(db, b, ledger.PurposeDoctor, profileKey(bc), nil)
	defer func() {
		if left := operator.LeftOpen(probe.Finish(ctx)); left != "" {
			out = append(out, check{"tabs", "ok", left, "browserop config cleanup"})
		}
		release(nil)
	}()
	for _, site := range adapters {
		name := "sign-in " + site.Name()
		tab, err := probe.Open(ctx, site.Name(), site.Origins()[0])
		if err != nil {
			out = append(out, check{name, "fail", connectError(bc, err).Error(), ""})
			continue
		}
		status, err := site.OpenHome(ctx, tab)
		if err != nil {
			probe.NoteBlocker(ctx, tab, err)
			out = append(out, check{name, "warn", fmt.Sprintf("%s did not open: %s", strings.Join(site.Origins(), " "), errorText(err)), "is the site reachable?"})
			continue
		}
		if blk, err := probe.Look(ctx, tab, site, status); err == nil && blk.Blocked() {
			out = append(out, check{name, "warn", "the site shows a blocker screen: " + string(blk.Kind), "browserop login --site " + site.Name()})
			continue
		}
		who, err := site.Identity(ctx, tab)
		switch {
		case err != nil || who == "":
			probe.NoteBlocker(ctx, tab, err)
			out = append(out, check{name, "warn", "nobody is signed in", "browserop login --site " + site.Name()})
		default:
			out = append(out, check{name, "ok", "signed in as @" + who, ""})
		}
	}
	return out
}

// signedInUnrecorded is signedIn in a Chrome started for doctor alone,
// with no ledger to record its tabs in: release stops that Chrome, and
// every tab in it, before doctor ends.
func (e *env) signedInUnrecorded(ctx context.Context, b *browser.Browser, release func([]*browser.Tab), bc browser.Config, adapters []sites.Adapter) []check {
	defer release(nil)
	var out []check
	for _, site := range adapters {
		name := "sign-in " + site.Name()
		tab, err := b.NewTab(ctx, "about:blank")
		if err != nil {
			out = append(out, check{name, "fail", connectError(bc, err).Error(), ""})
			continue
		}
		if _, err := site.OpenHome(ctx, tab); err != nil {
			out = append(out, check{name, "warn", fmt.Sprintf("%s did not open: %s", strings.Join(site.Origins(), " "), errorText(err)), "is the site reachable?"})
			continue
		}
		who, err := site.Identity(ctx, tab)
		switch {
		case err != nil || who == "":
			out = append(out, check{name, "warn", "nobody is signed in", "browserop login --site " + site.Name()})
		default:
			out = append(out, check{name, "ok", "signed in as @" + who, ""})
		}
	}
	return out
}

// inspectBrowser connects to the browser a command only reads with: the
// Chrome browserop left running (or the person's, in attach mode), else a
// Chrome started for it. release closes the command's own tabs and lets go
// of the browser: it stops only a Chrome started for the command.
func inspectBrowser(ctx context.Context, bc browser.Config) (*browser.Browser, func(own []*browser.Tab), error) {
	var b *browser.Browser
	var err error
	switch {
	case attachMode(bc):
		b, err = browser.Attach(ctx, bc)
	case browser.ProfileRunning(bc.ProfileDir):
		pc := bc
		pc.Persistent = true
		b, err = browser.Launch(ctx, pc)
	default:
		b, err = browser.Launch(ctx, bc) // bound to this process; Close stops it
	}
	if err != nil {
		return nil, nil, err
	}
	release := func(own []*browser.Tab) {
		cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer ccancel()
		if b.Dedicated() {
			for _, t := range own {
				b.CloseTab(cctx, t)
			}
			b.Disconnect()
			return
		}
		if attachMode(bc) {
			for _, t := range own {
				b.CloseTab(cctx, t)
			}
		}
		b.Close()
	}
	return b, release, nil
}

// errorText is an error's text without a DevTools address.
func errorText(err error) string {
	var hs *sites.HardStop
	if errors.As(err, &hs) {
		return string(hs.Kind)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return "not found"
	}
	return err.Error()
}

func (e *env) printChecks(checks []check) error {
	failed := false
	for _, c := range checks {
		failed = failed || c.Status == "fail"
	}
	if e.json {
		if err := writeJSON(e.stdout, checks); err != nil {
			return err
		}
	} else {
		for _, c := range checks {
			mark := map[string]string{"ok": "ok  ", "warn": "warn", "fail": "FAIL"}[c.Status]
			fmt.Fprintf(e.stdout, "%s %-10s %s\n", mark, c.Name, strings.ReplaceAll(c.Detail, "\n", "\n                "))
			if c.Next != "" {
				fmt.Fprintf(e.stdout, "                -> %s\n", c.Next)
			}
		}
	}
	if failed {
		return quietExit{errcode.ExitUsage}
	}
	return nil
}
