package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/config"
	"github.com/browserop/browserop/ledger"
)

// tabJSON is a tab record as scripts see it (never the raw target id).
type tabJSON struct {
	Record     int64           `json:"record"`
	Site       string          `json:"site"`
	URL        string          `json:"url"`
	State      ledger.TabState `json:"state"`
	Epoch      int             `json:"epoch"`
	CloseProof string          `json:"close_proof"`
	TaskID     string          `json:"task_id,omitempty"`
	RunID      string          `json:"run_id,omitempty"`
	Ownership  string          `json:"ownership"`
	UpdatedAt  time.Time       `json:"updated_at"`
}

// closeProof says what the record proves about its tab's closing.
func closeProof(s ledger.TabState) string {
	switch s {
	case ledger.TabClosedVerified:
		return "proved: listed on both surfaces before, close confirmed, absent from both after"
	case ledger.TabClosureUnverified:
		return "not proved: a later pass looks again"
	case ledger.TabMissing:
		return "gone before browserop closed it"
	}
	return "open"
}

// cmdTabs prints the tab ledger: every tab record browserop wrote, with
// its site, state, inspection epoch, what proves its closing, and its task;
// "tabs show RECORD" prints one record with the facts of its close.
func cmdTabs(ctx context.Context, e *env, args []string) error {
	if len(args) > 0 && args[0] == "show" {
		return tabsShow(ctx, e, args[1:])
	}
	fs := e.flags("tabs")
	open := fs.Bool("open", false, "only the records not closed with proof")
	e.mustExist = true
	cfg, db, _, err := e.openCommand(ctx, fs, args, noArgs(fs))
	if err != nil {
		return err
	}
	defer db.Close()
	siteOf, err := tabSites(cfg)
	if err != nil {
		return err
	}
	var states []ledger.TabState
	if *open {
		states = []ledger.TabState{ledger.TabOpening, ledger.TabLive, ledger.TabHandoff, ledger.TabMissing, ledger.TabClosureUnverified}
	}
	tabs, err := db.ListTabs(ctx, "", states...)
	if err != nil {
		return err
	}
	out := make([]tabJSON, 0, len(tabs))
	for _, t := range tabs {
		out = append(out, toTabJSON(t, siteOf))
	}
	if e.json {
		return writeJSON(e.stdout, out)
	}
	if len(out) == 0 {
		fmt.Fprintln(e.stdout, "no tab records")
		return nil
	}
	tw := table(e.stdout)
	fmt.Fprintln(tw, "RECORD\tSITE\tSTATE\tEPOCH\tCLOSE PROOF\tTASK\tUPDATED")
	for _, t := range out {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\t%s\t%s\n", t.Record, dash(t.Site), t.State, t.Epoch, t.CloseProof, dash(t.TaskID), fmtTime(t.UpdatedAt))
	}
	return tw.Flush()
}

// tabSites returns a function naming the configured site a tab record's
// URL is on (its origin when none is).
func tabSites(cfg config.Config) (func(string) string, error) {
	adapters, err := loadSites(cfg)
	if err != nil {
		return nil, err
	}
	siteOf := map[string]string{}
	for _, a := range adapters {
		for _, o := range a.Origins() {
			siteOf[browser.Origin(o)] = a.Name()
		}
	}
	return func(url string) string {
		if site := siteOf[browser.Origin(url)]; site != "" {
			return site
		}
		return browser.Origin(url)
	}, nil
}

func toTabJSON(t ledger.Tab, siteOf func(string) string) tabJSON {
	return tabJSON{Record: t.ID, Site: siteOf(t.URL), URL: t.URL, State: t.State, Epoch: t.Epoch, CloseProof: closeProof(t.State),
		TaskID: t.TaskID, RunID: t.RunID, Ownership: string(t.Ownership), UpdatedAt: t.UpdatedAt}
}

// tabShowJSON is one tab record with the facts of its close (never the
// raw target id).
type tabShowJSON struct {
	tabJSON
	// Proven is what the facts of the current epoch prove (ledger.CloseProof):
	// closed_verified, missing, closure_unverified, or "" (nothing yet),
	// and Why says why.
	Proven ledger.TabState `json:"proven"`
	Why    string          `json:"why"`
	Facts  []tabFactJSON   `json:"facts"`
}

