package ledger_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// withoutContinuity is a snapshot of a ledger at schema version 15 or
// later without what migrations 0014 (reserved) and 0015 added: the table
// task_tabs (with its index and trigger), tasks.continuity_json and
// actions.failure_site_words, and their schema_migrations rows; the rest
// must be as before them.
func withoutContinuity(tb testing.TB, s ledgerSnapshot) ledgerSnapshot {
	tb.Helper()
	_, ok := s.Objects["task_tabs"]
	require.True(tb, ok, "migration 0015's table task_tabs")
	for name, o := range s.Objects {
		if o.Table == "task_tabs" {
			delete(s.Objects, name)
		}
	}
	delete(s.Shapes, "task_tabs")
	delete(s.Rows, "task_tabs")
	for table, col := range map[string]string{"tasks": "continuity_json TEXT", "actions": "failure_site_words TEXT NOT NULL DEFAULT ''"} {
		o := s.Objects[table]
		added := ", " + col + ")"
		require.True(tb, strings.HasSuffix(o.SQL.String, added), "%s: %s", table, o.SQL.String)
		o.SQL.String = strings.TrimSuffix(o.SQL.String, added) + ")"
		s.Objects[table] = o
		shape := s.Shapes[table]
		n := len(shape.Columns) - 1
		require.Equal(tb, strings.Fields(col)[0], shape.Columns[n][1], "the last column of %s", table)
		shape.Columns = shape.Columns[:n]
		s.Shapes[table] = shape
		rows := make([][]any, len(s.Rows[table]))
		for i, r := range s.Rows[table] {
			rows[i] = r[:len(r)-1]
		}
		s.Rows[table] = rows
	}
	var migs [][]any
	for _, r := range s.Rows["schema_migrations"] {
		if v := r[1].(int64); v != 14 && v != 15 {
			migs = append(migs, r)
		}
	}
	s.Rows["schema_migrations"] = migs
	return s
}
