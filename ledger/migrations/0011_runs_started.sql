-- Runs are read newest first (`browserop runs`, GET /v1/runs): an index by
-- start time lets a listing read its page of runs without sorting every
-- run the ledger holds (a service makes about 35,000 a year).
CREATE INDEX runs_started ON runs (started_at, id);
