-- Field provenance: for every text field an action fills, who put the
-- field's value there, in one tab record and one inspection epoch
-- (docs/ledger.md, "Field provenance"). The field is named by a
-- fingerprint of the adapter's declaration of it (its place in the
-- action's fields and its selectors, hashed: sites.FieldFingerprint),
-- never by anything it holds: no value, and nothing derived from one,
-- is stored.
--
--   agent_filled             browserop typed the field and read it back
--   user_edited              the field changed after browserop read it back
--   unknown_external_change  the field held a value nobody recorded
--
-- Self-contained: it needs only actions and tabs (0001) and is keyed on
-- nothing a later migration adds.

CREATE TABLE field_provenance_states (state TEXT NOT NULL PRIMARY KEY);
INSERT INTO field_provenance_states (state) VALUES
    ('agent_filled'), ('user_edited'), ('unknown_external_change');
CREATE TRIGGER field_provenance_states_no_update BEFORE UPDATE ON field_provenance_states
BEGIN
    SELECT RAISE(ABORT, 'browserop: field provenance states are never changed or removed');
END;
CREATE TRIGGER field_provenance_states_no_delete BEFORE DELETE ON field_provenance_states
BEGIN
    SELECT RAISE(ABORT, 'browserop: field provenance states are never changed or removed');
END;

CREATE TABLE field_provenance (
    action_id  TEXT NOT NULL REFERENCES actions(id),
    tab_id     INTEGER NOT NULL REFERENCES tabs(id),
    epoch      INTEGER NOT NULL CHECK (epoch >= 1),
    field      TEXT NOT NULL CHECK (length(field) = 64 AND field NOT GLOB '*[^0-9a-f]*'),
    state      TEXT NOT NULL,
    generation INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (action_id, tab_id, epoch, field)
);

CREATE TRIGGER field_provenance_state_known_insert
BEFORE INSERT ON field_provenance
WHEN NOT EXISTS (SELECT 1 FROM field_provenance_states WHERE state = NEW.state)
BEGIN
    SELECT RAISE(ABORT, 'browserop: unknown field provenance state (field_provenance_states lists them)');
END;
CREATE TRIGGER field_provenance_state_known_update
BEFORE UPDATE OF state ON field_provenance
WHEN NOT EXISTS (SELECT 1 FROM field_provenance_states WHERE state = NEW.state)
BEGIN
    SELECT RAISE(ABORT, 'browserop: unknown field provenance state (field_provenance_states lists them)');
END;

-- A field a person edited, or one whose value nobody recorded, is never
-- browserop's again in that tab and epoch: only agent_filled changes.
CREATE TRIGGER field_provenance_person_final
BEFORE UPDATE ON field_provenance
WHEN OLD.state != 'agent_filled' AND NEW.state != OLD.state
BEGIN
    SELECT RAISE(ABORT, 'browserop: a field a person edited or nobody recorded is never agent_filled again');
END;
CREATE TRIGGER field_provenance_key_fixed
BEFORE UPDATE OF action_id, tab_id, epoch, field ON field_provenance
BEGIN
    SELECT RAISE(ABORT, 'browserop: a field provenance record keeps its key');
END;
CREATE TRIGGER field_provenance_no_delete
BEFORE DELETE ON field_provenance
BEGIN
    SELECT RAISE(ABORT, 'browserop: field provenance is never deleted');
END;
