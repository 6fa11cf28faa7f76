-- browserop: foreign_keys off
-- The values an enumerated column may hold are rows of a table, no longer a
-- CHECK list: a new action status (or task status, tab state, surface or
-- ownership, confirmation state) is then one INSERT in one migration.
-- SQLite cannot change a CHECK constraint in place, so each new value used
-- to cost a rebuild of its table (0002 for the tab state 'opening', 0005
-- for the action status 'moderated', which had to restate 0001's
-- triggers). See docs/decisions/2026-12-02-statuses-in-a-table.md.
--
--   action_statuses      actions.status
--   task_statuses        tasks.status
--   tab_states           tabs.state
--   tab_surfaces         tabs.surface
--   tab_ownerships       tabs.ownership
--   confirmation_states  confirmations.state
--
-- Triggers refuse a value its table does not list, on INSERT and on UPDATE
-- of the column. Triggers rather than foreign keys: like the CHECK lists
-- they replace, they hold on every connection, also one that did not turn
-- foreign key enforcement on (the sqlite3 shell). The tables only grow: a
-- value rows may hold is never changed or removed.
--
-- This is the last rebuild a value list costs. The four tables are rebuilt
-- once more, as 0005 did: SQLite's documented procedure, with foreign key
-- enforcement off for this migration (the first line asks for it;
-- migrate.go checks every reference before the commit), each new table
-- with the columns of the old in the same order and without its CHECK
-- list, every row copied with its rowid, the old table dropped and the new
-- one renamed. Dropping a table drops its indexes and triggers; they are
-- created again exactly as they were. Every other constraint stays.

CREATE TABLE action_statuses (status TEXT NOT NULL PRIMARY KEY);
INSERT INTO action_statuses (status) VALUES
    ('planned'), ('executing'), ('verified'), ('failed'), ('ambiguous'), ('moderated');
CREATE TABLE task_statuses (status TEXT NOT NULL PRIMARY KEY);
INSERT INTO task_statuses (status) VALUES ('open'), ('cancelled'), ('done');
CREATE TABLE tab_states (state TEXT NOT NULL PRIMARY KEY);
INSERT INTO tab_states (state) VALUES
    ('opening'), ('live'), ('handoff'), ('missing'), ('closed_verified'), ('closure_unverified');
CREATE TABLE tab_surfaces (surface TEXT NOT NULL PRIMARY KEY);
INSERT INTO tab_surfaces (surface) VALUES ('owned'), ('user');
CREATE TABLE tab_ownerships (ownership TEXT NOT NULL PRIMARY KEY);
INSERT INTO tab_ownerships (ownership) VALUES ('owned'), ('probable'), ('unrelated');
CREATE TABLE confirmation_states (state TEXT NOT NULL PRIMARY KEY);
INSERT INTO confirmation_states (state) VALUES ('pending'), ('confirmed'), ('declined');

CREATE TRIGGER action_statuses_no_update BEFORE UPDATE ON action_statuses
BEGIN
    SELECT RAISE(ABORT, 'browserop: action statuses are never changed or removed');
END;
CREATE TRIGGER action_statuses_no_delete BEFORE DELETE ON action_statuses
BEGIN
    SELECT RAISE(ABORT, 'browserop: action statuses are never changed or removed');
END;
CREATE TRIGGER task_statuses_no_update BEFORE UPDATE ON task_statuses
BEGIN
    SELECT RAISE(ABORT, 'browserop: task statuses are never changed or removed');
END;
CREATE TRIGGER task_statuses_no_delete BEFORE DELETE ON task_statuses
BEGIN
    SELECT RAISE(ABORT, 'browserop: task statuses are never changed or removed');
END;
CREATE TRIGGER tab_states_no_update BEFORE UPDATE ON tab_states
BEGIN
    SELECT RAISE(ABORT, 'browserop: tab states are never changed or removed');
END;
CREATE TRIGGER tab_states_no_delete BEFORE DELETE ON tab_states
BEGIN
    SELECT RAISE(ABORT, 'browserop: tab states are never changed or removed');
END;
CREATE TRIGGER tab_surfaces_no_update BEFORE UPDATE ON tab_surfaces
BEGIN
    SELECT RAISE(ABORT, 'browserop: tab surfaces are never changed or removed');
END;
CREATE TRIGGER tab_surfaces_no_delete BEFORE DELETE ON tab_surfaces
BEGIN
    SELECT RAISE(ABORT, 'browserop: tab surfaces are never changed or removed');
END;
CREATE TRIGGER tab_ownerships_no_update BEFORE UPDATE ON tab_ownerships
BEGIN
    SELECT RAISE(ABORT, 'browserop: tab ownerships are never changed or removed');
