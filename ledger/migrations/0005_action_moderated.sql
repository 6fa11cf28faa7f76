-- browserop: foreign_keys off
-- An action whose effect the site holds for moderation: it exists, it is not
-- public yet. Status 'moderated': executing -> moderated and ambiguous ->
-- moderated; moderated -> verified (a later search finds it public) or
-- failed (only by a person). It is never performed again.
--
-- SQLite cannot change a CHECK constraint in place, and other tables
-- reference actions, so the table is rebuilt as SQLite's documented
-- procedure says: with foreign key enforcement off for this migration (the
-- first line asks for it; migrate.go checks every reference before the
-- commit), a new table, every row copied, the old one dropped and the new
-- one renamed. Dropping the old table drops its indexes and triggers; they
-- are created again as they were, with one more trigger for the new status.
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
    status           TEXT NOT NULL CHECK (status IN ('planned', 'executing', 'verified', 'failed', 'ambiguous', 'moderated')),
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
    other_accounts_json TEXT
);
INSERT INTO actions_new (id, idempotency_key, task_id, run_id, type, format, site, actor, target_url, payload_json,
    status, attempt, canonical_result, failure_reason, failure_class, may_surface, baseline_json, generation,
    created_at, updated_at, executing_at, settled_at, other_accounts_json)
SELECT id, idempotency_key, task_id, run_id, type, format, site, actor, target_url, payload_json,
    status, attempt, canonical_result, failure_reason, failure_class, may_surface, baseline_json, generation,
    created_at, updated_at, executing_at, settled_at, other_accounts_json FROM actions;
DROP TABLE actions;
ALTER TABLE actions_new RENAME TO actions;
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
