package operator

import "github.com/browserop/browserop/ledger"

// Note is what became of an action in one pass: the word its ActionReport
// carries, and the count it adds to in the pass's Summary.
type Note string

// The notes of a pass, as docs/operator.md lists them.
const (
	// Performed in this pass, or settled by verifying it.
	NoteVerified  Note = "verified"
	NoteAbsent    Note = "absent"
	NoteAmbiguous Note = "ambiguous"
	// Settled by reconciliation: an action an earlier pass left executing
	// or ambiguous, verified against the live site.
	NoteReconciledVerified  Note = "reconciled_verified"
	NoteReconciledAbsent    Note = "reconciled_absent"
	NoteReconciledAmbiguous Note = "reconciled_ambiguous"
	// Settled before this pass: nothing is done again.
	NoteAlreadyVerified    Note = "already_verified"
	NoteFailedBefore       Note = "failed_before"
	NoteAmbiguousWaiting   Note = "ambiguous_waiting"
	NoteAwaitingModeration Note = "awaiting_moderation"
	// Failed before anything was submitted.
	NoteMissed             Note = "missed"
	NoteStepFailed         Note = "step_failed"
	NoteUploadFailed       Note = "upload_failed"
	NoteReadBackMismatch   Note = "read_back_mismatch"
	NoteRefusedByAuthority Note = "refused_by_authority"
	NoteCancelled          Note = "cancelled"
	NoteRefusedBeforeClick Note = "refused_before_click"
	// What the site answered to the click.
	NoteRefused     Note = "refused"
	NoteAlreadyDone Note = "already_done"
	NoteModerated   Note = "moderated"
	// The committing click was dispatched and provably sent nothing
	// (sites.ErrNotSent).
	NoteNotSent Note = "not_sent"
	// Not performed in this pass: a hard stop, a confirmation to wait for.
	NoteHeld              Note = "held"
	NoteNeedsConfirmation Note = "needs_confirmation"
	// A confirmation handoff's end.
	NoteDeclined            Note = "declined"
	NoteVerifiedFromHandoff Note = "verified_from_handoff"
	NoteHandoffHeld         Note = "handoff_held"
)

// Notes lists every Note.
var Notes = []Note{
	NoteVerified, NoteAbsent, NoteAmbiguous,
	NoteReconciledVerified, NoteReconciledAbsent, NoteReconciledAmbiguous,
	NoteAlreadyVerified, NoteFailedBefore, NoteAmbiguousWaiting, NoteAwaitingModeration,
	NoteMissed, NoteStepFailed, NoteUploadFailed, NoteReadBackMismatch,
	NoteRefusedByAuthority, NoteCancelled, NoteRefusedBeforeClick,
	NoteRefused, NoteAlreadyDone, NoteModerated, NoteNotSent,
	NoteHeld, NoteNeedsConfirmation,
	NoteDeclined, NoteVerifiedFromHandoff, NoteHandoffHeld,
}

// settleNotes are the notes of a verification's three ends: of a pass's
// own action, or of one reconciliation settles.
type settleNotes struct{ verified, absent, ambiguous Note }

var (
	performedNotes  = settleNotes{NoteVerified, NoteAbsent, NoteAmbiguous}
	reconciledNotes = settleNotes{NoteReconciledVerified, NoteReconciledAbsent, NoteReconciledAmbiguous}
)

// Count is a key of Summary.Counts: every Note, and these.
type Count string

const (
	CountConflicts       Count = "conflicts"        // calendar entries edited after they were performed
	CountBudgetSkips     Count = "budget_skips"     // intents a spent budget left for later
	CountPlannerFailures Count = "planner_failures" // planner runs that failed
	CountQualitySkips    Count = "quality_skips"    // planner candidates the quality gate refused
	CountReconciled      Count = "reconciled"       // actions reconciliation looked at
	CountTasksDone       Count = "tasks_done"       // tasks this pass completed
	CountTabsRecovered   Count = "tabs_recovered"   // owned tabs that went missing and were opened again
	CountTabsResumed     Count = "tabs_resumed"     // tabs taken up again after the browser connection ended
	CountTabsMissing     Count = "tabs_missing"     // tab records none of whose tabs was open any more
	CountTabsHandedOff   Count = "tabs_handed_off"  // tabs given to the person
	// CountHandoffTabsGone and CountHandoffTabsMoved count the handed-off
	// tabs a pass found closed by the person, or on another page
	// (reconcileHandoffTabs).
	CountHandoffTabsGone  Count = "handoff_tabs_gone"
	CountHandoffTabsMoved Count = "handoff_tabs_moved"
	// CountCleanupStopped counts passes whose cleanup stopped because its
	// keep set did not hold (keepSetHolds).
	CountCleanupStopped Count = "cleanup_stopped"
)

// Counts lists every Count that is not a Note (and not a tabsCount).
var Counts = []Count{
	CountConflicts, CountBudgetSkips, CountPlannerFailures, CountQualitySkips,
	CountReconciled, CountTasksDone,
	CountTabsRecovered, CountTabsResumed, CountTabsMissing, CountTabsHandedOff,
	CountHandoffTabsGone, CountHandoffTabsMoved, CountCleanupStopped,
}

// tabsCount is the count of tabs whose closure ended in state
// ("tabs_closed_verified", "tabs_closure_unverified").
func tabsCount(state ledger.TabState) Count { return Count("tabs_" + string(state)) }

// The status of an ActionReport whose intent got no action in this pass,
// beside the ledger's statuses.
const (
	StatusNotAttempted ledger.Status = "not_attempted" // a hard stop or a shutdown came first
	StatusBudgetSkip   ledger.Status = "budget_skip"   // its budget is spent
	StatusConflict     ledger.Status = "conflict"      // a calendar entry edited after it was performed
	StatusQualitySkip  ledger.Status = "quality_skip"  // a planner candidate below the quality threshold
)
