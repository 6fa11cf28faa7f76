-- Reserved: number 0014 belongs to a change made beside this one (the tab
-- cleanup preference). This file only keeps the numbering without gaps
-- (migrations() refuses one) until that migration takes its place; it
-- changes nothing.
SELECT 1;
