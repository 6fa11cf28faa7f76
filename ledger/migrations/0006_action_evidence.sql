-- What an action's proof of absence rests on, besides the identical items
-- of baseline_json (docs/design.md invariant 12):
--
-- seen_json: a JSON list, in page order (newest first), of the canonical
-- URLs of every item by the actor that a complete search showed just before
-- the click (NULL: none taken). An item by the actor that is not in it and
-- is not another action's recorded result appeared after it was read and is
-- unexplained: while one is there, no view proves this action absent.
--
-- landed_url: the result link the page the submission landed on named
-- ('' for none). A search that does not show it never proves the action
-- absent: the landed page contradicts it.
ALTER TABLE actions ADD COLUMN seen_json TEXT;
ALTER TABLE actions ADD COLUMN landed_url TEXT NOT NULL DEFAULT '';
-- The recorded results of an actor's other actions on a site, for the same.
CREATE INDEX actions_site_actor ON actions (site, actor, executing_at);
