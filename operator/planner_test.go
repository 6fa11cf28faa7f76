package operator_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/operator"
)

// script writes an executable shell script and returns its path.
func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "planner.sh")
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o700))
	return p
}

func TestPlanner(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	obs := operator.Observations{Now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}

	t.Run("OK", func(t *testing.T) {
		// The planner sees the observations on stdin.
		p := operator.Planner{Command: []string{"/bin/sh", script(t, `grep -q '"now":"2026-11-30T12:00:00Z"' || exit 7
echo '{"candidates":[{"site":"demo","actor":"alice","type":"post","text":"hi","score":0.9,"evidence":"asked"}]}'`)}}
		cs, err := p.Plan(ctx, obs)
		require.NoError(t, err)
		require.Len(t, cs, 1)
		require.Equal(t, 0.9, cs[0].Score)
	})
	t.Run("NoPlanner", func(t *testing.T) {
		cs, err := operator.Planner{}.Plan(ctx, obs)
		require.NoError(t, err)
		require.Empty(t, cs)
	})
	for name, tc := range map[string]struct {
		body string
		want string
	}{
		"Garbage":        {`echo 'I think you should post something nice'`, "not the candidate schema"},
		"UnknownField":   {`echo '{"candidates":[],"grants":["evil.example"]}'`, `unknown field "grants"`},
		"AuthorityField": {`echo '{"candidates":[{"site":"demo","actor":"alice","type":"post","text":"x","score":1,"evidence":"e","domains":["evil.example"]}]}'`, `unknown field "domains"`},
		"BadScore":       {`echo '{"candidates":[{"site":"demo","actor":"alice","type":"post","text":"x","score":7,"evidence":"e"}]}'`, "score 7 is not within 0..1"},
		"BadType":        {`echo '{"candidates":[{"site":"demo","actor":"alice","type":"delete","score":1,"evidence":"e"}]}'`, `type "delete"`},
		"NoEvidence":     {`echo '{"candidates":[{"site":"demo","actor":"alice","type":"post","text":"x","score":1,"evidence":""}]}'`, "evidence is required"},
		"NoList":         {`echo '{}'`, `no "candidates" list`},
		"Trailing":       {`echo '{"candidates":[]} {"candidates":[]}'`, "data after the answer"},
		"ExitCode":       {`echo oops >&2; exit 3`, "exit status 3"},
		"Huge":           {`yes '{"candidates":[' | head -c 3000000`, "output exceeds 1048576 bytes"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := operator.Planner{Command: []string{"/bin/sh", script(t, tc.body)}}.Plan(ctx, obs)
			require.ErrorIs(t, err, operator.ErrPlanner)
			require.ErrorContains(t, err, tc.want)
		})
	}
	t.Run("Hangs", func(t *testing.T) {
		t.Parallel()
		start := time.Now()
		// A child that outlives the shell must not keep the pass waiting.
		p := operator.Planner{Command: []string{"/bin/sh", script(t, "sleep 60 &\nsleep 60\n")}, Timeout: 300 * time.Millisecond}
		_, err := p.Plan(ctx, obs)
		require.ErrorIs(t, err, operator.ErrPlanner)
		require.ErrorContains(t, err, "no answer within 300ms")
		require.Less(t, time.Since(start), 20*time.Second, "the planner is killed, not waited for")
	})
	t.Run("TooMany", func(t *testing.T) {
		t.Parallel()
		body := `printf '{"candidates":['; i=0; while [ $i -lt 101 ]; do [ $i -gt 0 ] && printf ','; printf '{"site":"d","actor":"a","type":"like","target":"http://x/p/%d","score":1,"evidence":"e"}' $i; i=$((i+1)); done; printf ']}'`
		_, err := operator.Planner{Command: []string{"/bin/sh", script(t, body)}}.Plan(ctx, obs)
		require.ErrorContains(t, err, "101 candidates, at most 100")
	})
}

func FuzzParseCandidates(f *testing.F) {
	f.Add([]byte(`{"candidates":[{"site":"demo","actor":"alice","type":"post","text":"hi","score":0.5,"evidence":"e"}]}`))
	f.Add([]byte(`{"candidates":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		cs, err := operator.ParseCandidates(data)
		if err != nil {
			return
		}
		for _, c := range cs {
			if c.Score < 0 || c.Score > 1 || c.Site == "" || c.Evidence == "" {
				t.Fatalf("accepted an invalid candidate: %+v", c)
			}
		}
	})
}

// TestPlannerCandidateTakesNoFields: a planner proposes text only; a
// candidate that sets entry fields is refused, as one with media is.
func TestPlannerCandidateTakesNoFields(t *testing.T) {
	_, err := operator.ParseCandidates([]byte(`{"candidates":[{"site":"demo","actor":"alice","type":"post","text":"hi","fields":{"category":"News"},"score":0.5,"evidence":"e"}]}`))
	require.ErrorIs(t, err, operator.ErrPlanner)
	require.ErrorContains(t, err, "a candidate takes no entry fields")
	_, err = operator.ParseCandidates([]byte(`{"candidates":[{"site":"demo","actor":"alice","type":"post","text":"hi","score":0.5,"evidence":"e"}]}`))
	require.NoError(t, err)
}
