package operator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/sites"
)

// readBacks is this process's memory of what browserop read back from the
// fields it filled (sites.ReadBacks): it is what makes a field's
// agent_filled record trusted. It lives as long as the process, not in the
// ledger: after a restart (a lost context) browserop's own earlier text is
// of unknown origin and kept (docs/operator.md, "Field provenance").
var readBacks = sites.NewReadBacks(4096)

// fieldStore keeps the field provenance of one action in one tab record
// and inspection epoch in the ledger, under the pass's fence.
type fieldStore struct {
	p      *pass
	action string
	tab    int64
	epoch  int
}

var _ sites.FieldStore = fieldStore{}

// fieldLedger is the sites.FieldLedger of the action m prepares in its
// tab record and epoch now.
func (p *pass) fieldLedger(m *mutation) sites.FieldLedger {
	s := fieldStore{p: p, action: m.a.ID, tab: m.st.rec.ID, epoch: m.st.rec.Epoch}
	return sites.TrackFields(s, readBacks, fmt.Sprintf("%s/%d/%d", s.action, s.tab, s.epoch))
}

func (s fieldStore) key(fp string) ledger.FieldKey {
	return ledger.FieldKey{ActionID: s.action, TabID: s.tab, Epoch: s.epoch, Field: fp}
}

// FieldState reads the field's record; none is "".
func (s fieldStore) FieldState(ctx context.Context, fp string) (sites.FieldState, error) {
	rec, err := s.p.r.db.FieldProvenanceOf(ctx, s.key(fp))
	switch {
	case errors.Is(err, ledger.ErrNotFound):
		return "", nil
	case err != nil:
		return "", err
	}
	return sites.FieldState(rec.State), nil
}

// SetFieldState records the field's state, even while the pass is being
// cancelled: like a transition, what was typed must not go unrecorded.
func (s fieldStore) SetFieldState(ctx context.Context, fp string, st sites.FieldState) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	_, err := s.p.r.db.RecordFieldProvenance(ctx, s.p.fence(), s.key(fp), ledger.FieldState(st))
	return err
}
