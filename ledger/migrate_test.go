package ledger_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/browserop/browserop/ledger"
	_ "github.com/mattn/go-sqlite3"
	"github.com/stretchr/testify/require"
)

// populatedAt makes path a ledger at migration v holding populateAt7's
// rows, then extra statements' ones.
func populatedAt(tb testing.TB, path string, v int, extra ...string) {
	tb.Helper()
	ledgerAt(tb, path, v)
	raw, err := sql.Open("sqlite3", "file:"+path+"?_foreign_keys=1")
	require.NoError(tb, err)
	for _, q := range append(slices.Clip(populateAt7), extra...) {
		_, err := raw.Exec(q)
		require.NoError(tb, err, q)
	}
	require.NoError(tb, raw.Close())
}

// ledgerAt writes a ledger file at path of schema version v, as migrate.go
// leaves one: the application id, the first v embedded migrations (their
// files, in order) each recorded in schema_migrations under the name
// migrate.go records, and user_version v. The tables are empty while the
// migrations run, so the ones that rebuild a referenced table need no
// foreign key check.
func ledgerAt(tb testing.TB, path string, v int) {
	tb.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o600)
	require.NoError(tb, err)
	require.NoError(tb, f.Close())
	entries, err := os.ReadDir("migrations")
	require.NoError(tb, err)
	var files []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".sql") {
			files = append(files, e.Name())
		}
	}
	slices.Sort(files)
	require.GreaterOrEqual(tb, len(files), v, "migrations to apply")
	raw, err := sql.Open("sqlite3", "file:"+path)
	require.NoError(tb, err)
	defer raw.Close()
	stmts := []string{
		`PRAGMA application_id = 1651666800`, // 0x62726f70, "brop"
		`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`,
	}
	for i, file := range files[:v] {
		body, err := os.ReadFile(filepath.Join("migrations", file))
		require.NoError(tb, err)
		num, name, _ := strings.Cut(strings.TrimSuffix(file, ".sql"), "_")
		require.Equal(tb, fmt.Sprintf("%04d", i+1), num, "migration %s", file)
		stmts = append(stmts, string(body), fmt.Sprintf(`INSERT INTO schema_migrations VALUES (%d, '%s', %d)`, i+1, name, i+1))
	}
	stmts = append(stmts, fmt.Sprintf(`PRAGMA user_version = %d`, v))
	for _, q := range stmts {
		_, err := raw.Exec(q)
		require.NoError(tb, err, q)
	}
}

