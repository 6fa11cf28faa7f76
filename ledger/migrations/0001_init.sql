-- The first schema of the browserop ledger. Times are Unix nanoseconds (UTC).

CREATE TABLE tasks (
    id               TEXT PRIMARY KEY,
    idempotency_key  TEXT NOT NULL UNIQUE,
    request_json     TEXT NOT NULL,          -- canonical JSON of the creation request
    contract_json    TEXT NOT NULL,          -- canonical JSON of the immutable contract
    status           TEXT NOT NULL CHECK (status IN ('open', 'cancelled', 'done')),
    owner_generation INTEGER NOT NULL DEFAULT 0,
    result_json      TEXT,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL
);

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

CREATE TABLE task_grants (
    id         INTEGER PRIMARY KEY,
    task_id    TEXT NOT NULL REFERENCES tasks(id),
    domain     TEXT NOT NULL,
    granted_by TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    UNIQUE (task_id, domain)
);

CREATE TRIGGER task_grants_append_only BEFORE UPDATE ON task_grants
BEGIN
    SELECT RAISE(ABORT, 'browserop: grants are append-only');
END;

CREATE TABLE task_events (
    id         INTEGER PRIMARY KEY,
    task_id    TEXT NOT NULL REFERENCES tasks(id),
    generation INTEGER NOT NULL,
    kind       TEXT NOT NULL,
    detail     TEXT NOT NULL,
    at         INTEGER NOT NULL
);
CREATE INDEX task_events_task ON task_events (task_id, id);

CREATE TRIGGER task_events_no_update BEFORE UPDATE ON task_events
BEGIN
    SELECT RAISE(ABORT, 'browserop: task events are append-only');
END;
CREATE TRIGGER task_events_no_delete BEFORE DELETE ON task_events
BEGIN
    SELECT RAISE(ABORT, 'browserop: task events are append-only');
END;

-- Intents an agent submitted to a task, performed by the next passes like
-- calendar entries. The same request twice is one intent.
CREATE TABLE task_intents (
    id           TEXT PRIMARY KEY,
    task_id      TEXT NOT NULL REFERENCES tasks(id),
    request_json TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    UNIQUE (task_id, request_json)
);
CREATE INDEX task_intents_task ON task_intents (task_id);

CREATE TRIGGER task_intents_immutable BEFORE UPDATE ON task_intents
BEGIN
    SELECT RAISE(ABORT, 'browserop: task intents are immutable');
END;

-- A person's answer to an action whose capability needs confirmation.
CREATE TABLE confirmations (
    action_id  TEXT PRIMARY KEY REFERENCES actions(id),
    state      TEXT NOT NULL CHECK (state IN ('pending', 'confirmed', 'declined')),
    by         TEXT NOT NULL DEFAULT '',
    reason     TEXT NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);

CREATE TRIGGER confirmations_answer_once
BEFORE UPDATE ON confirmations WHEN OLD.state != 'pending'
BEGIN
    SELECT RAISE(ABORT, 'browserop: a confirmation is answered once');
END;

CREATE TABLE runs (
    id           TEXT PRIMARY KEY,
    lease_name   TEXT NOT NULL,
    generation   INTEGER NOT NULL,
    holder       TEXT NOT NULL,
    started_at   INTEGER NOT NULL,
    ended_at     INTEGER,
    outcome      TEXT,
    summary_json TEXT
);

CREATE TABLE actions (
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
    status           TEXT NOT NULL CHECK (status IN ('planned', 'executing', 'verified', 'failed', 'ambiguous')),
    attempt          INTEGER NOT NULL DEFAULT 1,
    canonical_result TEXT NOT NULL DEFAULT '',
    failure_reason   TEXT NOT NULL DEFAULT '',
    failure_class    TEXT NOT NULL DEFAULT '',
    -- The effect may surface later than a search can see: the site answered
    -- the submission (it navigated on, on the site), or the submission timed
    -- out with its request possibly still pending. A search that misses it is
    -- then never a definitive absence.
    may_surface      INTEGER NOT NULL DEFAULT 0,
    -- JSON list of the identical items' URLs a complete search found just
    -- before the click (NULL: none taken): never this action's result.
    baseline_json    TEXT,
    generation       INTEGER NOT NULL DEFAULT 0,  -- generation of the last write
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    executing_at     INTEGER,
    settled_at       INTEGER
);
CREATE INDEX actions_status ON actions (status, format);
CREATE INDEX actions_task ON actions (task_id);

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
CREATE TRIGGER actions_no_delete BEFORE DELETE ON actions
BEGIN
    SELECT RAISE(ABORT, 'browserop: actions are never deleted');