END;
CREATE TRIGGER tab_ownerships_no_delete BEFORE DELETE ON tab_ownerships
BEGIN
    SELECT RAISE(ABORT, 'browserop: tab ownerships are never changed or removed');
END;
CREATE TRIGGER confirmation_states_no_update BEFORE UPDATE ON confirmation_states
BEGIN
    SELECT RAISE(ABORT, 'browserop: confirmation states are never changed or removed');
END;
CREATE TRIGGER confirmation_states_no_delete BEFORE DELETE ON confirmation_states
BEGIN
    SELECT RAISE(ABORT, 'browserop: confirmation states are never changed or removed');
END;

-- tasks, without its status list.
CREATE TABLE tasks_new (
    id               TEXT PRIMARY KEY,
    idempotency_key  TEXT NOT NULL UNIQUE,
    request_json     TEXT NOT NULL,          -- canonical JSON of the creation request
    contract_json    TEXT NOT NULL,          -- canonical JSON of the immutable contract
    status           TEXT NOT NULL,          -- one of task_statuses
    owner_generation INTEGER NOT NULL DEFAULT 0,
    result_json      TEXT,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    -- When the task stopped taking intents (migration 0004); NULL: not yet.
    finished_at      INTEGER
);
INSERT INTO tasks_new (rowid, id, idempotency_key, request_json, contract_json, status, owner_generation,
    result_json, created_at, updated_at, finished_at)
SELECT rowid, id, idempotency_key, request_json, contract_json, status, owner_generation,
    result_json, created_at, updated_at, finished_at FROM tasks;
DROP TABLE tasks;
ALTER TABLE tasks_new RENAME TO tasks;

-- The contract, and what it was created from, never change.
CREATE TRIGGER tasks_contract_immutable
BEFORE UPDATE OF id, idempotency_key, request_json, contract_json ON tasks
BEGIN
    SELECT RAISE(ABORT, 'browserop: a task contract is immutable');
END;

CREATE TRIGGER tasks_no_delete BEFORE DELETE ON tasks
BEGIN
    SELECT RAISE(ABORT, 'browserop: tasks are never deleted');
END;

-- actions, without its status list.
CREATE TABLE actions_new (
    id               TEXT PRIMARY KEY,
    idempotency_key  TEXT NOT NULL UNIQUE,
    task_id          TEXT REFERENCES tasks(id),
    run_id           TEXT,
    type             TEXT NOT NULL,
    format           TEXT NOT NULL DEFAULT '',   -- the budget format it counts towards, '' for none
    site             TEXT NOT NULL DEFAULT '',
    actor            TEXT NOT NULL,
    target_url       TEXT NOT NULL DEFAULT '',
    payload_json     TEXT NOT NULL,
    status           TEXT NOT NULL,              -- one of action_statuses
    attempt          INTEGER NOT NULL DEFAULT 1,
    -- The permalink: verified, the proven result; moderated, the URL the
    -- landed page named (possibly '').
    canonical_result TEXT NOT NULL DEFAULT '',
    failure_reason   TEXT NOT NULL DEFAULT '',
    failure_class    TEXT NOT NULL DEFAULT '',
    -- The effect may surface later than a search can see: the site answered
    -- the submission (it navigated on, on the site), or the submission timed
    -- out with its request possibly still pending. A search that misses it is
    -- then never a definitive absence (unless the site bounds how late it
    -- surfaces).
    may_surface      INTEGER NOT NULL DEFAULT 0,
    -- JSON list of the identical items' URLs a complete search found just
    -- before the click (NULL: none taken): never this action's result.
    baseline_json    TEXT,
    generation       INTEGER NOT NULL DEFAULT 0,  -- generation of the last write
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    executing_at     INTEGER,
    settled_at       INTEGER,
    -- JSON list of the accounts other than the actor seen signed in while
    -- the action was unsettled (migration 0003); NULL for none.
    other_accounts_json TEXT,
    -- What a proof of absence rests on besides baseline_json (migration
    -- 0006): the URLs of every item by the actor a complete search showed
    -- just before the click (NULL: none taken), and the result link the
    -- landed page named ('' for none).
    seen_json        TEXT,
    landed_url       TEXT NOT NULL DEFAULT ''
);
INSERT INTO actions_new (rowid, id, idempotency_key, task_id, run_id, type, format, site, actor, target_url,
    payload_json, status, attempt, canonical_result, failure_reason, failure_class, may_surface, baseline_json,
    generation, created_at, updated_at, executing_at, settled_at, other_accounts_json, seen_json, landed_url)
SELECT rowid, id, idempotency_key, task_id, run_id, type, format, site, actor, target_url,
    payload_json, status, attempt, canonical_result, failure_reason, failure_class, may_surface, baseline_json,
    generation, created_at, updated_at, executing_at, settled_at, other_accounts_json, seen_json, landed_url FROM actions;