// populateAt7 fills every table of a schema version 7 ledger, with every
// value of every enumerated column (each action status, task status, tab
// state, surface and ownership, confirmation state), nullable columns both
// set and not, references between the tables migration 8 rebuilds, and
// rowids with gaps (rows copied without theirs would be renumbered).
// References are enforced while it writes, so the references hold.
var populateAt7 = []string{
	`INSERT INTO tasks (rowid, id, idempotency_key, request_json, contract_json, status, owner_generation, result_json,
		created_at, updated_at, finished_at) VALUES
		(3, 'task_open', 'calendar:e1', '{"title":"a"}', '{"capabilities":["post"],"domains":["127.0.0.1"]}', 'open', 2, NULL, 100, 110, NULL),
		(7, 'task_cancelled', 'agent:k2', '{"title":"b"}', '{"capabilities":["like"],"domains":["127.0.0.1"]}', 'cancelled', 0, '{"reason":"no"}', 101, 120, NULL),
		(8, 'task_done', 'person:k3', '{"title":"c"}', '{"capabilities":["thread"],"domains":["127.0.0.1"],"max_side_effects":2}', 'done', 3, '{"ok":true}', 102, 130, 125)`,
	`INSERT INTO task_grants (task_id, domain, granted_by, created_at) VALUES ('task_open', 'example.com', 'person', 105)`,
	`INSERT INTO task_events (task_id, generation, kind, detail, at) VALUES
		('task_open', 0, 'created', 'task created', 100),
		('task_done', 3, 'done', 'every intent settled', 130)`,
	`INSERT INTO task_intents (id, task_id, request_json, created_at, effects) VALUES
		('int_1', 'task_done', '{"type":"thread","parts":["a","b"]}', 103, 2)`,
	`INSERT INTO runs (id, lease_name, generation, holder, started_at, ended_at, outcome, summary_json) VALUES
		('run_1', 'browser-operator', 3, 'host:1:2:r', 200, 300, 'ok', '{"done":1}'),
		('run_2', 'browser-operator', 4, 'host:1:2:s', 400, NULL, NULL, NULL)`,
	`INSERT INTO leases (name, holder, generation, acquired_at, heartbeat_at, expires_at, released) VALUES
		('browser-operator', 'host:1:2:s', 4, 400, 410, 460, 0)`,
	`INSERT INTO actions (rowid, id, idempotency_key, task_id, run_id, type, format, site, actor, target_url, payload_json,
		status, attempt, canonical_result, failure_reason, failure_class, may_surface, baseline_json, generation,
		created_at, updated_at, executing_at, settled_at, other_accounts_json, seen_json, landed_url) VALUES
		(2, 'act_planned', 'k_planned', 'task_open', 'run_2', 'post', 'post_text', 'demo', 'alice', 'http://127.0.0.1/compose',
		 '{"intent":"calendar:e1","text":"p"}', 'planned', 2, '', '', '', 0, NULL, 4, 201, 401, NULL, NULL, NULL, NULL, ''),
		(5, 'act_executing', 'k_executing', NULL, 'run_2', 'like', '', 'demo', 'alice', 'http://127.0.0.1/p/4',
		 '{"intent":"planner:h"}', 'executing', 1, '', '', '', 0, '[]', 4, 202, 402, 402, NULL, NULL, '["http://127.0.0.1/p/9"]', ''),
		(6, 'act_verified', 'k_verified', 'task_done', 'run_1', 'thread_part', 'thread', 'demo', 'alice', '',
		 '{"intent":"task:task_done","position":0,"text":"a"}', 'verified', 1, 'http://127.0.0.1/p/1', '', '', 1, '[]', 3,
		 203, 250, 240, 250, NULL, '[]', 'http://127.0.0.1/p/1'),
		(9, 'act_failed', 'k_failed', 'task_cancelled', 'run_1', 'like', '', 'demo', 'alice', 'http://127.0.0.1/p/2',
		 '{"intent":"task:task_cancelled"}', 'failed', 1, '', 'declined by a person', 'abandoned', 0, NULL, 3, 204, 260, NULL, 260, NULL, NULL, ''),
		(11, 'act_ambiguous', 'k_ambiguous', NULL, 'run_1', 'post', 'post_text', 'demo', 'alice', 'http://127.0.0.1/compose',
		 '{"intent":"calendar:e2","text":"q"}', 'ambiguous', 3, '', 'cannot prove', '', 1, '[]', 3, 205, 270, 265, NULL, '["carol"]', '[]', ''),
		(14, 'act_moderated', 'k_moderated', NULL, 'run_1', 'reply', 'reply', 'demo', 'alice', 'http://127.0.0.1/p/3',
		 '{"intent":"calendar:e3","parent":"http://127.0.0.1/p/3","text":"r"}', 'moderated', 1, '', 'held for moderation', '', 0, '[]', 3,
		 206, 280, 275, NULL, NULL, '[]', 'http://127.0.0.1/p/3#pending')`,
	`INSERT INTO action_events (action_id, from_status, to_status, generation, by, reason, at) VALUES
		('act_verified', '', 'planned', 3, 'operator', 'reserved', 203),
		('act_verified', 'planned', 'executing', 3, 'operator', 'clicking', 240),
		('act_verified', 'executing', 'verified', 3, 'operator', 'found at its permalink', 250),
		('act_ambiguous', 'executing', 'ambiguous', 3, 'operator', 'cannot prove', 270)`,
	`INSERT INTO budget_usage (action_id, format, limits, generation, at) VALUES ('act_verified', 'thread', 'thread,original', 3, 240)`,
	`INSERT INTO thread_parts (thread_id, position, action_id, expected_parent_url, published_url, verified) VALUES
		('task:task_done', 0, 'act_verified', '', 'http://127.0.0.1/p/1', 1)`,
	`INSERT INTO tabs (id, task_id, run_id, target_id, surface, url, binding_hash, ownership, epoch, state, generation,
		created_at, updated_at) VALUES
		(4, NULL, 'run_2', '', 'owned', 'http://127.0.0.1/#browserop-4', 'bh4', 'owned', 1, 'opening', 4, 300, 300),
		(5, 'task_open', 'run_2', 'T5', 'owned', 'http://127.0.0.1/compose', 'bh5', 'owned', 1, 'live', 4, 301, 301),
		(6, 'task_open', 'run_2', 'T6', 'owned', 'http://127.0.0.1/compose', 'bh6', 'owned', 2, 'handoff', 4, 302, 312),
		(10, NULL, 'run_1', '', 'owned', 'http://127.0.0.1/p/2', 'bh10', 'probable', 1, 'missing', 3, 303, 313),
		(11, NULL, 'run_1', 'T11', 'user', 'http://127.0.0.1/', 'bh11', 'unrelated', 1, 'closed_verified', 3, 304, 314),
		(12, 'task_done', 'run_1', 'T12', 'owned', 'http://127.0.0.1/p/1', 'bh12', 'owned', 3, 'closure_unverified', 3, 305, 315)`,
	`INSERT INTO confirmations (rowid, action_id, state, by, reason, created_at, updated_at, handoff_tab_id, handoff_url,
		handoff_at, handoff_baseline_json, handoff_seen_json, held_reason) VALUES
		(4, 'act_planned', 'pending', '', '', 500, 500, 6, 'http://127.0.0.1/compose', 490, '[]', '["http://127.0.0.1/p/9"]', ''),
		(6, 'act_executing', 'confirmed', 'person', 'go on', 501, 510, NULL, '', NULL, NULL, NULL, 'its handed-off tab is not proven closed'),
		(9, 'act_failed', 'declined', 'person', 'not this one', 502, 511, NULL, '', NULL, NULL, NULL, '')`,
}

