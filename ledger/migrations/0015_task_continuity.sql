-- Task continuity (docs/ledger.md, "Task continuity"; issue 24 §6, §7).
--
-- 1. The site's own words are kept apart from an action's failure reason:
--    failure_reason says, in fixed words, what happened (it reaches agents
--    and logs); failure_site_words holds what the site or the adapter said
--    (a refusal's message, a failed step's or upload's detail), excerpted
--    and escaped, for the person only (actions show, the person's API).
ALTER TABLE actions ADD COLUMN failure_site_words TEXT NOT NULL DEFAULT '';

-- 2. The tab records each task's actions used: a site's tab in a pass
--    serves the actions of each task in turn, so a record may serve more
--    than one task. (tabs.task_id stays the one task a handed-off tab is
--    bound to.) Rows are never changed; they go only with a pruned record.
CREATE TABLE task_tabs (
    task_id  TEXT NOT NULL REFERENCES tasks(id),
    -- A record pruned once proven closed (PruneTabs) leaves with its rows.
    tab_id   INTEGER NOT NULL REFERENCES tabs(id) ON DELETE CASCADE,
    -- The inspection epoch the task first used the record in.
    epoch    INTEGER NOT NULL,
    at       INTEGER NOT NULL,
    PRIMARY KEY (task_id, tab_id)
);
CREATE INDEX task_tabs_tab ON task_tabs (tab_id);
CREATE TRIGGER task_tabs_no_update BEFORE UPDATE ON task_tabs
BEGIN
    SELECT RAISE(ABORT, 'browserop: a task''s tab records are never changed');
END;

-- What records a task used before this migration: those bound to it.
INSERT OR IGNORE INTO task_tabs (task_id, tab_id, epoch, at)
SELECT task_id, id, epoch, created_at FROM tabs WHERE task_id IS NOT NULL AND task_id IN (SELECT id FROM tasks);

-- 3. The continuity of the planner or agent that drives a task, as the
--    agent reports it (ledger.Continuity, canonical JSON; NULL: none
--    reported). It is never read by any authority check.
ALTER TABLE tasks ADD COLUMN continuity_json TEXT;
