package main

import (
	"bufio"
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
  browserop config cleanup submitted_only                close a tab only once every action prepared in it was sent
  browserop config cleanup submitted_and_probe_blockers  also close a tab it only looked in (nothing typed, no control changed), a blocker screen it met recorded
`

// askCleanupOnce asks the person, once per profile, for the cleanup
// preference, when none is set and browserop was never asked before, and
// only when a person can answer: stdin and stdout a terminal
// (e.interactive), not --json. Piped stdin, a service (serve) and any
// program never get the question: the preference stays unknown and
// browserop closes none of its tabs that needs consent. The question is
// recorded as asked before the answer is read, so that it is asked once
// even when it goes unanswered.
func (e *env) askCleanupOnce(ctx context.Context, db *ledger.DB, profile string) error {
	if e.json || e.interactive == nil || e.stdin == nil || !e.interactive() {
		return nil
	}
	set, err := db.CleanupSettingOf(ctx, profile)
	if err != nil || set.Known() || set.AskedAt != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "Which of the tabs browserop opens in profile %s may it close by itself? (asked once; browserop config cleanup changes it)\n", clean(profile))
	fmt.Fprint(e.stdout, cleanupQuestion)
	fmt.Fprint(e.stdout, "Answer 1, 2 or 3 (Enter: not now, and browserop leaves its tabs open): ")
	if err := db.MarkCleanupAsked(ctx, profile); err != nil {
		return err
	}
	answer := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(e.stdin).ReadString('\n')
		answer <- line
	}()
	var line string
	select {
	case line = <-answer:
	case <-ctx.Done():
		fmt.Fprintln(e.stdout)
		return ctx.Err()
	}
	p, err := parseCleanupAnswer(line)
	if err != nil {
		fmt.Fprintf(e.stdout, "no cleanup preference set (%v): browserop leaves its tabs open until you choose one:\n%s", err, cleanupChoices)
		return nil
	}
	set, err = db.SetCleanupPreference(ctx, profile, p, "terminal")
	if err != nil {
		return err
	}
	printCleanup(e, set)
	return nil
}

// cleanupQuestion lists the answers to the cleanup question.
const cleanupQuestion = `  1  never                         close none of the tabs browserop opens
  2  submitted_only                close a tab only once every action prepared in it was sent
  3  submitted_and_probe_blockers  also close a tab it only looked in (nothing typed, no control changed), a blocker screen it met recorded
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
