-- A placeholder, so that this branch's migration 0012 applies: migration
-- 0011 belongs to another branch, which adds its own 0011_*.sql at the same
-- time. Drop this file when the branches meet (two files numbered 0011 make
-- migrations() panic at once, so the merge cannot miss it).
SELECT 1;
