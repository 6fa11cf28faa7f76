-- Runs are read newest first (`browserop runs`, GET /v1/runs): an index by
-- start time lets a listing read its page of runs without sorting every
-- run the ledger holds (a service makes about 35,000 a year).
CREATE INDEX runs_started ON runs (started_at, id);

-- A task's ownership and interaction generations (docs/ledger.md,
-- "Generations"): owner_generation (the lease generation of the operator
-- that last acted on it; the column is from 0001, written from here on),
-- connection_generation (the operator's browser connection it last acted
-- on, counted per lease in leases.connection_generation, one more each
-- time the connection is established again) and interaction_generation
-- (one more at each observe or act turn through the task service).
ALTER TABLE tasks ADD COLUMN connection_generation INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN interaction_generation INTEGER NOT NULL DEFAULT 0;
ALTER TABLE leases ADD COLUMN connection_generation INTEGER NOT NULL DEFAULT 0;

-- What the task state showed before: the newest generation that wrote one
-- of the task's actions.
UPDATE tasks SET owner_generation = (SELECT max(generation) FROM actions WHERE task_id = tasks.id)
WHERE (SELECT max(generation) FROM actions WHERE task_id = tasks.id) > owner_generation;

-- Every operator write of a task's action makes its generation the task's
-- owner (a person's resolution is written under generation 0: not an owner).
CREATE TRIGGER actions_own_task_insert
AFTER INSERT ON actions
WHEN NEW.task_id IS NOT NULL AND NEW.generation > 0
BEGIN
    UPDATE tasks SET owner_generation = NEW.generation WHERE id = NEW.task_id AND owner_generation < NEW.generation;
END;
CREATE TRIGGER actions_own_task_update
AFTER UPDATE OF generation ON actions
WHEN NEW.task_id IS NOT NULL AND NEW.generation > 0
BEGIN
    UPDATE tasks SET owner_generation = NEW.generation WHERE id = NEW.task_id AND owner_generation < NEW.generation;
END;

-- Generations only grow.
CREATE TRIGGER tasks_generations_grow
BEFORE UPDATE OF owner_generation, connection_generation, interaction_generation ON tasks
WHEN NEW.owner_generation < OLD.owner_generation
    OR NEW.connection_generation < OLD.connection_generation
    OR NEW.interaction_generation < OLD.interaction_generation
BEGIN
    SELECT RAISE(ABORT, 'browserop: a task generation never decreases');
END;
CREATE TRIGGER leases_connection_grows
BEFORE UPDATE OF connection_generation ON leases WHEN NEW.connection_generation < OLD.connection_generation
BEGIN
    SELECT RAISE(ABORT, 'browserop: a connection generation never decreases');
END;
