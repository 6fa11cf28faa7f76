package mcptools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/mcptools"
	"github.com/browserop/browserop/tasks"
)

// Twenty parallel task_submit calls against a bound of 1 and of 3 accept
// exactly 1 and 3, over either transport.
func TestMCPSubmitBoundHoldsUnderParallelSubmits(t *testing.T) {
	for _, tr := range transports {
		for _, bound := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/%d", tr.name, bound), func(t *testing.T) {
				f := newFixture(t)
				cs := tr.connect(t, f.server, nil)
				c := contract("post")
				c["max_side_effects"] = bound
				task, _ := call[tasks.State](t, cs, mcptools.ToolTaskCreate, obj{"idempotency_key": "bound", "contract": c})
				var wg sync.WaitGroup
				var mu sync.Mutex
				accepted := 0
				for i := range 20 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: mcptools.ToolTaskSubmit,
							Arguments: obj{"task_id": task.ID, "intent": obj{"site": "demo", "actor": "alice", "type": "post", "text": fmt.Sprintf("race %d", i)}}})
						if err != nil {
							t.Errorf("submit %d: %v", i, err)
							return
						}
						if res.IsError {
							if !strings.HasPrefix(text(res), "forbidden: ") || !strings.Contains(text(res), "side effects") {
								t.Errorf("submit %d refused for another reason: %s", i, text(res))
							}
							return
						}
						mu.Lock()
						accepted++
						mu.Unlock()
					}()
				}
				wg.Wait()
				require.Equal(t, bound, accepted, "accepted submits")
				intents, err := f.db.TaskIntents(context.Background(), task.ID)
				require.NoError(t, err)
				require.Len(t, intents, bound)
			})
		}
	}
}

// task_list refuses limit 0, as GET /v1/tasks?limit=0 does.
func TestMCPListLimitZero(t *testing.T) {
	f := newFixture(t)
	cs := connectInMemory(t, f.server, nil)
	msg := callErr(t, cs, mcptools.ToolTaskList, obj{"limit": 0})
	require.True(t, strings.HasPrefix(msg, "usage: "), msg)
	require.Contains(t, msg, "limit")
}

// Arguments that name a field twice are refused, not last-wins.
func TestMCPDuplicateArgumentsRefused(t *testing.T) {
	f := newFixture(t)
	cs := connectInMemory(t, f.server, nil)
	raw := json.RawMessage(`{"idempotency_key": "a", "idempotency_key": "b", "contract": {"domains": ["127.0.0.1"], "capabilities": ["post"]}}`)
	msg := callErr(t, cs, mcptools.ToolTaskCreate, raw)
	require.True(t, strings.HasPrefix(msg, "usage: "), msg)
	require.Contains(t, msg, "duplicate")
	ts, err := f.tasks.List(context.Background(), 100)
	require.NoError(t, err)
	require.Empty(t, ts)
}

// A tool error reads "code: reason" once, never "forbidden: forbidden: ...".
func TestMCPErrorPrefixOnce(t *testing.T) {
	f := newFixture(t)
	cs := connectInMemory(t, f.server, nil)
	task, _ := call[tasks.State](t, cs, mcptools.ToolTaskCreate, obj{"idempotency_key": "p", "contract": contract("post")})
	call[tasks.State](t, cs, mcptools.ToolTaskCancel, obj{"task_id": task.ID})
	msg := callErr(t, cs, mcptools.ToolTaskSubmit, obj{"task_id": task.ID, "intent": obj{"site": "demo", "actor": "alice", "type": "post", "text": "x"}})
	require.True(t, strings.HasPrefix(msg, "forbidden: "), msg)
	require.NotContains(t, strings.TrimPrefix(msg, "forbidden: "), "forbidden", msg)
	msg = callErr(t, cs, mcptools.ToolTaskCreate, obj{"idempotency_key": "q", "contract": obj{"domains": []string{"evil.example"}, "capabilities": []string{"post"}}})
	require.True(t, strings.HasPrefix(msg, "forbidden: "), msg)
	require.NotContains(t, strings.TrimPrefix(msg, "forbidden: "), "forbidden", msg)
}

// task_finish ends a task's intake: with nothing pending it is done at
// once, with a result; later submissions are refused.
func TestMCPFinish(t *testing.T) {
	f := newFixture(t)
	cs := connectInMemory(t, f.server, nil)
	task, _ := call[tasks.State](t, cs, mcptools.ToolTaskCreate, obj{"idempotency_key": "fin", "contract": contract("post")})
	st, _ := call[tasks.State](t, cs, mcptools.ToolTaskFinish, obj{"task_id": task.ID, "reason": "all sent"})
	require.Equal(t, "done", st.Status)
	require.True(t, st.Finished)
	require.NotNil(t, st.Result)
	require.Empty(t, st.Result.Intents)
	again, _ := call[tasks.State](t, cs, mcptools.ToolTaskFinish, obj{"task_id": task.ID})
	require.Equal(t, "done", again.Status, "finishing twice is safe")
	msg := callErr(t, cs, mcptools.ToolTaskSubmit, obj{"task_id": task.ID, "intent": obj{"site": "demo", "actor": "alice", "type": "post", "text": "late"}})
	require.True(t, strings.HasPrefix(msg, "forbidden: "), msg)

	other, _ := call[tasks.State](t, cs, mcptools.ToolTaskCreate, obj{"idempotency_key": "fin2", "contract": contract("post")})
	sub, _ := call[tasks.State](t, cs, mcptools.ToolTaskSubmit, obj{"task_id": other.ID, "intent": obj{"site": "demo", "actor": "alice", "type": "post", "text": "one"}})
	require.NotEmpty(t, sub.SubmittedIntent, "the answer names the intent")
	st, _ = call[tasks.State](t, cs, mcptools.ToolTaskFinish, obj{"task_id": other.ID})
	require.Equal(t, "open", st.Status, "an intent is still pending")
	require.True(t, st.Finished)
	st, _ = call[tasks.State](t, cs, mcptools.ToolTaskCancel, obj{"task_id": other.ID, "reason": "changed my mind"})
	require.Equal(t, "cancelled", st.Status)
	require.Len(t, st.Result.Intents, 1)
	require.Equal(t, sub.SubmittedIntent, st.Result.Intents[0].ID)
	require.Equal(t, tasks.OutcomeNotDone, st.Result.Intents[0].Outcome, "a cancelled task reports what was done: nothing")
}
