package ledger_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/browserop/browserop/ledger"
	_ "github.com/mattn/go-sqlite3"
	"github.com/stretchr/testify/require"
)

func TestOpenPermissions(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "a", "b")
	path := filepath.Join(dir, "ledger.db")
	db := MustOpenAt(t, path, newClock())
	l := mustLease(t, db, "op")
	mustReserve(t, db, l.Fence(), postIntent("perm"))

	fi, err := os.Stat(dir)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), fi.Mode().Perm(), "directory mode")
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		require.NoError(t, err, p)
		require.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "mode of %s", p)
	}
}

func TestOpenRefusesWorldReadableFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "ledger.db")
	require.NoError(t, os.WriteFile(path, nil, 0o644))
	require.NoError(t, os.Chmod(path, 0o644))
	_, err := ledger.Open(context.Background(), path, ledger.Options{})
	require.ErrorContains(t, err, "chmod 600")
}

func TestMigrations(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "ledger.db")
	db := MustOpenAt(t, path, newClock())
	v, err := db.SchemaVersion(context.Background())
	require.NoError(t, err)
	require.Equal(t, ledger.LatestSchemaVersion(), v)
	applied, err := db.Migrate(context.Background())
	require.NoError(t, err)
	require.Empty(t, applied, "a second migrate applies nothing")
	require.NoError(t, db.Close())
	require.NoError(t, db.Close(), "Close twice is safe")

	raw, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	require.NoError(t, err)
	defer raw.Close()
	var n int
	require.NoError(t, raw.QueryRow(`SELECT count(*) FROM schema_migrations WHERE version = 1`).Scan(&n))
	require.Equal(t, 1, n, "migration 1 recorded")
	require.NoError(t, raw.QueryRow(`SELECT count(*) FROM schema_migrations WHERE version = 2 AND name = 'tab_opening'`).Scan(&n))
	require.Equal(t, 1, n, "migration 2 recorded")
	var mode string
	require.NoError(t, raw.QueryRow(`PRAGMA journal_mode`).Scan(&mode))
	require.Equal(t, "wal", mode)

	// Reopening keeps the data and applies nothing.
	db2 := MustOpenAt(t, path, newClock())
	v, err = db2.SchemaVersion(context.Background())
	require.NoError(t, err)
	require.Equal(t, ledger.LatestSchemaVersion(), v)
}

// A ledger written by schema version 1 keeps its tab records through
// migration 2, which rebuilds the tabs table for the opening state.
func TestMigrationTwoKeepsTabs(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "ledger.db")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o600)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	v1, err := os.ReadFile("migrations/0001_init.sql")
	require.NoError(t, err)
	raw, err := sql.Open("sqlite3", "file:"+path)
	require.NoError(t, err)
	for _, q := range []string{
		`PRAGMA application_id = 1651666800`, // 0x62726f70
		`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`,
		string(v1),
		`INSERT INTO schema_migrations VALUES (1, '0001_init', 1)`,
		`INSERT INTO tabs (run_id, target_id, surface, url, binding_hash, ownership, epoch, state, generation, created_at, updated_at)
			VALUES ('run_1', 'RAW-1', 'owned', 'http://127.0.0.1/', 'bh', 'owned', 3, 'live', 7, 1, 2)`,
		`PRAGMA user_version = 1`,
	} {
		_, err := raw.Exec(q)
		require.NoError(t, err, q)
	}
	require.NoError(t, raw.Close())

	db := MustOpenAt(t, path, newClock())
	v, err := db.SchemaVersion(context.Background())
	require.NoError(t, err)
	require.Equal(t, ledger.LatestSchemaVersion(), v)
	tabs, err := db.ListTabs(context.Background(), "")
	require.NoError(t, err)
	require.Len(t, tabs, 1)
	require.Equal(t, "RAW-1", tabs[0].TargetID)
	require.Equal(t, 3, tabs[0].Epoch)
	require.Equal(t, ledger.TabLive, tabs[0].State)
	require.Equal(t, int64(7), tabs[0].Generation)
	l := mustLease(t, db, "op")
	_, err = db.UpdateTab(context.Background(), l.Fence(), tabs[0].ID, ledger.TabChange{State: ledger.TabMissing})
	require.NoError(t, err)
}

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return sha256.Sum256(b)
}

func TestOpenBadFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()

	// A real ledger, to truncate and to bump.
	good := filepath.Join(dir, "good.db")
	db := MustOpenAt(t, good, newClock())
	l := mustLease(t, db, "op")
	for i := range 300 {
		mustReserve(t, db, l.Fence(), postIntent("filler "+string(rune('a'+i%26))+string(rune('a'+i/26))))
	}
	require.NoError(t, db.Close())
	data, err := os.ReadFile(good)
	require.NoError(t, err)
	require.Greater(t, len(data), 8192, "the test ledger must span several pages")

	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, b, 0o600))
		return p
	}
	text := write("text.db", []byte("these are my notes, not a database\n"))
	truncated := write("truncated.db", data[:len(data)/2])

	newer := filepath.Join(dir, "newer.db")
	require.NoError(t, os.WriteFile(newer, data, 0o600))
	raw, err := sql.Open("sqlite3", "file:"+newer)
	require.NoError(t, err)
	_, err = raw.Exec(`PRAGMA user_version = 99`)
	require.NoError(t, err)
	require.NoError(t, raw.Close())

	foreign := filepath.Join(dir, "foreign.db")
	raw, err = sql.Open("sqlite3", "file:"+foreign)
	require.NoError(t, err)
	_, err = raw.Exec(`CREATE TABLE recipes (name TEXT)`)
	require.NoError(t, err)
	require.NoError(t, raw.Close())
	require.NoError(t, os.Chmod(foreign, 0o600))

	for _, tc := range []struct {
		name, path, want string
	}{
		{"TextFile", text, "not an SQLite database"},
		{"Truncated", truncated, "truncated"},
		{"NewerSchema", newer, "newer than this browserop knows"},
		{"ForeignDatabase", foreign, "another program's"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := fileSum(t, tc.path)
			_, err := ledger.Open(ctx, tc.path, ledger.Options{})
			require.ErrorIs(t, err, ledger.ErrNotLedger)
			require.ErrorContains(t, err, tc.want)
			require.Equal(t, before, fileSum(t, tc.path), "the file must be untouched")
			_, statErr := os.Stat(tc.path + "-wal")
			require.True(t, errors.Is(statErr, os.ErrNotExist), "no -wal file may be created")
		})
	}
}

type keyVector struct {
	Name       string          `json:"name"`
	ActionType string          `json:"action_type"`
	Actor      string          `json:"actor"`
	TargetURL  string          `json:"target_url"`
	Payload    json.RawMessage `json:"payload"`
	Canonical  string          `json:"canonical"`
	Key        string          `json:"key"`
}

func TestIdempotencyKeyGolden(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("testdata/idempotency_keys.json")
	require.NoError(t, err)
	var vectors []keyVector
	require.NoError(t, json.Unmarshal(b, &vectors))
	require.NotEmpty(t, vectors)
	for _, v := range vectors {
		t.Run(v.Name, func(t *testing.T) {
			doc, err := json.Marshal(map[string]any{"action_type": v.ActionType, "actor": v.Actor,
				"target_url": v.TargetURL, "payload": v.Payload})
			require.NoError(t, err)
			canon, err := ledger.CanonicalJSON(doc)
			require.NoError(t, err)
			require.Equal(t, v.Canonical, string(canon))
			key, err := ledger.IdempotencyKey(v.ActionType, v.Actor, v.TargetURL, v.Payload)
			require.NoError(t, err)
			require.Equal(t, v.Key, key)
		})
	}
}