// schemaObject is one row of sqlite_master.
type schemaObject struct {
	Type, Table string
	SQL         sql.NullString
}

// tableShape is what a table is made of, as SQLite reports it: its
// columns, its foreign keys and its indexes with theirs.
type tableShape struct {
	Columns     [][]any
	ForeignKeys [][]any
	Indexes     map[string][][]any // index_list row, then index_xinfo rows
}

// ledgerSnapshot is what a migration must keep: every schema object and
// the shape and rows (with their rowids) of every table.
type ledgerSnapshot struct {
	Objects map[string]schemaObject
	Shapes  map[string]tableShape
	Rows    map[string][][]any
}

func queryAll(tb testing.TB, raw *sql.DB, q string, args ...any) [][]any {
	tb.Helper()
	rows, err := raw.Query(q, args...)
	require.NoError(tb, err, q)
	defer rows.Close()
	cols, err := rows.Columns()
	require.NoError(tb, err)
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		require.NoError(tb, rows.Scan(ptrs...))
		out = append(out, vals)
	}
	require.NoError(tb, rows.Err())
	return out
}

func snapshot(tb testing.TB, path string) ledgerSnapshot {
	tb.Helper()
	raw, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	require.NoError(tb, err)
	defer raw.Close()
	s := ledgerSnapshot{Objects: map[string]schemaObject{}, Shapes: map[string]tableShape{}, Rows: map[string][][]any{}}
	for _, r := range queryAll(tb, raw, `SELECT name, type, tbl_name, sql FROM sqlite_master`) {
		o := schemaObject{Type: r[1].(string), Table: r[2].(string)}
		if r[3] != nil {
			o.SQL = sql.NullString{String: r[3].(string), Valid: true}
		}
		s.Objects[r[0].(string)] = o
	}
	for name, o := range s.Objects {
		if o.Type != "table" {
			continue
		}
		shape := tableShape{
			Columns:     queryAll(tb, raw, `SELECT * FROM pragma_table_xinfo(?)`, name),
			ForeignKeys: queryAll(tb, raw, `SELECT * FROM pragma_foreign_key_list(?) ORDER BY id, seq`, name),
			Indexes:     map[string][][]any{},
		}
		for _, ix := range queryAll(tb, raw, `SELECT name, "unique", origin, partial FROM pragma_index_list(?)`, name) {
			shape.Indexes[ix[0].(string)] = append([][]any{ix}, queryAll(tb, raw, `SELECT * FROM pragma_index_xinfo(?)`, ix[0])...)
		}
		s.Shapes[name] = shape
		s.Rows[name] = queryAll(tb, raw, fmt.Sprintf(`SELECT rowid, * FROM "%s" ORDER BY rowid`, name))
	}
	return s
}

