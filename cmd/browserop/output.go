package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/browserop/browserop/budgets"
	"github.com/browserop/browserop/ledger"
)

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func table(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 4, 2, ' ', 0) }

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format(time.RFC3339)
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// actionJSON is an action as scripts see it.
type actionJSON struct {
	ID              string          `json:"id"`
	IdempotencyKey  string          `json:"idempotency_key"`
	TaskID          string          `json:"task_id,omitempty"`
	RunID           string          `json:"run_id,omitempty"`
	Type            string          `json:"type"`
	Format          string          `json:"format,omitempty"`
	Site            string          `json:"site,omitempty"`
	Actor           string          `json:"actor"`
	TargetURL       string          `json:"target_url,omitempty"`
	Payload         json.RawMessage `json:"payload"`
	Status          ledger.Status   `json:"status"`
	Attempt         int             `json:"attempt"`
	CanonicalResult string          `json:"canonical_result,omitempty"`
	// LandedURL: the result link the page the submission landed on named.
	LandedURL     string `json:"landed_url,omitempty"`
	FailureReason string `json:"failure_reason,omitempty"`
	FailureClass  string `json:"failure_class,omitempty"`
	// FailureSiteWords: what the site or the adapter said of the failure
	// (page text, kept apart from the reason): the person's only.
	FailureSiteWords string `json:"failure_site_words,omitempty"`
	// OtherAccounts: accounts seen signed in on the site while the action
	// was unsettled; its effect may be on one of them.
	OtherAccounts []string `json:"other_accounts,omitempty"`
	// Confirmation: for an action that needs the person's confirmation
	// (actions show only), its state, who answered and why; Held: why a
	// pass holds it after the answer instead of going on.
	Confirmation string `json:"confirmation,omitempty"`
	Held         string `json:"held,omitempty"`
	// LastStop: for a planned action, the last hard stop that held it (a
	// pass stopped its site before its click); none once it went ahead.
	LastStop    *stopJSON   `json:"last_stop,omitempty"`
	Generation  int64       `json:"generation"`
	CreatedAt   time.Time   `json:"created_at"`
	UpdatedAt   time.Time   `json:"updated_at"`
	ExecutingAt *time.Time  `json:"executing_at,omitempty"`
	SettledAt   *time.Time  `json:"settled_at,omitempty"`
	History     []eventJSON `json:"history,omitempty"`
}

// stopJSON is a hard stop that held a planned action: its kind, its cause
// as the pass reported it ("" for none), the two as the pass's reason, the
// pass's run and when.
type stopJSON struct {
	Kind   string    `json:"kind"`
	Cause  string    `json:"cause,omitempty"`
	Reason string    `json:"reason"`
	RunID  string    `json:"run_id"`
	At     time.Time `json:"at"`
}

type eventJSON struct {
	From       ledger.Status `json:"from"`
	To         ledger.Status `json:"to"`
	Generation int64         `json:"generation"`
	By         string        `json:"by"`
	Reason     string        `json:"reason"`
	At         time.Time     `json:"at"`
}

func toActionJSON(a ledger.Action, evs []ledger.Event) actionJSON {
	out := actionJSON{ID: a.ID, IdempotencyKey: a.IdempotencyKey, TaskID: a.TaskID, RunID: a.RunID, Type: string(a.Type),
		Format: a.Format, Site: a.Site, Actor: a.Actor, TargetURL: a.TargetURL, Payload: a.Payload, Status: a.Status,
		Attempt: a.Attempt, CanonicalResult: a.CanonicalResult, LandedURL: a.LandedURL, FailureReason: a.FailureReason,
		FailureClass: string(a.FailureClass), FailureSiteWords: a.FailureSiteWords, OtherAccounts: a.OtherAccounts, Generation: a.Generation, CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt,
		ExecutingAt: timePtr(a.ExecutingAt), SettledAt: timePtr(a.SettledAt)}
	if s := a.LastStop; s != nil {
		out.LastStop = &stopJSON{Kind: s.Kind, Cause: s.Cause, Reason: s.Reason(), RunID: s.RunID, At: s.At}
	}
	for _, e := range evs {
		out.History = append(out.History, eventJSON{From: e.From, To: e.To, Generation: e.Generation, By: e.By, Reason: e.Reason, At: e.At})
	}
	return out
}

type leaseJSON struct {
	Name        string    `json:"name"`
	Holder      string    `json:"holder"`
	Generation  int64     `json:"generation"`
	Held        bool      `json:"held"`
	AcquiredAt  time.Time `json:"acquired_at"`
	HeartbeatAt time.Time `json:"heartbeat_at"`
	ExpiresAt   time.Time `json:"expires_at"`
}

func toLeaseJSON(l *ledger.Lease, held bool) *leaseJSON {
	if l == nil {
		return nil
	}
	return &leaseJSON{Name: l.Name, Holder: l.Holder, Generation: l.Generation, Held: held,
		AcquiredAt: l.AcquiredAt, HeartbeatAt: l.HeartbeatAt, ExpiresAt: l.ExpiresAt}
}

type budgetJSON struct {
	Limit     string   `json:"limit"`
	Formats   []string `json:"formats"`
	Max       int      `json:"max"`
	Window    string   `json:"window"`
	Used      int      `json:"used"`
	InFlight  int      `json:"in_flight"`
	Remaining int      `json:"remaining"`
}

func toBudgetJSON(us []budgets.Usage) []budgetJSON {
	out := []budgetJSON{}
	for _, u := range us {
		out = append(out, budgetJSON{Limit: u.Limit.Name, Formats: u.Limit.Formats, Max: u.Limit.Max,
			Window: u.Limit.Window.String(), Used: u.Used, InFlight: u.InFlight, Remaining: u.Remaining()})
	}
	return out
}

func printLease(w io.Writer, l *ledger.Lease, held bool) {
	if l == nil {
		fmt.Fprintln(w, "lease: never acquired")
		return
	}
	state := "free (expired or released)"
	if held {
		state = "held"
	}
	fmt.Fprintf(w, "lease %s: %s by %s, generation %d, heartbeat %s, expires %s\n",
		l.Name, state, l.Holder, l.Generation, fmtTime(l.HeartbeatAt), fmtTime(l.ExpiresAt))
}
