package wpsite

import "testing"

func TestBind(t *testing.T) {
	for _, c := range []struct {
		query string
		args  []any
		want  string
	}{
		{"SELECT ?", []any{"it's"}, `SELECT 'it\'s'`},
		{"SELECT ?, ?, ?, ?", []any{`a\b`, 7, true, nil}, `SELECT 'a\\b', 7, 1, NULL`},
		{"SELECT ?", []any{"nul\x00ctrlz\x1a"}, `SELECT 'nul\0ctrlz\Z'`},
		{"SELECT 1", nil, "SELECT 1"},
	} {
		got, err := bind(c.query, c.args)
		if err != nil || got != c.want {
			t.Errorf("bind(%q, %v) = %q, %v; want %q", c.query, c.args, got, err, c.want)
		}
	}
	for _, c := range []struct {
		query string
		args  []any
	}{
		{"SELECT ?", nil},
		{"SELECT 1", []any{1}},
		{"SELECT ?", []any{1.5}},
	} {
		if _, err := bind(c.query, c.args); err == nil {
			t.Errorf("bind(%q, %v) accepted", c.query, c.args)
		}
	}
}

func TestUnescapeBatch(t *testing.T) {
	for in, want := range map[string]string{
		`plain`:        "plain",
		`a\tb\nc\\d\0`: "a\tb\nc\\d\x00",
		`trailing\`:    `trailing\`,
	} {
		if got := unescapeBatch(in); got != want {
			t.Errorf("unescapeBatch(%q) = %q, want %q", in, got, want)
		}
	}
}
