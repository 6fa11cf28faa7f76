-- A placeholder, so that this branch's migration 0013 applies: migration
-- 0012 belongs to another branch, which adds its own 0012_*.sql at the same
-- time. Drop this file when the branches meet (two files numbered 0012
-- make migrations() panic at once, so the merge cannot miss it).
SELECT 1;