// The enumerated columns and the tables that list their values
// (migration 0008).
var enumerations = []struct {
	table, column string // the table listing the values, and its column
	in, col       string // the column they are the values of
	insert        string // a row of in with %s as the value
	update        string // a statement setting an existing row's value to %s
	refusal       string // what the schema answers an unknown value
}{
	{"action_statuses", "status", "actions", "status",
		`INSERT INTO actions (id, idempotency_key, type, actor, payload_json, status, created_at, updated_at)
			VALUES ('act_enum', 'k_enum', 'post', 'alice', '{}', '%s', 1, 1)`,
		`UPDATE actions SET status = '%s' WHERE id = '{action}'`, "browserop: unknown action status"},
	{"task_statuses", "status", "tasks", "status",
		`INSERT INTO tasks (id, idempotency_key, request_json, contract_json, status, created_at, updated_at)
			VALUES ('task_enum', 'agent:enum', '{}', '{}', '%s', 1, 1)`,
		`UPDATE tasks SET status = '%s' WHERE id = '{task}'`, "browserop: unknown task status"},
	{"tab_states", "state", "tabs", "state",
		`INSERT INTO tabs (target_id, surface, url, binding_hash, ownership, state, created_at, updated_at)
			VALUES ('T', 'owned', 'http://127.0.0.1/', 'bh', 'owned', '%s', 1, 1)`,
		`UPDATE tabs SET state = '%s' WHERE id = {tab}`, "browserop: unknown tab state"},
	{"tab_surfaces", "surface", "tabs", "surface",
		`INSERT INTO tabs (target_id, surface, url, binding_hash, ownership, state, created_at, updated_at)
			VALUES ('T', '%s', 'http://127.0.0.1/', 'bh', 'owned', 'live', 1, 1)`,
		`UPDATE tabs SET surface = '%s' WHERE id = {tab}`, "browserop: unknown tab surface"},
	{"tab_ownerships", "ownership", "tabs", "ownership",
		`INSERT INTO tabs (target_id, surface, url, binding_hash, ownership, state, created_at, updated_at)
			VALUES ('T', 'owned', 'http://127.0.0.1/', 'bh', '%s', 'live', 1, 1)`,
		`UPDATE tabs SET ownership = '%s' WHERE id = {tab}`, "browserop: unknown tab ownership"},
	{"confirmation_states", "state", "confirmations", "state",
		`INSERT INTO confirmations (action_id, state, created_at, updated_at) VALUES ('act_enum', '%s', 1, 1)`,
		`UPDATE confirmations SET state = '%s' WHERE action_id = '{confirmation}'`, "browserop: unknown confirmation state"},
}

// enumRows names existing rows requireEnumerationsEnforced may change: an
// action whose status no lifecycle trigger guards (planned), a task, a
// live tab with a target, and a pending confirmation.
type enumRows struct {
	action, task, confirmation string
	tab                        int64
}

