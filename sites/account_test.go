package sites

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestLoginOf(t *testing.T) {
	d := &Declarative{spec: Spec{Accounts: map[string]AccountSpec{
		"alice": {Slug: "alice-w", Name: "Alice Wonder"},
		"bob":   {Name: "alice"}, // bob's display name is alice's login
	}}}
	for _, tc := range []struct{ shown, shows, want string }{
		{"alice", "login", "alice"},
		{"alice", "", "alice"},
		{"alice-w", "slug", "alice"},
		{"Alice Wonder", "name", "alice"},
		{"alice", "name", "bob"},        // a declared name wins
		{"alice", "slug", "slug:alice"}, // alice declares another slug: not hers
		{"carol", "name", "carol"},      // undeclared: the login itself
		{"Alice Wonder", "slug", "Alice Wonder"},
	} {
		require.Equal(t, tc.want, d.loginOf(tc.shown, tc.shows), "%q as %s", tc.shown, tc.shows)
	}
	require.Equal(t, AccountSpec{Slug: "carol", Name: "carol"}, d.account("carol"))
	require.Equal(t, "alice-w", d.account("alice").Slug)
}

func TestParseTimeLayout(t *testing.T) {
	got, err := parseTime(&FieldSpec{Layout: "2006/01/02 at 3:04 pm", Zone: "Europe/Paris"}, "2026/11/30 at 11:41 pm")
	require.NoError(t, err)
	require.True(t, got.Equal(time.Date(2026, 11, 30, 22, 41, 0, 0, time.UTC)), got)
	got, err = parseTime(&FieldSpec{}, "2026-11-30T23:41:05Z")
	require.NoError(t, err)
	require.True(t, got.Equal(time.Date(2026, 11, 30, 23, 41, 5, 0, time.UTC)))
	_, err = parseTime(&FieldSpec{Layout: "2006/01/02 at 3:04 pm", Zone: "UTC"}, "yesterday")
	require.Error(t, err)
}
