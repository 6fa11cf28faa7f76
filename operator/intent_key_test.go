package operator

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/browserop/browserop/calendar"
	intents "github.com/browserop/browserop/intent"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/media"
)

// TestIntentKeysGolden pins the ledger intent the pass builds for each kind
// of request, down to its idempotency key, against vectors computed
// independently (ledger/testdata/payload_keys.py): a change in how an
// intent is built or spelled must fail here, never silently re-key the
// actions already recorded.
func TestIntentKeysGolden(t *testing.T) {
	raw, err := os.ReadFile("testdata/intent_keys.json")
	if err != nil {
		t.Fatal(err)
	}
	var vectors []struct {
		Name    string `json:"name"`
		Request struct {
			Origin, Type, Actor, Target, Text string
			Parts                             []string
			Part                              int
			Parent                            string
			// Media are files written to a media directory (their bytes
			// in hex) and read from it as the calendar reads them.
			Media []struct{ File, Data, Alt string }
			// Fields are the entry fields the entry sets.
			Fields intents.Fields
		} `json:"request"`
		Type      string `json:"type"`
		Format    string `json:"format"`
		TargetURL string `json:"target_url"`
		Payload   string `json:"payload"`
		Key       string `json:"key"`
	}
	if err := json.Unmarshal(raw, &vectors); err != nil {
		t.Fatal(err)
	}
	if len(vectors) == 0 {
		t.Fatal("no vectors")
	}
	for _, v := range vectors {
		t.Run(v.Name, func(t *testing.T) {
			r := v.Request
			e := calendar.Entry{ID: "e", Request: intents.Request{Site: "demo", Actor: r.Actor, Type: intents.ParseType(r.Type), Text: r.Text, Parts: r.Parts, Target: r.Target, Fields: r.Fields}}
			dir := t.TempDir()
			for _, m := range r.Media {
				data, err := hex.DecodeString(m.Data)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, m.File), data, 0o600); err != nil {
					t.Fatal(err)
				}
				it, err := media.Load(dir, m.File, m.Alt)
				if err != nil {
					t.Fatal(err)
				}
				e.Items = append(e.Items, it)
			}
			if r.Type == "thread" && len(e.Items) > 0 {
				// A thread's media are its parts': these are part r.Part's.
				e.PartItems = make([][]media.Item, r.Part+1)
				e.PartItems[r.Part], e.Items = e.Items, nil
			}
			task := ledger.Task{ID: "task_1"}
			var in intent
			if r.Type == "thread" {
				in = threadPart(e, task, ownTask(r.Origin), r.Part, r.Parent)
			} else {
				in = entryIntent(e, task, ownTask(r.Origin))
			}
			li := in.ledgerIntent("run_1")
			if string(li.Type) != v.Type || li.Format != v.Format || li.TargetURL != v.TargetURL || li.Actor != r.Actor {
				t.Errorf("got type %q format %q target %q actor %q, want %q %q %q %q",
					li.Type, li.Format, li.TargetURL, li.Actor, v.Type, v.Format, v.TargetURL, r.Actor)
			}
			canon, err := ledger.CanonicalJSON(li.Payload)
			if err != nil {
				t.Fatal(err)
			}
			if string(canon) != v.Payload {
				t.Errorf("got payload %s, want %s", canon, v.Payload)
			}
			key, err := li.Key()
			if err != nil {
				t.Fatal(err)
			}
			if key != v.Key {
				t.Errorf("got key %s, want %s", key, v.Key)
			}
		})
	}
}

// TestEntryInputGolden pins how an entry is recorded in its task's request:
// the task of an unchanged entry must stay the same task, so a change in
// this spelling would make every recorded entry look edited.
func TestEntryInputGolden(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	img := media.Item{File: "/m/a.png", SHA256: "ab", Type: "png", Alt: "A dot"}
	for _, tt := range []struct {
		e    calendar.Entry
		want string
	}{
		{calendar.Entry{ID: "p", Request: intents.Request{Site: "demo", Actor: "alice", Type: intents.Post, Text: "hi"}, At: at},
			`{"id":"p","site":"demo","actor":"alice","type":"post","at":"2026-12-01T09:30:00Z","text":"hi"}`},
		{calendar.Entry{ID: "p", Request: intents.Request{Site: "demo", Actor: "alice", Type: intents.Post, Text: "hi"}, At: at, Items: []media.Item{img}},
			`{"id":"p","site":"demo","actor":"alice","type":"post","at":"2026-12-01T09:30:00Z","text":"hi","media":[{"sha256":"ab","type":"png","alt":"A dot"}]}`},
		{calendar.Entry{ID: "t", Request: intents.Request{Site: "demo", Actor: "alice", Type: intents.Thread, Parts: []string{"a", "b"}}, At: at, PartItems: [][]media.Item{nil, {img}}},
			`{"id":"t","site":"demo","actor":"alice","type":"thread","at":"2026-12-01T09:30:00Z","parts":["a","b"],"part_media":[null,[{"sha256":"ab","type":"png","alt":"A dot"}]]}`},
		{calendar.Entry{ID: "t", Request: intents.Request{Site: "demo", Actor: "alice", Type: intents.Thread, Parts: []string{"a", "b"}}, At: at, PartItems: [][]media.Item{nil, nil}},
			`{"id":"t","site":"demo","actor":"alice","type":"thread","at":"2026-12-01T09:30:00Z","parts":["a","b"]}`},
	} {
		if got := string(entryInput(tt.e)); got != tt.want {
			t.Errorf("got  %s\nwant %s", got, tt.want)
		}
	}
}