func TestIdempotencyKeyIgnoresSpacingAndOrder(t *testing.T) {
	t.Parallel()
	a, err := ledger.IdempotencyKey("post", "alice", "", json.RawMessage(`{"text":"hi","media":[1,2]}`))
	require.NoError(t, err)
	b, err := ledger.IdempotencyKey("post", "alice", "", json.RawMessage("{ \"media\" : [1, 2],\n \"text\": \"hi\" }"))
	require.NoError(t, err)
	require.Equal(t, a, b)
	c, err := ledger.IdempotencyKey("post", "alice", "", json.RawMessage(`{"text":"hi ","media":[1,2]}`))
	require.NoError(t, err)
	require.NotEqual(t, a, c, "a different text is a different intent")
	_, err = ledger.IdempotencyKey("post", "alice", "", json.RawMessage(`{"text":`))
	require.Error(t, err)
}

func TestCanonicalJSONRefusesAmbiguity(t *testing.T) {
	t.Parallel()
	for name, doc := range map[string]string{
		"LoneHighSurrogate": `{"text":"\ud800 hi"}`,
		"LoneLowSurrogate":  `{"text":"\udc00"}`,
		"ReversedPair":      `{"text":"\udc00\ud800"}`,
		"DuplicateKey":      `{"text":"x","text":"y"}`,
		"NestedDuplicate":   `{"a":[{"k":1,"k":2}]}`,
		"InvalidUTF8":       "{\"text\":\"\xff\"}",
	} {
		_, err := ledger.CanonicalJSON([]byte(doc))
		require.Error(t, err, name)
	}
	for name, doc := range map[string]string{
		"SurrogatePair":     `{"text":"\ud83d\ude00"}`,
		"EscapedBackslashU": `{"text":"\\ud800"}`,
		"SameKeyInSiblings": `{"a":{"k":1},"b":{"k":2},"k":[{"k":3}]}`,
		"KeyLikeValue":      `{"k":"k","j":"k"}`,
	} {
		_, err := ledger.CanonicalJSON([]byte(doc))
		require.NoError(t, err, name)
	}
	_, err := ledger.IdempotencyKey("post", "\xff", "", json.RawMessage(`{}`))
	require.Error(t, err, "an actor that is not UTF-8")
}

// Looks at a ledger while another opener creates it never refuse it.
// Openers that find the file begun look at it first (SkipMigrate: the look
// only). Two ways a look refused it: read piecemeal through the -wal, it
// took the application id from before migration 1 and the tables from
// after ("another program's SQLite database": TestOpenNewLedgerConcurrently
// failed so about once in 20 runs); and reading the main file alone
// (immutable, before the -wal existed) while the creator's closing
// checkpoint wrote it, it found it malformed. Looks run back to back
// through each creation, so such windows are hit within a few rounds.
func TestOpenWhileAnotherCreatesIt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for range 20 {
		path := filepath.Join(t.TempDir(), "ledger.db")
		created := make(chan error, 1)
		go func() {
			db, err := ledger.Open(ctx, path, ledger.Options{})
			if err == nil {
				err = db.Close()
			}
			created <- err
		}()
		looks := make(chan error, 4)
		done := make(chan struct{})
		for range 4 {
			go func() {
				for {
					db, err := ledger.Open(ctx, path, ledger.Options{SkipMigrate: true})
					if err == nil {
						err = db.Close()
					}
					select {
					case <-done:
						looks <- err
						return
					default:
					}
					if err != nil {
						looks <- err
						return
					}
				}
			}()
		}
		require.NoError(t, <-created)
		close(done)
		for range 4 {
			require.NoError(t, <-looks)
		}
		db := MustOpenAt(t, path, newClock())
		v, err := db.SchemaVersion(ctx)
		require.NoError(t, err)
		require.Equal(t, ledger.LatestSchemaVersion(), v)
	}
}

