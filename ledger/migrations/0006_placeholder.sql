-- A placeholder, so that this branch's migration 0007 applies: migration
-- 0006 belongs to another branch, which adds its own 0006_*.sql at the same
-- time. Drop this file when the branches meet (two files numbered 0006 make
-- migrations() panic at once, so the merge cannot miss it).
SELECT 1;
