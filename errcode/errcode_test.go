package errcode_test

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/budgets"
	"github.com/browserop/browserop/errcode"
	"github.com/browserop/browserop/ledger"
)

func TestOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  error
		want errcode.Class
	}{
		{nil, errcode.Class{Code: "ok", Exit: errcode.ExitOK, HTTP: http.StatusOK}},
		{fmt.Errorf("x: %w", errcode.ErrUsage), errcode.Class{Code: "usage", Exit: errcode.ExitUsage, HTTP: http.StatusBadRequest}},
		{fmt.Errorf("%w: 2 waiting", errcode.ErrNeedsPerson), errcode.Class{Code: "needs_person", Exit: errcode.ExitNeedsPerson, HTTP: http.StatusConflict}},
		{ledger.ErrLocked, errcode.Class{Code: "locked", Exit: errcode.ExitLocked, HTTP: http.StatusConflict}},
		{budgets.ErrExhausted, errcode.Class{Code: "budget_exhausted", Exit: errcode.ExitOK, HTTP: http.StatusTooManyRequests}},
		{errors.New("boom"), errcode.Internal},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, errcode.Of(tt.err), "err %v", tt.err)
	}
}

func TestReason(t *testing.T) {
	t.Parallel()
	err := fmt.Errorf("%w: forbidden: the task is cancelled", errcode.ErrForbidden)
	require.Equal(t, "the task is cancelled", errcode.Reason(err))
}