// requireEnumerationsEnforced checks, on a connection that did not turn
// foreign keys on, that the schema refuses a value an enumeration's table
// does not list, on insert and on update, that those tables only grow, and
// that one INSERT into such a table makes its value usable. It changes the
// ledger: call it last.
func requireEnumerationsEnforced(t *testing.T, path string, r enumRows) {
	t.Helper()
	raw, err := sql.Open("sqlite3", "file:"+path)
	require.NoError(t, err)
	defer raw.Close()
	var fk int
	require.NoError(t, raw.QueryRow(`PRAGMA foreign_keys`).Scan(&fk))
	require.Equal(t, 0, fk, "the check runs without foreign key enforcement")
	ids := strings.NewReplacer("{action}", r.action, "{task}", r.task, "{tab}", fmt.Sprint(r.tab), "{confirmation}", r.confirmation)
	for _, e := range enumerations {
		t.Run(e.table, func(t *testing.T) {
			update := ids.Replace(e.update)
			for _, q := range []string{fmt.Sprintf(e.insert, "withdrawn"), fmt.Sprintf(update, "withdrawn"),
				fmt.Sprintf(e.insert, "Planned"), fmt.Sprintf(update, "")} {
				_, err := raw.Exec(q)
				require.ErrorContains(t, err, e.refusal, q)
			}
			var known string
			require.NoError(t, raw.QueryRow(fmt.Sprintf(`SELECT %s FROM %s LIMIT 1`, e.column, e.table)).Scan(&known))
			for _, q := range []string{
				fmt.Sprintf(`DELETE FROM %s WHERE %s = '%s'`, e.table, e.column, known),
				fmt.Sprintf(`UPDATE %s SET %s = 'withdrawn' WHERE %s = '%s'`, e.table, e.column, e.column, known),
			} {
				_, err := raw.Exec(q)
				require.ErrorContains(t, err, "are never changed or removed", q)
			}

			// A new value is one INSERT.
			_, err := raw.Exec(fmt.Sprintf(`INSERT INTO %s (%s) VALUES ('withdrawn')`, e.table, e.column))
			require.NoError(t, err)
			_, err = raw.Exec(fmt.Sprintf(update, "withdrawn"))
			require.NoError(t, err)
			var n int
			require.NoError(t, raw.QueryRow(fmt.Sprintf(`SELECT count(*) FROM %s WHERE %s = 'withdrawn'`, e.in, e.col)).Scan(&n))
			require.Equal(t, 1, n)
		})
	}
}

// Migration 0008 on a ledger holding data at version 7: every row keeps
// its values and rowid, every table its columns, foreign keys and indexes,
// every trigger and index its definition, references hold and are enforced
// again, the ledger works on it, and an unknown status is still refused.
func TestMigrationEightKeepsEverything(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	populatedAt(t, path, 7)
	before := snapshot(t, path)
	for name, rows := range before.Rows {
		require.NotEmpty(t, rows, "table %s is populated", name)
	}

	db := MustOpenAt(t, path, newClock())
	v, err := db.SchemaVersion(ctx)
	require.NoError(t, err)
	require.Equal(t, ledger.LatestSchemaVersion(), v)
	require.NoError(t, db.Close())
	after := withoutNine(t, withoutTen(t, withoutEleven(t, withoutTabFacts(t, withoutFieldProvenance(t, withoutContinuity(t, withoutCleanupPreference(t, snapshot(t, path))))))))

	for name, o := range before.Objects {
		got, ok := after.Objects[name]
		require.True(t, ok, "%s %s is kept", o.Type, name)
		if o.Type == "table" {
			require.Equal(t, o.Table, got.Table, name)
			continue
		}
		require.Equal(t, o, got, "%s %s is as it was", o.Type, name)
	}
	for name, shape := range before.Shapes {
		require.Equal(t, shape, after.Shapes[name], "table %s keeps its columns, references and indexes", name)
	}
	for name, rows := range before.Rows {
		got := after.Rows[name]
		if name == "schema_migrations" {
			require.Len(t, got, len(rows)+1, "one migration more")
			require.Equal(t, []any{int64(8), int64(8), "enumeration_tables"}, got[len(rows)][:3])
			got = got[:len(rows)]
		}
		require.Equal(t, rows, got, "every row of %s, with its rowid", name)
	}
	var added []string
	for name, o := range after.Objects {
		if _, ok := before.Objects[name]; !ok && o.Type == "table" {
			added = append(added, name)
		}
	}
	slices.Sort(added)
	require.Equal(t, []string{"action_statuses", "confirmation_states", "tab_ownerships", "tab_states",
		"tab_surfaces", "task_statuses"}, added, "the tables migration 8 adds")

	// The ledger reads and writes the migrated file, with references
	// enforced again.
	db = MustOpenAt(t, path, newClock())
	for id, want := range map[string]ledger.Status{"act_planned": ledger.Planned, "act_executing": ledger.Executing,
		"act_verified": ledger.Verified, "act_failed": ledger.Failed, "act_ambiguous": ledger.Ambiguous, "act_moderated": ledger.Moderated} {
		a, err := db.GetAction(ctx, id)
		require.NoError(t, err)
		require.Equal(t, want, a.Status, id)
	}
	c, err := db.GetConfirmation(ctx, "act_planned")
	require.NoError(t, err)
	require.NotNil(t, c.Handoff)
	require.Equal(t, int64(6), c.Handoff.TabID)
	l := mustLease(t, db, "op")
	require.Equal(t, int64(5), l.Generation, "the lease's generation goes on from the stored one")
	in := postIntent("after 8")
	in.TaskID = "task_open"
	a := mustReserve(t, db, l.Fence(), in)
	_, err = db.Transition(ctx, l.Fence(), a.ID, ledger.Change{To: ledger.Failed, Class: ledger.Definitive, Reason: "never clicked"})
	require.NoError(t, err)
	_, err = db.RecordTabFacts(ctx, l.Fence(), 12, 3, provenClose()...)
	require.NoError(t, err)
	_, err = db.UpdateTab(ctx, l.Fence(), 12, ledger.TabChange{State: ledger.TabClosedVerified})
	require.NoError(t, err)
	in = postIntent("orphan")
	in.TaskID = "task_nope"
	_, _, err = db.Reserve(ctx, l.Fence(), in)
	require.ErrorContains(t, err, "FOREIGN KEY")
	require.NoError(t, db.Close())

	raw, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	require.NoError(t, err)
	rows, err := raw.Query(`PRAGMA foreign_key_check`)
	require.NoError(t, err)
	require.False(t, rows.Next(), "every reference holds")
	rows.Close()
	var ok string
	require.NoError(t, raw.QueryRow(`PRAGMA integrity_check`).Scan(&ok))
	require.Equal(t, "ok", ok)
	require.NoError(t, raw.Close())

	requireEnumerationsEnforced(t, path, enumRows{action: "act_planned", task: "task_open", tab: 5, confirmation: "act_planned"})
}

