package main

import (
	"bytes"
	"testing"

	"github.com/browserop/browserop/operator"
	"github.com/stretchr/testify/require"
)

// A pass that stopped one site and then every site says both, and does not
// claim the other sites went on.
func TestPrintSummaryBothStops(t *testing.T) {
	var out bytes.Buffer
	e := &env{stdout: &out}
	require.NoError(t, printSummary(e, &operator.Summary{RunID: "run_1", Outcome: operator.OutcomeHardStop,
		HardStop: "the lease was lost before the click", PassStop: "the lease was lost before the click",
		StoppedSites: map[string]string{"demo": "captcha"}, Counts: map[string]int{}}))
	require.Contains(t, out.String(), "hard stop on site demo: captcha\n")
	require.NotContains(t, out.String(), "the other sites went on")
	require.Contains(t, out.String(), "hard stop: the lease was lost before the click\n")

	out.Reset()
	require.NoError(t, printSummary(e, &operator.Summary{RunID: "run_2", Outcome: operator.OutcomeHardStop,
		HardStop: "captcha", StoppedSites: map[string]string{"demo": "captcha"}, Counts: map[string]int{}}))
	require.Contains(t, out.String(), "hard stop on site demo: captcha (the other sites went on)\n")
	require.NotContains(t, out.String(), "hard stop: ")
}