// Processes that open a new ledger at the same moment all get it, each
// migration applied once: SQLite's busy answers while one of them creates
// it are waited out.
func TestOpenNewLedgerConcurrently(t *testing.T) {
	t.Parallel()
	for range 5 {
		path := filepath.Join(t.TempDir(), "ledger.db")
		errs := make(chan error, 6)
		for range 6 {
			go func() {
				db, err := ledger.Open(context.Background(), path, ledger.Options{})
				if err == nil {
					err = db.Close()
				}
				errs <- err
			}()
		}
		for range 6 {
			require.NoError(t, <-errs)
		}
		db := MustOpenAt(t, path, newClock())
		v, err := db.SchemaVersion(context.Background())
		require.NoError(t, err)
		require.Equal(t, ledger.LatestSchemaVersion(), v)
	}
}

// Migration 0004 counts the side effects of intents already stored: a
// thread one per part, anything else (a thread without parts included) one.
func TestMigrationFourCountsStoredIntents(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "ledger.db")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o600)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	raw, err := sql.Open("sqlite3", "file:"+path)
	require.NoError(t, err)
	stmts := []string{
		`PRAGMA application_id = 1651666800`,
		`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`,
	}
	for v, name := range []string{"0001_init", "0002_tab_opening", "0003_action_other_accounts"} {
		body, err := os.ReadFile("migrations/" + name + ".sql")
		require.NoError(t, err)
		stmts = append(stmts, string(body), fmt.Sprintf(`INSERT INTO schema_migrations VALUES (%d, '%s', 1)`, v+1, name))
	}
	stmts = append(stmts,
		`INSERT INTO tasks (id, idempotency_key, request_json, contract_json, status, created_at, updated_at)
			VALUES ('task_1', 'agent:k', '{}', '{}', 'open', 1, 1)`,
		`INSERT INTO task_intents (id, task_id, request_json, created_at) VALUES
			('int_1', 'task_1', '{"type":"thread","parts":["a","b","c"]}', 1),
			('int_2', 'task_1', '{"type":"post","text":"x"}', 2),
			('int_3', 'task_1', '{"type":"thread"}', 3)`,
		`PRAGMA user_version = 3`)
	for _, q := range stmts {
		_, err := raw.Exec(q)
		require.NoError(t, err, q)
	}
	require.NoError(t, raw.Close())

	db := MustOpenAt(t, path, newClock())
	intents, err := db.TaskIntents(context.Background(), "task_1")
	require.NoError(t, err)
	require.Len(t, intents, 3)
	require.Equal(t, []int{3, 1, 1}, []int{intents[0].Effects, intents[1].Effects, intents[2].Effects})
}

