package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/browserop/browserop/bundled"
	"github.com/browserop/browserop/errcode"
	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/operator"
	"github.com/browserop/browserop/sites"
)

// cmdSites lists the configured sites, or checks one adapter against the
// signed-in profile.
func cmdSites(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return usageError("sites needs a subcommand: list, check NAME or template NAME")
	}
	switch args[0] {
	case "list":
		return sitesList(e, args[1:])
	case "check":
		return sitesCheck(ctx, e, args[1:])
	case "template":
		return sitesTemplate(e, args[1:])
	}
	return usageError("unknown sites subcommand %q: use list, check NAME or template NAME", args[0])
}

// sitesTemplate prints a bundled adapter, to copy into sites.dir and point
// at one's own site.
func sitesTemplate(e *env, args []string) error {
	fs := e.flags("sites template")
	pos, err := parseChecked(fs, args, func(pos []string) error {
		if len(pos) != 1 {
			return usageError("sites template takes one bundled adapter's name, got %q", pos)
		}
		return nil
	})
	if err != nil {
		return err
	}
	data, err := bundled.Sites.ReadFile("sites/" + pos[0] + ".yaml")
	if err != nil {
		var names []string
		entries, _ := bundled.Sites.ReadDir("sites")
		for _, en := range entries {
			names = append(names, strings.TrimSuffix(en.Name(), ".yaml"))
		}
		return usageError("no bundled adapter %q (bundled: %s)", pos[0], strings.Join(names, ", "))
	}
	_, err = e.stdout.Write(data)
	return err
}

type siteJSON struct {
	Name    string   `json:"name"`
	Origins []string `json:"origins"`
	Kinds   []string `json:"kinds"`
}

func sitesList(e *env, args []string) error {
	fs := e.flags("sites list")
	if _, err := parseChecked(fs, args, noArgs(fs)); err != nil {
		return err
	}
	cfg, err := e.config()
	if err != nil {
		return err
	}
	adapters, err := loadSites(cfg)
	if err != nil {
		return err
	}
	out := make([]siteJSON, 0, len(adapters))
	for _, a := range adapters {
		s := siteJSON{Name: a.Name(), Origins: a.Origins(), Kinds: []string{}}
		for _, k := range kind.All {
			if a.Supports(k) {
				s.Kinds = append(s.Kinds, string(k))
			}
		}
		out = append(out, s)
	}
	if e.json {
		return writeJSON(e.stdout, out)
	}
	tw := table(e.stdout)
	fmt.Fprintln(tw, "SITE\tORIGINS\tACTIONS")
	for _, s := range out {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Name, strings.Join(s.Origins, " "), strings.Join(s.Kinds, " "))
	}
	return tw.Flush()
}

