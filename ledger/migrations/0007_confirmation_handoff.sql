-- The handoff of a prepared action to the person (docs/operator.md,
-- "Confirmations and the handed-off tab"). A pass that prepares an action the
-- contract asks the person to confirm leaves its tab with them, filled and
-- submittable: the person may press the site's own button in it before or
-- after they answer. What a later pass needs to judge whether they did is
-- recorded with the confirmation, once, when the tab is handed over:
--
--   handoff_tab_id         the tab record of the handed-off tab
--   handoff_url            the prepared page, in the tab record's URL form
--   handoff_at             when the handoff began (before the baseline was
--                          read and the tab prepared); NULL: not recorded
--                          (a confirmation asked before this migration)
--   handoff_baseline_json  JSON list of the identical items' URLs a complete
--                          search found before the tab was prepared (NULL:
--                          no baseline was taken)
--   handoff_seen_json      JSON list, in page order, of every item of the
--                          actor's the same search showed (NULL: none
--                          taken; see actions.seen_json)
--
-- held_reason says why a pass holds an answered action instead of going on
-- (its handed-off tab is not proven closed), '' when it does not.
ALTER TABLE confirmations ADD COLUMN handoff_tab_id INTEGER REFERENCES tabs(id);
ALTER TABLE confirmations ADD COLUMN handoff_url TEXT NOT NULL DEFAULT '';
ALTER TABLE confirmations ADD COLUMN handoff_at INTEGER;
ALTER TABLE confirmations ADD COLUMN handoff_baseline_json TEXT;
ALTER TABLE confirmations ADD COLUMN handoff_seen_json TEXT;
ALTER TABLE confirmations ADD COLUMN held_reason TEXT NOT NULL DEFAULT '';

-- The answer is still given once; the reason a pass holds it may change.
DROP TRIGGER confirmations_answer_once;
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