// Migration 0005 rebuilds the actions table for the moderated status: every
// action keeps its columns, the tables that reference actions still do (and
// references are enforced again afterwards), and the schema's triggers are
// back.
func TestMigrationFiveKeepsActions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o600)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	raw, err := sql.Open("sqlite3", "file:"+path+"?_foreign_keys=1")
	require.NoError(t, err)
	stmts := []string{
		`PRAGMA application_id = 1651666800`,
		`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`,
	}
	for v, name := range []string{"0001_init", "0002_tab_opening", "0003_action_other_accounts", "0004_task_bounds"} {
		body, err := os.ReadFile("migrations/" + name + ".sql")
		require.NoError(t, err)
		stmts = append(stmts, string(body), fmt.Sprintf(`INSERT INTO schema_migrations VALUES (%d, '%s', 1)`, v+1, name))
	}
	stmts = append(stmts,
		`INSERT INTO tasks (id, idempotency_key, request_json, contract_json, status, created_at, updated_at)
			VALUES ('task_1', 'calendar:k', '{}', '{}', 'open', 1, 1)`,
		`INSERT INTO actions (id, idempotency_key, task_id, run_id, type, format, site, actor, target_url, payload_json,
			status, attempt, canonical_result, failure_reason, failure_class, may_surface, baseline_json, generation,
			created_at, updated_at, executing_at, settled_at, other_accounts_json) VALUES
			('act_v', 'k1', 'task_1', 'run_1', 'thread_part', 'thread', 'demo', 'alice', '', '{"intent":"calendar:k"}',
			 'verified', 1, 'http://127.0.0.1/p/1', '', '', 1, '[]', 3, 10, 20, 15, 20, NULL),
			('act_a', 'k2', 'task_1', 'run_1', 'post', 'post_text', 'demo', 'alice', '', '{"intent":"calendar:k2"}',
			 'ambiguous', 2, '', 'cannot prove', '', 0, NULL, 4, 11, 21, 16, NULL, '["carol"]')`,
		`INSERT INTO action_events (action_id, from_status, to_status, generation, by, reason, at) VALUES
			('act_v', '', 'planned', 3, 'operator', 'reserved', 10)`,
		`INSERT INTO budget_usage (action_id, format, limits, generation, at) VALUES ('act_v', 'thread', 'original', 3, 15)`,
		`INSERT INTO thread_parts (thread_id, position, action_id, expected_parent_url, published_url, verified)
			VALUES ('calendar:k', 0, 'act_v', '', 'http://127.0.0.1/p/1', 1)`,
		`PRAGMA user_version = 4`)
	for _, q := range stmts {
		_, err := raw.Exec(q)
		require.NoError(t, err, q)
	}
	require.NoError(t, raw.Close())

	db := MustOpenAt(t, path, newClock())
	v, err := db.SchemaVersion(ctx)
	require.NoError(t, err)
	require.Equal(t, ledger.LatestSchemaVersion(), v)
	a, err := db.GetAction(ctx, "act_a")
	require.NoError(t, err)
	require.Equal(t, ledger.Ambiguous, a.Status)
	require.Equal(t, 2, a.Attempt)
	require.Equal(t, []string{"carol"}, a.OtherAccounts)
	require.Equal(t, "cannot prove", a.FailureReason)
	require.Equal(t, int64(4), a.Generation)
	vd, err := db.GetAction(ctx, "act_v")
	require.NoError(t, err)
	require.Equal(t, ledger.Verified, vd.Status)
	require.True(t, vd.MaySurface)
	require.True(t, vd.HaveBaseline)
	require.Equal(t, "task_1", vd.TaskID)
	evs, err := db.Events(ctx, "act_v")
	require.NoError(t, err)
	require.Len(t, evs, 1)

	// The new status works, and so does the lifecycle around it.
	l := mustLease(t, db, "op")
	_, err = db.Transition(ctx, l.Fence(), "act_a", ledger.Change{To: ledger.Moderated, Reason: "held"})
	require.NoError(t, err)
	// The writer enforces references again: an action of a task that does
	// not exist is refused.
	in := postIntent("orphan")
	in.TaskID = "task_nope"
	_, _, err = db.Reserve(ctx, l.Fence(), in)
	require.ErrorContains(t, err, "FOREIGN KEY")
	require.NoError(t, db.Close())

	raw, err = sql.Open("sqlite3", "file:"+path+"?_foreign_keys=1")
	require.NoError(t, err)
	defer raw.Close()
	for _, q := range []string{
		`UPDATE actions SET status = 'planned' WHERE id = 'act_v'`,
		`UPDATE actions SET payload_json = '{}' WHERE id = 'act_a'`,
		`UPDATE actions SET status = 'planned' WHERE id = 'act_a'`,
		`DELETE FROM actions WHERE id = 'act_a'`,
	} {
		_, err := raw.Exec(q)
		require.ErrorContains(t, err, "browserop: ", q)
	}
	var fks int
	require.NoError(t, raw.QueryRow(`SELECT count(*) FROM pragma_foreign_key_list('action_events') WHERE "table" = 'actions'`).Scan(&fks))
	require.Equal(t, 1, fks, "action_events still references actions")
	rows, err := raw.Query(`PRAGMA foreign_key_check`)
	require.NoError(t, err)
	require.False(t, rows.Next(), "every reference holds")
	rows.Close()
}
