package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/ledger"
)

// profileKey names the browser profile the configuration opens tabs in:
// the key of the person's cleanup preference. In launch mode the
// dedicated profile's directory; in attach mode the person's Chrome, by
// its DevToolsActivePort file or its DevTools address.
func profileKey(bc browser.Config) string {
	switch {
	case bc.DevToolsActivePortFile != "":
		return "attach:" + bc.DevToolsActivePortFile
	case bc.DevToolsURL != "":
		return "attach:" + bc.DevToolsURL
	}
	return bc.ProfileDir
}

// cmdConfig reads or sets the person's settings kept in the ledger:
// config cleanup [never|submitted_only|submitted_and_probe_blockers].
func cmdConfig(ctx context.Context, e *env, args []string) error {
	fs := e.flags("config")
	cfg, db, pos, err := e.openCommand(ctx, fs, args, func(pos []string) error {
		if len(pos) < 1 || pos[0] != "cleanup" || len(pos) > 2 {
			return usageError("config takes: cleanup [never|submitted_only|submitted_and_probe_blockers]")
		}
		if len(pos) == 2 {
			if _, err := ledger.ParseCleanupPreference(pos[1]); err != nil {
				return usageError("%v", err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	defer db.Close()
	bc, err := cfg.ForBrowser(e.environ)
	if err != nil {
		return err
	}
	profile := profileKey(bc)
	set, err := db.CleanupSettingOf(ctx, profile)
	if len(pos) == 2 && err == nil {
		set, err = db.SetCleanupPreference(ctx, profile, ledger.CleanupPreference(pos[1]), "cli")
	}
	if err != nil {
		return err
	}
	if e.json {
		return writeJSON(e.stdout, set)
	}
	printCleanup(e, set)
	return nil
}

func printCleanup(e *env, set ledger.CleanupSetting) {
	if !set.Known() {
		fmt.Fprintf(e.stdout, "cleanup: not set for profile %s: browserop leaves its tabs open until you choose:\n%s", clean(set.Profile), cleanupChoices)
		return
	}
	fmt.Fprintf(e.stdout, "cleanup: %s (profile %s, set by %s at %s)\n", set.Preference, clean(set.Profile), clean(set.SetBy), fmtTime(*set.SetAt))
}

// cleanupChoices explains the three answers.
const cleanupChoices = `  browserop config cleanup never                         close none of the tabs browserop opens
  browserop config cleanup submitted_only                close a tab only once every action prepared in it is verified
  browserop config cleanup submitted_and_probe_blockers  also close a tab it only looked in (nothing typed, no control changed), a blocker screen it met recorded
`

// errNoAnswer is a question left unanswered.
var errNoAnswer = errors.New("no answer")

// parseCleanupAnswer reads the person's answer to the cleanup question:
// 1, 2, 3 or a preference's name; "" is no answer.
func parseCleanupAnswer(s string) (ledger.CleanupPreference, error) {
	s = strings.TrimSpace(s)
	switch s {
	case "":
		return "", errNoAnswer
	case "1":
		return ledger.CleanupNever, nil
	case "2":
		return ledger.CleanupSubmittedOnly, nil
	case "3":
		return ledger.CleanupSubmittedAndProbeBlockers, nil
	}
	return ledger.ParseCleanupPreference(s)
}