// sitesCheck opens each page a site's adapter names on the signed-in
// profile and reports what each selector matches, who is signed in, and
// the first items each search reads. On an action's page it follows the
// action up to its committing click (typing --text, running the steps)
// and never makes the click; it types nothing into an editor that keeps
// drafts unless --fill says to.
func sitesCheck(ctx context.Context, e *env, args []string) error {
	fs := e.flags("sites check")
	actor := fs.String("actor", "", "the account the searches look for (default: the one signed in)")
	target := fs.String("target", "", "a post on the site, for the actions and searches on an object (reply, like, follow, comments)")
	text := fs.String("text", "", "a text to type into each action's fields (never submitted), and for the pages and searches its title names ({title}, {text}); without it nothing is typed")
	fill := fs.Bool("fill", false, "type --text into editors that keep drafts by themselves too (drafts: true): the site may keep a draft of it")
	timeout := fs.Duration("timeout", 2*time.Minute, "upper bound for the whole check")
	pos, err := parseChecked(fs, args, func(pos []string) error {
		if len(pos) != 1 {
			return usageError("sites check takes one site name, got %q", pos)
		}
		if *fill && *text == "" {
			return usageError("sites check --fill types --text: give --text too")
		}
		return nil
	})
	if err != nil {
		return err
	}
	cfg, db, err := e.open(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	site, err := configuredSite(cfg, pos[0], "site")
	if err != nil {
		return err
	}
	d, ok := site.(*sites.Declarative)
	if !ok {
		return usageError("site %q is not a declarative adapter: sites check reads its YAML", pos[0])
	}
	bc, err := cfg.ForBrowser(e.environ)
	if err != nil {
		return err
	}
	if err := preflight(bc); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	b, release, err := inspectBrowser(ctx, bc)
	if err != nil {
		return connectError(bc, err)
	}
	// Its tab is a probe tab in the tab ledger, closed with proof or kept
	// as the cleanup preference says; with --text it is no probe (text
	// was typed in it) and is kept, unless its Chrome stops with check.
	probe := operator.NewProbe(db, b, ledger.PurposeSitesCheck, profileKey(bc), nil)
	defer func() {
		if left := operator.LeftOpen(probe.Finish(ctx)); left != "" {
			fmt.Fprintf(e.stderr, "sites check: %s\n", clean(left))
		}
		release(nil)
	}()
	tab, err := probe.Open(ctx, d.Name(), d.Origins()[0])
	if err != nil {
		return connectError(bc, err)
	}
	if *text != "" {
		if err := probe.Typed(ctx, tab); err != nil {
			return err
		}
	}
	who := *actor
	if who == "" {
		if status, err := d.OpenHome(ctx, tab); err == nil {
			if blk, _ := probe.Look(ctx, tab, d, status); !blk.Blocked() {
				who, _ = d.Identity(ctx, tab)
			}
		} else {
			probe.NoteBlocker(ctx, tab, err)
		}
	}
	var opts []sites.CheckOption
	if *fill {
		opts = append(opts, sites.FillDrafts())
	}
	rep, err := d.Check(ctx, tab, who, *target, *text, opts...)
	if err != nil {
		probe.NoteBlocker(ctx, tab, err)
		return err
	}
	if e.json {
		if err := writeJSON(e.stdout, rep); err != nil {
			return err
		}
	} else {
		printCheck(e, rep, who)
	}
	if problems := rep.Problems(); len(problems) > 0 {
		// A search that cannot prove absence would let a published item
		// be taken for missing, and a page, a step or a field that fails
		// here fails every action: the adapter is not fit to publish with.
		for _, p := range problems {
			fmt.Fprintf(e.stderr, "sites check: %s\n", clean(p))
		}
		return quietExit{errcode.ExitUsage}
	}
	return nil
}

func printCheck(e *env, rep sites.CheckReport, actor string) {
	w := e.stdout
	switch {
	case rep.IdentityError != "":
		fmt.Fprintf(w, "identity: not read: %s\n", clean(rep.IdentityError))
	default:
		fmt.Fprintf(w, "identity: signed in as @%s\n", clean(rep.Identity))
	}
	if actor != "" && actor != rep.Identity {
		fmt.Fprintf(w, "searches look for @%s\n", clean(actor))
	}
	for _, p := range rep.Pages {
		fmt.Fprintf(w, "\n%s: %s", p.Key, clean(dash(p.URL)))
		if p.Status != 0 {
			fmt.Fprintf(w, " (status %d)", p.Status)
		}
		fmt.Fprintln(w)
		if p.Skipped != "" {
			fmt.Fprintf(w, "  skipped: %s\n", p.Skipped)
		}
		if p.Error != "" {
			fmt.Fprintf(w, "  error: %s\n", clean(p.Error))
		}
		if p.NotFollowed != "" {
			fmt.Fprintf(w, "  not followed to the click: %s\n", clean(p.NotFollowed))
		}
		if slices.ContainsFunc(p.Selectors, func(s sites.SelectorCount) bool { return s.Count == 0 && s.When == sites.CheckedBeforeText }) {
			fmt.Fprintln(w, "  (counted before the text: a later step's element or the committing control may show only after it, so 0 there is no problem)")
		}
		if slices.ContainsFunc(p.Selectors, func(s sites.SelectorCount) bool { return s.When == sites.CheckedAtClick }) {
			fmt.Fprintln(w, "  (followed up to the committing click, which check never makes)")
		}
		tw := table(w)
		for _, s := range p.Selectors {
			mark := ""
			switch {
			case s.Error != "":
				mark = "error: " + clean(s.Error)
			case s.Problem != "":
				mark = "PROBLEM: " + clean(s.Problem)
			case s.Count == 0:
				mark = "matches nothing"
			case s.Count > 1 && needsOne(s.Key):
				mark = "must match one element"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%s\t%s\n", s.Key, clean(s.Selector), s.Count, s.When, mark)
		}
		tw.Flush()
	}
	for _, s := range rep.Searches {
		fmt.Fprintf(w, "\nsearch %s: %s\n", s.Kind, clean(dash(s.URL)))
		if s.Skipped != "" {
			fmt.Fprintf(w, "  skipped: %s\n", s.Skipped)
			continue
		}
		if s.Error != "" {
			fmt.Fprintf(w, "  error: %s\n", clean(s.Error))
		}
		fmt.Fprintf(w, "  %d items on %d pages, complete: %t", s.Total, s.Pages, s.Complete)
		if s.Counted {
			fmt.Fprint(w, ", counted: the site's count agreed on every page")
		}
		fmt.Fprintln(w)
		if s.Blind != "" {
			fmt.Fprintf(w, "  CANNOT PROVE ABSENCE: %s\n", clean(s.Blind))
		}
		for i, it := range s.Items {
			fmt.Fprintf(w, "  %d. @%s %s %s\n", i+1, clean(dash(it.Author)), clean(dash(it.Link)), timeOrDash(it.Time))
			fmt.Fprintf(w, "     %q\n", firstLine(it.Text))
			if !it.OK() {
				fmt.Fprintf(w, "     does not match anything, because: %s\n", clean(strings.Join(it.Problems, "; ")))
			}
		}
	}
}

// needsOne reports whether a selector key must name exactly one element
// where it is used (an editor, a control), not a list.
func needsOne(key string) bool {
	for _, suffix := range []string{".selector", ".click", ".frame"} {
		if strings.HasSuffix(key, suffix) && !strings.HasPrefix(key, "blockers") {
			return true
		}
	}
	return false
}

func timeOrDash(t time.Time) string {
	if t.IsZero() {
		return "(no time)"
	}
	return t.UTC().Format(time.RFC3339)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(line); len(r) > 80 {
		line = string(r[:80]) + "…"
	}
	return line
}
