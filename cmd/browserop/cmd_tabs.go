package main

import (
	"context"
	"fmt"
	"time"

	"github.com/browserop/browserop/browser"
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
		return "proved: listed before, close confirmed, absent after"
	case ledger.TabClosureUnverified:
		return "not proved: a later pass looks again"
	case ledger.TabMissing:
		return "gone before browserop closed it"
	}
	return "open"
}

// cmdTabs prints the tab ledger: every tab record browserop wrote, with
// its site, state, inspection epoch, what proves its closing, and its task.
func cmdTabs(ctx context.Context, e *env, args []string) error {
	fs := e.flags("tabs")
	open := fs.Bool("open", false, "only the records not closed with proof")
	e.mustExist = true
	cfg, db, _, err := e.openCommand(ctx, fs, args, noArgs(fs))
	if err != nil {
		return err
	}
	defer db.Close()
	adapters, err := loadSites(cfg)
	if err != nil {
		return err
	}
	siteOf := map[string]string{}
	for _, a := range adapters {
		for _, o := range a.Origins() {
			siteOf[browser.Origin(o)] = a.Name()
		}
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
		site := siteOf[browser.Origin(t.URL)]
		if site == "" {
			site = browser.Origin(t.URL)
		}
		out = append(out, tabJSON{Record: t.ID, Site: site, URL: t.URL, State: t.State, Epoch: t.Epoch, CloseProof: closeProof(t.State),
			TaskID: t.TaskID, RunID: t.RunID, Ownership: string(t.Ownership), UpdatedAt: t.UpdatedAt})
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