// The tables of migration 0008 list exactly the values the Go code names:
// ledger.Statuses and the task, tab and confirmation constants. On a new
// ledger, made by every migration from nothing, the schema refuses any
// other.
func TestEnumerationTablesAgreeWithGo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := MustOpen(t)
	raw, err := sql.Open("sqlite3", "file:"+db.Path()+"?mode=ro")
	require.NoError(t, err)
	defer raw.Close()
	statuses := make([]string, len(ledger.Statuses))
	for i, s := range ledger.Statuses {
		statuses[i] = string(s)
	}
	want := map[string][]string{
		"action_statuses":     statuses,
		"task_statuses":       {ledger.TaskOpen, ledger.TaskCancelled, ledger.TaskDone},
		"tab_states":          {string(ledger.TabOpening), string(ledger.TabLive), string(ledger.TabHandoff), string(ledger.TabMissing), string(ledger.TabClosedVerified), string(ledger.TabClosureUnverified), string(ledger.TabKept)},
		"tab_surfaces":        {string(ledger.SurfaceOwned), string(ledger.SurfaceUser)},
		"tab_ownerships":      {string(ledger.Owned), string(ledger.Probable), string(ledger.Unrelated)},
		"confirmation_states": {ledger.ConfirmPending, ledger.ConfirmConfirmed, ledger.ConfirmDeclined},
	}
	require.Len(t, want, len(enumerations))
	for _, e := range enumerations {
		var got []string
		for _, r := range queryAll(t, raw, fmt.Sprintf(`SELECT %s FROM %s`, e.column, e.table)) {
			got = append(got, r[0].(string))
		}
		require.ElementsMatch(t, want[e.table], got, "%s and the Go values", e.table)
	}

	l := mustLease(t, db, "op")
	task, _, err := db.CreateTask(ctx, "agent:enum", taskRequest("post"))
	require.NoError(t, err)
	a := mustReserve(t, db, l.Fence(), postIntent("enumerations"))
	tab, err := db.RecordTab(ctx, l.Fence(), ledger.Tab{TargetID: "T1", URL: "http://127.0.0.1/", BindingHash: "bh"})
	require.NoError(t, err)
	_, err = db.RequestConfirmation(ctx, l.Fence(), a.ID)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	requireEnumerationsEnforced(t, db.Path(), enumRows{action: a.ID, task: task.ID, tab: tab.ID, confirmation: a.ID})
}

