-- A tab record is written before its tab exists: state 'opening', with an
-- empty target id, and the tab opens on a marker URL derived from the
-- record (see operator/tabs.go). A crash between creating the tab and
-- recording its target then leaves a record that a later pass uses to find
-- the marked tab and close it. SQLite cannot change a CHECK constraint in
-- place, so the table is rebuilt; nothing references it by foreign key.
CREATE TABLE tabs_new (
    id           INTEGER PRIMARY KEY,
    task_id      TEXT,
    run_id       TEXT,
    target_id    TEXT NOT NULL,                -- raw browser target id ('' while opening): stays on this machine
    surface      TEXT NOT NULL CHECK (surface IN ('owned', 'user')),
    url          TEXT NOT NULL,                -- normalized URL
    binding_hash TEXT NOT NULL,
    ownership    TEXT NOT NULL CHECK (ownership IN ('owned', 'probable', 'unrelated')),
    epoch        INTEGER NOT NULL DEFAULT 1 CHECK (epoch >= 1),
    state        TEXT NOT NULL CHECK (state IN ('opening', 'live', 'handoff', 'missing', 'closed_verified', 'closure_unverified')),
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
