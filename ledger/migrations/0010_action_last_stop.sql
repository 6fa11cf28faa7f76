-- The last hard stop that held a planned action: a pass stopped its site
-- (or every site) before the action's click, so it stayed planned. What
-- the pass named the stop (last_stop_kind: "login", "identity_mismatch",
-- or a pass-wide stop's reason), what it said of its cause, made fit for
-- a terminal (last_stop_cause, '' for nothing more), the pass (run) and
-- the time. RecordStop writes them on a planned action; every transition
-- out of planned clears them, so an action that went ahead carries none
-- and a person reading a planned one learns why it did not go.
ALTER TABLE actions ADD COLUMN last_stop_kind TEXT NOT NULL DEFAULT '';
ALTER TABLE actions ADD COLUMN last_stop_cause TEXT NOT NULL DEFAULT '';
ALTER TABLE actions ADD COLUMN last_stop_run_id TEXT NOT NULL DEFAULT '';
ALTER TABLE actions ADD COLUMN last_stop_at INTEGER;

-- A stop holds a planned action only: one that went ahead (or was
-- settled) never keeps the stop of a pass that did not perform it.
CREATE TRIGGER actions_last_stop_planned
BEFORE UPDATE ON actions
WHEN NEW.status != 'planned' AND (NEW.last_stop_at IS NOT NULL OR NEW.last_stop_kind != '')
BEGIN
    SELECT RAISE(ABORT, 'browserop: only a planned action is held by a stop');
END;