DROP TABLE actions;
ALTER TABLE actions_new RENAME TO actions;
CREATE INDEX actions_status ON actions (status, format);
CREATE INDEX actions_task ON actions (task_id);
CREATE INDEX actions_site_actor ON actions (site, actor, executing_at);

-- Only the lifecycle columns of an action ever change; what was intended never does.
CREATE TRIGGER actions_intent_immutable
BEFORE UPDATE OF id, idempotency_key, task_id, type, format, site, actor, target_url, payload_json ON actions
BEGIN
    SELECT RAISE(ABORT, 'browserop: an action''s intent is immutable');
END;
CREATE TRIGGER actions_terminal_final
BEFORE UPDATE ON actions WHEN OLD.status = 'verified'
BEGIN
    SELECT RAISE(ABORT, 'browserop: a verified action is final');
END;
CREATE TRIGGER actions_failed_final
BEFORE UPDATE ON actions
WHEN OLD.status = 'failed' AND NOT (NEW.status = 'planned' AND OLD.failure_class = 'definitive')
BEGIN
    SELECT RAISE(ABORT, 'browserop: a failed action changes only by a replan after a definitive failure');
END;
CREATE TRIGGER actions_moderated_settles
BEFORE UPDATE ON actions
WHEN OLD.status = 'moderated' AND NEW.status NOT IN ('moderated', 'verified', 'failed')
BEGIN
    SELECT RAISE(ABORT, 'browserop: a moderated action becomes only verified or failed');
END;
CREATE TRIGGER actions_no_delete BEFORE DELETE ON actions
BEGIN
    SELECT RAISE(ABORT, 'browserop: actions are never deleted');
END;

-- tabs, without its state, surface and ownership lists. Which states may
-- lack a target stays a CHECK: a rule, not a list of values.
CREATE TABLE tabs_new (
    id           INTEGER PRIMARY KEY,
    task_id      TEXT,
    run_id       TEXT,
    target_id    TEXT NOT NULL,                -- raw browser target id ('' while opening): stays on this machine
    surface      TEXT NOT NULL,                -- one of tab_surfaces
    url          TEXT NOT NULL,                -- normalized URL
    binding_hash TEXT NOT NULL,
    ownership    TEXT NOT NULL,                -- one of tab_ownerships
    epoch        INTEGER NOT NULL DEFAULT 1 CHECK (epoch >= 1),
    state        TEXT NOT NULL,                -- one of tab_states
    generation   INTEGER NOT NULL DEFAULT 0,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    CHECK (target_id <> '' OR state IN ('opening', 'missing'))
);
INSERT INTO tabs_new (id, task_id, run_id, target_id, surface, url, binding_hash, ownership, epoch, state,
    generation, created_at, updated_at)
SELECT id, task_id, run_id, target_id, surface, url, binding_hash, ownership, epoch, state,
    generation, created_at, updated_at FROM tabs;
DROP TABLE tabs;
ALTER TABLE tabs_new RENAME TO tabs;
CREATE INDEX tabs_state ON tabs (state);
CREATE INDEX tabs_task ON tabs (task_id);

CREATE TRIGGER tabs_epoch_grows
BEFORE UPDATE OF epoch ON tabs WHEN NEW.epoch < OLD.epoch
BEGIN
    SELECT RAISE(ABORT, 'browserop: an inspection epoch never decreases');
END;

-- confirmations, without its state list.
CREATE TABLE confirmations_new (
    action_id  TEXT PRIMARY KEY REFERENCES actions(id),
    state      TEXT NOT NULL,                  -- one of confirmation_states
    by         TEXT NOT NULL DEFAULT '',
    reason     TEXT NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    -- The handoff (migration 0007; see there): the tab record, the prepared
    -- page, when it began, the identical items and the actor's items seen
    -- before the tab was prepared; and why a pass holds the answered action.
    handoff_tab_id        INTEGER REFERENCES tabs(id),
    handoff_url           TEXT NOT NULL DEFAULT '',
    handoff_at            INTEGER,
    handoff_baseline_json TEXT,
    handoff_seen_json     TEXT,
    held_reason           TEXT NOT NULL DEFAULT ''
);
INSERT INTO confirmations_new (rowid, action_id, state, by, reason, created_at, updated_at, handoff_tab_id,
    handoff_url, handoff_at, handoff_baseline_json, handoff_seen_json, held_reason)
SELECT rowid, action_id, state, by, reason, created_at, updated_at, handoff_tab_id,
    handoff_url, handoff_at, handoff_baseline_json, handoff_seen_json, held_reason FROM confirmations;
