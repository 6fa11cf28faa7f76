package operator

import (
	"fmt"

	"github.com/browserop/browserop/authority"
	"github.com/browserop/browserop/errcode"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/tasks"
)

// refuseOutsideAuthority checks, right before an action is prepared and
// again right before its click, that the task may still do it: the task
// is read afresh (a cancel or a grant may have come meanwhile) and its
// effective authority (contract domains plus grants, within the ceiling as
// configured now) must cover the site, the target and the capability. A
// cancelled task's action ends abandoned; one outside the authority ends
// as a definitive failure with the reason. Either way nothing is clicked
// and refused is true; *a is the action as it ended.
func (p *pass) refuseOutsideAuthority(a *ledger.Action, in intent, entry string) (refused bool, err error) {
	task, err := p.r.db.GetTask(p.ctx, in.task.ID)
	if err != nil {
		return false, err
	}
	class, reason, note := ledger.Definitive, "", NoteRefusedByAuthority
	switch {
	case task.Status == ledger.TaskCancelled:
		class, reason, note = ledger.Abandoned, "nothing was clicked: the task was cancelled", NoteCancelled
	case p.r.ceilingErr != nil:
		reason = "nothing was clicked: the ceiling is not valid: " + p.r.ceilingErr.Error()
	default:
		site, ok := p.r.sites[in.site]
		if !ok {
			reason = fmt.Sprintf("nothing was clicked: site %q is no longer configured", in.site)
			break
		}
		cerr := p.r.ceiling.Check(tasks.AuthorityOf(task), site, in.target, in.kind.Capability())
		if cerr == nil {
			return false, nil
		}
		reason = "nothing was clicked: " + authorityReason(cerr)
	}
	*a, err = p.endFailed(*a, entry, class, reason, note)
	return true, err
}

// authorityReason is an authority error as a failure reason.
func authorityReason(err error) string {
	return authority.ErrDenied.Error() + ": " + errcode.After(err, authority.ErrDenied)
}
