-- intent_id: the intent an action performs, as outcomes name it (see
-- tasks.IntentOutcome): an agent's intent by its id (int_…), a calendar
-- entry or a planner candidate by its task's key (calendar:ID,
-- calendar:ID~N, planner:HASH). The payload keeps naming its intent
-- too ("task:int_…" for an agent's): it is part of the idempotency key,
-- which never changes. Reserve sets the column; this migration fills it
-- for the actions recorded before, from their payloads.
ALTER TABLE actions ADD COLUMN intent_id TEXT NOT NULL DEFAULT '';

-- A verified or failed action refuses every update: the two triggers that
-- say so step aside for the backfill and come back unchanged.
DROP TRIGGER actions_terminal_final;
DROP TRIGGER actions_failed_final;
UPDATE actions SET intent_id = CASE
    WHEN json_valid(payload_json) AND json_type(payload_json, '$.intent') = 'text' THEN
        CASE WHEN substr(json_extract(payload_json, '$.intent'), 1, 5) = 'task:'
            THEN substr(json_extract(payload_json, '$.intent'), 6)
            ELSE json_extract(payload_json, '$.intent') END
    ELSE '' END;
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

-- The intent is part of what an action is to do: immutable as the rest.
DROP TRIGGER actions_intent_immutable;
CREATE TRIGGER actions_intent_immutable
BEFORE UPDATE OF id, idempotency_key, task_id, type, format, site, actor, target_url, payload_json, intent_id ON actions
BEGIN
    SELECT RAISE(ABORT, 'browserop: an action''s intent is immutable');
END;

CREATE INDEX actions_task_intent ON actions (task_id, intent_id);