// tabFactJSON is one recorded fact. Current is false for a fact of an
// earlier inspection epoch, which counts for nothing now.
type tabFactJSON struct {
	Epoch      int                `json:"epoch"`
	Current    bool               `json:"current"`
	Fact       ledger.TabFactKind `json:"fact"`
	Controller string             `json:"controller,omitempty"`
	Person     string             `json:"person,omitempty"`
	Receipt    string             `json:"receipt,omitempty"`
	At         time.Time          `json:"at"`
}

// receiptText says what a close receipt observed.
func receiptText(f ledger.TabFact) string {
	switch {
	case f.Gone:
		return "the tab was already gone"
	case f.Sent && f.Confirmed:
		return "sent, destruction confirmed"
	case f.Sent:
		return "sent, destruction not confirmed"
	}
	return "not sent"
}

// tabsShow prints one tab record and the facts recorded about its close,
// each epoch's, and what those of the current epoch prove.
func tabsShow(ctx context.Context, e *env, args []string) error {
	var id int64
	check := func(pos []string) error {
		if len(pos) != 1 {
			return usageError("tabs show needs one tab record number (see browserop tabs), got %d arguments", len(pos))
		}
		n, err := strconv.ParseInt(pos[0], 10, 64)
		if err != nil || n <= 0 {
			return usageError("tab record %q is not a record number (see browserop tabs)", pos[0])
		}
		id = n
		return nil
	}
	e.mustExist = true
	cfg, db, _, err := e.openCommand(ctx, e.flags("tabs show"), args, check)
	if err != nil {
		return err
	}
	defer db.Close()
	siteOf, err := tabSites(cfg)
	if err != nil {
		return err
	}
	t, err := db.GetTab(ctx, id)
	if err != nil {
		return err
	}
	facts, err := db.TabFacts(ctx, id)
	if err != nil {
		return err
	}
	out := tabShowJSON{tabJSON: toTabJSON(t, siteOf), Facts: make([]tabFactJSON, 0, len(facts))}
	out.Proven, out.Why = ledger.CloseProof(t, facts)
	for _, f := range facts {
		fj := tabFactJSON{Epoch: f.Epoch, Current: f.Epoch == t.Epoch, Fact: f.Kind, At: f.At}
		if f.Kind == ledger.FactCloseReceipt {
			fj.Receipt = receiptText(f)
		} else {
			fj.Controller, fj.Person = f.Controller.String(), f.Person.String()
		}
		out.Facts = append(out.Facts, fj)
	}
	if e.json {
		return writeJSON(e.stdout, out)
	}
	proven := string(out.Proven)
	if t.State == ledger.TabClosedVerified && len(facts) == 0 {
		proven = "closed_verified before close facts were recorded (ledger migration 0012)"
	} else if proven != "" {
		proven += ": " + out.Why
	} else {
		proven = out.Why
	}
	tw := table(e.stdout)
	for _, kv := range [][2]string{
		{"record", fmt.Sprint(t.ID)}, {"site", out.Site}, {"url", t.URL}, {"state", string(t.State)}, {"epoch", fmt.Sprint(t.Epoch)},
		{"proven", proven}, {"ownership", string(t.Ownership)}, {"task", t.TaskID}, {"run", t.RunID},
		{"created", fmtTime(t.CreatedAt)}, {"updated", fmtTime(t.UpdatedAt)},
	} {
		if kv[1] != "" {
			fmt.Fprintf(tw, "%s:\t%s\n", kv[0], clean(kv[1]))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(out.Facts) == 0 {
		fmt.Fprintln(e.stdout, "no close facts recorded")
		return nil
	}
	fmt.Fprintln(e.stdout)
	tw = table(e.stdout)
	fmt.Fprintln(tw, "EPOCH\tFACT\tCONTROLLER\tPERSON\tRECEIPT\tAT")
	for _, f := range out.Facts {
		epoch := fmt.Sprint(f.Epoch)
		if !f.Current {
			epoch += " (over)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", epoch, f.Fact, dash(f.Controller), dash(f.Person), dash(f.Receipt), fmtTime(f.At))
	}
	return tw.Flush()
}
