-- The facts a tab record's close is proven by, recorded one by one as the
-- operator observes them, for the record's inspection epoch at the time:
--
--   inventory_reconciled  the inventories taken before the close: for each
--                         surface (controller: the browser's page targets;
--                         person: the tabs in the person's windows) whether
--                         it was taken, complete, and listed the tab
--   close_receipt         what closing the tab observed: the command sent,
--                         its destruction confirmed, or the tab already gone
--   post_close_absent     the inventories taken after the close, as above
--
-- closed_verified is derived from the facts of the record's current epoch
-- (ledger.CloseProof), never written on its own: UpdateTab refuses it
-- unless they prove it. Facts are never changed; they go only with their
-- record when a record proven closed is pruned after its retention period
-- (PruneTabs). See docs/decisions/2026-12-07-tab-close-facts.md.
CREATE TABLE tab_fact_kinds (kind TEXT NOT NULL PRIMARY KEY);
INSERT INTO tab_fact_kinds (kind) VALUES ('inventory_reconciled'), ('close_receipt'), ('post_close_absent');
CREATE TRIGGER tab_fact_kinds_no_update BEFORE UPDATE ON tab_fact_kinds
BEGIN
    SELECT RAISE(ABORT, 'browserop: the values of tab_fact_kinds never change');
END;
CREATE TRIGGER tab_fact_kinds_no_delete BEFORE DELETE ON tab_fact_kinds
BEGIN
    SELECT RAISE(ABORT, 'browserop: the values of tab_fact_kinds never change');
END;

CREATE TABLE tab_facts (
    id                  INTEGER PRIMARY KEY,  -- the order facts were recorded in
    tab_id              INTEGER NOT NULL REFERENCES tabs(id),
    epoch               INTEGER NOT NULL,     -- the record's epoch when recorded
    kind                TEXT NOT NULL,        -- one of tab_fact_kinds
    -- Inventory facts: NULL when the surface's inventory was not taken.
    controller_complete INTEGER,
    controller_listed   INTEGER,
    person_complete     INTEGER,
    person_listed       INTEGER,
    -- Close receipts: NULL on inventory facts.
    receipt_sent        INTEGER,
    receipt_confirmed   INTEGER,
    receipt_gone        INTEGER,
    generation          INTEGER NOT NULL,
    at                  INTEGER NOT NULL
);
CREATE INDEX tab_facts_tab ON tab_facts (tab_id, epoch);

CREATE TRIGGER tab_facts_kind_known
BEFORE INSERT ON tab_facts
WHEN NOT EXISTS (SELECT 1 FROM tab_fact_kinds WHERE kind = NEW.kind)
BEGIN
    SELECT RAISE(ABORT, 'browserop: unknown tab fact (tab_fact_kinds lists them)');
END;

-- A fact is about the epoch the record is in: evidence is never filed
-- under an epoch that is over, or one that has not begun.
CREATE TRIGGER tab_facts_current_epoch
BEFORE INSERT ON tab_facts
WHEN NEW.epoch IS NOT (SELECT epoch FROM tabs WHERE id = NEW.tab_id)
BEGIN
    SELECT RAISE(ABORT, 'browserop: a tab fact is recorded in its record''s current epoch');
END;

-- An inventory fact says nothing of a receipt, a receipt nothing of an
-- inventory.
CREATE TRIGGER tab_facts_shape
BEFORE INSERT ON tab_facts
WHEN (NEW.kind = 'close_receipt') != (NEW.receipt_sent IS NOT NULL AND NEW.receipt_confirmed IS NOT NULL AND NEW.receipt_gone IS NOT NULL)
  OR (NEW.kind = 'close_receipt') = (NEW.controller_complete IS NOT NULL OR NEW.person_complete IS NOT NULL)
  OR (NEW.controller_complete IS NULL) != (NEW.controller_listed IS NULL)
  OR (NEW.person_complete IS NULL) != (NEW.person_listed IS NULL)
BEGIN
    SELECT RAISE(ABORT, 'browserop: a tab fact is an inventory or a close receipt');
END;

CREATE TRIGGER tab_facts_no_update BEFORE UPDATE ON tab_facts
BEGIN
    SELECT RAISE(ABORT, 'browserop: tab facts never change');
END;

-- Only a record proven closed is pruned, and its facts with it.
CREATE TRIGGER tab_facts_pruned_only BEFORE DELETE ON tab_facts
WHEN EXISTS (SELECT 1 FROM tabs WHERE id = OLD.tab_id AND state != 'closed_verified')
BEGIN
    SELECT RAISE(ABORT, 'browserop: the facts of a tab record not proven closed are kept');
END;
CREATE TRIGGER tabs_pruned_only BEFORE DELETE ON tabs
WHEN OLD.state != 'closed_verified'
BEGIN
    SELECT RAISE(ABORT, 'browserop: a tab record not proven closed is kept');
END;