END;

CREATE TABLE action_events (
    id          INTEGER PRIMARY KEY,
    action_id   TEXT NOT NULL REFERENCES actions(id),
    from_status TEXT NOT NULL,                 -- '' for the reservation
    to_status   TEXT NOT NULL,
    generation  INTEGER NOT NULL,
    by          TEXT NOT NULL,                 -- 'operator' or 'person'
    reason      TEXT NOT NULL,
    at          INTEGER NOT NULL
);
CREATE INDEX action_events_action ON action_events (action_id, id);

CREATE TRIGGER action_events_no_update BEFORE UPDATE ON action_events
BEGIN
    SELECT RAISE(ABORT, 'browserop: action events are append-only');
END;
CREATE TRIGGER action_events_no_delete BEFORE DELETE ON action_events
BEGIN
    SELECT RAISE(ABORT, 'browserop: action events are append-only');
END;

CREATE TABLE leases (
    name         TEXT PRIMARY KEY,
    holder       TEXT NOT NULL,
    generation   INTEGER NOT NULL,
    acquired_at  INTEGER NOT NULL,
    heartbeat_at INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL,
    released     INTEGER NOT NULL DEFAULT 0
);

-- Fencing tokens only grow.
CREATE TRIGGER leases_generation_grows
BEFORE UPDATE OF generation ON leases WHEN NEW.generation < OLD.generation
BEGIN
    SELECT RAISE(ABORT, 'browserop: a lease generation never decreases');
END;

-- One row per verified action that a budget counts: which limits it consumed,
-- and when its effect happened.
CREATE TABLE budget_usage (
    id         INTEGER PRIMARY KEY,
    action_id  TEXT NOT NULL UNIQUE REFERENCES actions(id),
    format     TEXT NOT NULL,
    limits     TEXT NOT NULL,   -- names of the limits it consumed, comma-separated
    generation INTEGER NOT NULL,
    at         INTEGER NOT NULL
);
CREATE INDEX budget_usage_window ON budget_usage (format, at);
CREATE INDEX budget_usage_at ON budget_usage (at);

CREATE TABLE thread_parts (
    thread_id           TEXT NOT NULL,
    position            INTEGER NOT NULL CHECK (position >= 0),
    action_id           TEXT NOT NULL UNIQUE REFERENCES actions(id),
    expected_parent_url TEXT NOT NULL DEFAULT '',
    published_url       TEXT NOT NULL DEFAULT '',
    verified            INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (thread_id, position)
);

CREATE TABLE tabs (
    id           INTEGER PRIMARY KEY,
    task_id      TEXT,
    run_id       TEXT,
    target_id    TEXT NOT NULL,                -- raw browser target id: stays on this machine
    surface      TEXT NOT NULL CHECK (surface IN ('owned', 'user')),
    url          TEXT NOT NULL,                -- normalized URL
    binding_hash TEXT NOT NULL,
    ownership    TEXT NOT NULL CHECK (ownership IN ('owned', 'probable', 'unrelated')),
    epoch        INTEGER NOT NULL DEFAULT 1 CHECK (epoch >= 1),
    state        TEXT NOT NULL CHECK (state IN ('live', 'handoff', 'missing', 'closed_verified', 'closure_unverified')),
    generation   INTEGER NOT NULL DEFAULT 0,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL
);
CREATE INDEX tabs_state ON tabs (state);
CREATE INDEX tabs_task ON tabs (task_id);

CREATE TRIGGER tabs_epoch_grows
BEFORE UPDATE OF epoch ON tabs WHEN NEW.epoch < OLD.epoch
BEGIN
    SELECT RAISE(ABORT, 'browserop: an inspection epoch never decreases');
END;
