-- Cleanup consent (docs/operator.md, "Cleanup preference"): which of the
-- tabs browserop opened in a profile it may close by itself, as the person
-- chose it, per profile. No row, or a row with no preference, is unknown:
-- browserop then closes nothing that needs consent, and never picks a
-- value for the person.
--
--   never                         browserop closes none of its tabs
--   submitted_only                only a tab whose every prepared action
--                                 was verified (the close-proof path)
--   submitted_and_probe_blockers  also a probe tab: one in which nothing
--                                 was typed and no control was changed (no
--                                 action prepared, no field filled), its
--                                 blocker screen, if it met one, recorded
--
-- asked_at is when `browserop` asked on a terminal (once: an unanswered
-- question is not asked again; `browserop config cleanup` sets it).
CREATE TABLE cleanup_preferences (
    profile    TEXT NOT NULL PRIMARY KEY,
    preference TEXT CHECK (preference IN ('never', 'submitted_only', 'submitted_and_probe_blockers')),
    set_by     TEXT NOT NULL DEFAULT '',  -- cli, terminal, api: the person's, never an agent's
    set_at     INTEGER,
    asked_at   INTEGER
);

-- A tab kept open: browserop would have closed it but may not (no
-- preference, `never`, a tab the preference does not cover, a tab shown
-- to the person). A kept record is not lost and not reusable: later
-- passes leave its tab alone, record its absence once the person closed
-- it, and close it with proof only if the preference comes to cover it.
INSERT INTO tab_states (state) VALUES ('kept');

-- What the record is for: a pass's site tab, or a probe a command opened
-- for itself (doctor, sites check, login). A probe record is written by a
-- command that holds no operator lease (generation 0); a pass's record
-- only under the lease's fence.
ALTER TABLE tabs ADD COLUMN purpose TEXT NOT NULL DEFAULT 'pass'
    CHECK (purpose IN ('pass', 'doctor', 'sites_check', 'login'));
-- The blocker screen the tab met (a sites.BlockerKind: captcha, login,
-- rate_limit, restricted), recorded before any close it allows.
ALTER TABLE tabs ADD COLUMN blocker TEXT NOT NULL DEFAULT '';
-- Why a kept record was kept (value-free: browserop's words).
ALTER TABLE tabs ADD COLUMN kept_reason TEXT NOT NULL DEFAULT '';
-- A probe's tab given to the person (login's sign-in window): theirs,
-- never closed by browserop. Set once, before it is shown.
ALTER TABLE tabs ADD COLUMN shown INTEGER NOT NULL DEFAULT 0 CHECK (shown IN (0, 1));
-- Text typed into a probe's tab outside any action (sites check --text):
-- no probe any more. Set once, before anything is typed.
ALTER TABLE tabs ADD COLUMN typed INTEGER NOT NULL DEFAULT 0 CHECK (typed IN (0, 1));

-- Every action browserop began to prepare in a tab record (typing, a step
-- that changes a control), recorded before it begins: a tab with none is
-- a probe (nothing entered, nothing changed, no draft of browserop's);
-- one whose every use ended verified is a submitted tab. Pruned with its
-- record.
CREATE TABLE tab_uses (
    tab_id    INTEGER NOT NULL REFERENCES tabs(id),
    action_id TEXT NOT NULL REFERENCES actions(id),
    epoch     INTEGER NOT NULL CHECK (epoch >= 1),
    at        INTEGER NOT NULL,
    PRIMARY KEY (tab_id, action_id, epoch)
);
CREATE TRIGGER tab_uses_no_update BEFORE UPDATE ON tab_uses
BEGIN
    SELECT RAISE(ABORT, 'browserop: a tab use never changes');
END;
