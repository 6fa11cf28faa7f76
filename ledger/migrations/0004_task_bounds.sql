-- The side effects an intent makes (a thread one per part). The contract's
-- bound is checked against their sum in the transaction that accepts an
-- intent, so parallel submissions cannot pass it together.
ALTER TABLE task_intents ADD COLUMN effects INTEGER NOT NULL DEFAULT 1 CHECK (effects >= 1);

DROP TRIGGER task_intents_immutable;
UPDATE task_intents SET effects = max(1, COALESCE(json_array_length(request_json, '$.parts'), 1))
    WHERE json_extract(request_json, '$.type') = 'thread';
CREATE TRIGGER task_intents_immutable BEFORE UPDATE ON task_intents
BEGIN
    SELECT RAISE(ABORT, 'browserop: task intents are immutable');
END;

-- A finished task accepts no more intents; once every intent is settled a
-- pass makes it done, with its result.
ALTER TABLE tasks ADD COLUMN finished_at INTEGER;
