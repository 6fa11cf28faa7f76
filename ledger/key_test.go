package ledger_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/browserop/browserop/intent"
	"github.com/browserop/browserop/ledger"
	"github.com/stretchr/testify/require"
)

// payloadFields mirrors ledger.Payload without its JSON tags, so that the
// vectors name the fields, not the tags: renaming a tag changes the
// payload and fails the test instead of decoding the vectors differently.
type payloadFields struct {
	Intent, Text, Parent, Thread string
	Position                     *int
	Media                        []ledger.PayloadMedia
	Fields                       intent.Fields
}

// TestPayloadKeysGolden pins ledger.Payload's encoding and the keys of
// payloads the operator writes against vectors computed independently
// (testdata/payload_keys.py, with Python's json and hashlib).
func TestPayloadKeysGolden(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("testdata/payload_keys.json")
	require.NoError(t, err)
	var vectors []struct {
		Name       string        `json:"name"`
		ActionType string        `json:"action_type"`
		Actor      string        `json:"actor"`
		TargetURL  string        `json:"target_url"`
		Fields     payloadFields `json:"fields"`
		Payload    string        `json:"payload"`
		Key        string        `json:"key"`
	}
	require.NoError(t, json.Unmarshal(b, &vectors))
	require.NotEmpty(t, vectors)
	for _, v := range vectors {
		t.Run(v.Name, func(t *testing.T) {
			p := ledger.Payload(v.Fields)
			canon, err := ledger.CanonicalJSON(p.JSON())
			require.NoError(t, err)
			require.Equal(t, v.Payload, string(canon))
			key, err := ledger.IdempotencyKey(v.ActionType, v.Actor, v.TargetURL, p.JSON())
			require.NoError(t, err)
			require.Equal(t, v.Key, key)
			back, err := ledger.ParsePayload(p.JSON())
			require.NoError(t, err)
			require.Equal(t, p, back)
		})
	}
}

func TestParsePayloadRefusesNonObject(t *testing.T) {
	t.Parallel()
	_, err := ledger.ParsePayload(json.RawMessage(`["intent"]`))
	require.ErrorContains(t, err, "payload: ")
}