DROP TABLE confirmations;
ALTER TABLE confirmations_new RENAME TO confirmations;

-- The answer is still given once; the reason a pass holds it may change.
CREATE TRIGGER confirmations_answer_once
BEFORE UPDATE OF state, by, reason ON confirmations WHEN OLD.state != 'pending'
BEGIN
    SELECT RAISE(ABORT, 'browserop: a confirmation is answered once');
END;

-- What was recorded at the handoff never changes.
CREATE TRIGGER confirmations_handoff_immutable
BEFORE UPDATE OF action_id, created_at, handoff_tab_id, handoff_url, handoff_at, handoff_baseline_json, handoff_seen_json ON confirmations
BEGIN
    SELECT RAISE(ABORT, 'browserop: a confirmation''s handoff is immutable');
END;

-- Every enumerated column holds a value its table lists.
CREATE TRIGGER actions_status_known_insert
BEFORE INSERT ON actions
WHEN NOT EXISTS (SELECT 1 FROM action_statuses WHERE status = NEW.status)
BEGIN
    SELECT RAISE(ABORT, 'browserop: unknown action status (action_statuses lists them)');
END;
CREATE TRIGGER actions_status_known_update
BEFORE UPDATE OF status ON actions
WHEN NOT EXISTS (SELECT 1 FROM action_statuses WHERE status = NEW.status)
BEGIN
    SELECT RAISE(ABORT, 'browserop: unknown action status (action_statuses lists them)');
END;
CREATE TRIGGER tasks_status_known_insert
BEFORE INSERT ON tasks
WHEN NOT EXISTS (SELECT 1 FROM task_statuses WHERE status = NEW.status)
BEGIN
    SELECT RAISE(ABORT, 'browserop: unknown task status (task_statuses lists them)');
END;
CREATE TRIGGER tasks_status_known_update
BEFORE UPDATE OF status ON tasks
WHEN NOT EXISTS (SELECT 1 FROM task_statuses WHERE status = NEW.status)
BEGIN
    SELECT RAISE(ABORT, 'browserop: unknown task status (task_statuses lists them)');
END;
CREATE TRIGGER tabs_state_known_insert
BEFORE INSERT ON tabs
WHEN NOT EXISTS (SELECT 1 FROM tab_states WHERE state = NEW.state)
BEGIN
    SELECT RAISE(ABORT, 'browserop: unknown tab state (tab_states lists them)');
END;
CREATE TRIGGER tabs_state_known_update
BEFORE UPDATE OF state ON tabs
WHEN NOT EXISTS (SELECT 1 FROM tab_states WHERE state = NEW.state)
BEGIN
    SELECT RAISE(ABORT, 'browserop: unknown tab state (tab_states lists them)');
END;
CREATE TRIGGER tabs_surface_known_insert
BEFORE INSERT ON tabs
WHEN NOT EXISTS (SELECT 1 FROM tab_surfaces WHERE surface = NEW.surface)
BEGIN
    SELECT RAISE(ABORT, 'browserop: unknown tab surface (tab_surfaces lists them)');
END;
CREATE TRIGGER tabs_surface_known_update
BEFORE UPDATE OF surface ON tabs
WHEN NOT EXISTS (SELECT 1 FROM tab_surfaces WHERE surface = NEW.surface)
BEGIN
    SELECT RAISE(ABORT, 'browserop: unknown tab surface (tab_surfaces lists them)');
END;
CREATE TRIGGER tabs_ownership_known_insert
BEFORE INSERT ON tabs
WHEN NOT EXISTS (SELECT 1 FROM tab_ownerships WHERE ownership = NEW.ownership)
BEGIN
    SELECT RAISE(ABORT, 'browserop: unknown tab ownership (tab_ownerships lists them)');
END;
CREATE TRIGGER tabs_ownership_known_update
BEFORE UPDATE OF ownership ON tabs
WHEN NOT EXISTS (SELECT 1 FROM tab_ownerships WHERE ownership = NEW.ownership)
BEGIN
    SELECT RAISE(ABORT, 'browserop: unknown tab ownership (tab_ownerships lists them)');
END;
CREATE TRIGGER confirmations_state_known_insert
BEFORE INSERT ON confirmations
WHEN NOT EXISTS (SELECT 1 FROM confirmation_states WHERE state = NEW.state)
BEGIN
    SELECT RAISE(ABORT, 'browserop: unknown confirmation state (confirmation_states lists them)');
END;
CREATE TRIGGER confirmations_state_known_update
BEFORE UPDATE OF state ON confirmations
WHEN NOT EXISTS (SELECT 1 FROM confirmation_states WHERE state = NEW.state)
BEGIN
    SELECT RAISE(ABORT, 'browserop: unknown confirmation state (confirmation_states lists them)');
END;