// withoutNine is a snapshot of a ledger at schema version 9 or later with
// what migration 0009 adds taken out again: the actions' intent_id column
// (the last, with its values), its index, the immutability trigger's
// naming of it, and its schema_migrations row, and the rows of later
// migrations. Migration 8's test compares the rest with version 7.
func withoutNine(tb testing.TB, s ledgerSnapshot) ledgerSnapshot {
	tb.Helper()
	trig := s.Objects["actions_intent_immutable"]
	require.Contains(tb, trig.SQL.String, ", intent_id ON actions")
	trig.SQL.String = strings.Replace(trig.SQL.String, ", intent_id ON actions", " ON actions", 1)
	s.Objects["actions_intent_immutable"] = trig
	delete(s.Objects, "actions_task_intent")
	shape := s.Shapes["actions"]
	last := shape.Columns[len(shape.Columns)-1]
	require.Equal(tb, "intent_id", last[1], "intent_id is the actions' last column")
	shape.Columns = shape.Columns[:len(shape.Columns)-1]
	delete(shape.Indexes, "actions_task_intent")
	s.Shapes["actions"] = shape
	rows := make([][]any, len(s.Rows["actions"]))
	for i, r := range s.Rows["actions"] {
		rows[i] = r[:len(r)-1]
	}
	s.Rows["actions"] = rows
	var migs [][]any
	for _, r := range s.Rows["schema_migrations"] {
		if r[1].(int64) < 9 {
			migs = append(migs, r)
		}
	}
	s.Rows["schema_migrations"] = migs
	return s
}

// Migration 0009 on a ledger holding data at version 8: each action gets
// the intent its payload names (an agent's without "task:", a payload that
// does not decode or names none gets ""), verified and failed actions keep
// refusing changes, and intent_id is as immutable as the rest of an
// action's intent.
func TestMigrationNineFillsIntentID(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	populatedAt(t, path, 8,
		`INSERT INTO actions (id, idempotency_key, type, actor, payload_json, status, created_at, updated_at) VALUES
			('act_later', 'k_later', 'post', 'alice', '{"intent":"calendar:e1~2","text":"p2"}', 'verified', 1, 1),
			('act_garbled', 'k_garbled', 'post', 'alice', '{"intent":', 'planned', 1, 1),
			('act_none', 'k_none', 'like', 'alice', '{}', 'planned', 1, 1),
			('act_number', 'k_number', 'like', 'alice', '{"intent":7}', 'planned', 1, 1)`)

	db := MustOpenAt(t, path, newClock())
	for id, want := range map[string]string{
		"act_planned": "calendar:e1", "act_executing": "planner:h", "act_verified": "task_done",
		"act_failed": "task_cancelled", "act_ambiguous": "calendar:e2", "act_moderated": "calendar:e3",
		"act_later": "calendar:e1~2", "act_garbled": "", "act_none": "", "act_number": "",
	} {
		a, err := db.GetAction(ctx, id)
		require.NoError(t, err)
		require.Equal(t, want, a.IntentID, id)
	}
	require.NoError(t, db.Close())

	raw, err := sql.Open("sqlite3", "file:"+path)
	require.NoError(t, err)
	defer raw.Close()
	for q, refusal := range map[string]string{
		`UPDATE actions SET failure_reason = 'x' WHERE id = 'act_verified'`: "a verified action is final",
		`UPDATE actions SET failure_reason = 'x' WHERE id = 'act_failed'`:   "a failed action changes only by a replan",
		`UPDATE actions SET intent_id = 'other' WHERE id = 'act_planned'`:   "an action's intent is immutable",
	} {
		_, err := raw.Exec(q)
		require.ErrorContains(t, err, refusal, q)
	}
	var n int
	require.NoError(t, raw.QueryRow(`SELECT count(*) FROM pragma_index_list('actions') WHERE name = 'actions_task_intent'`).Scan(&n))
	require.Equal(t, 1, n, "actions are found by task and intent")
}
