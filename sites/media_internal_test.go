package sites

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/browserop/browserop/media"
)

const sha = "1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b"

// A file is uploaded under its name's letters, digits, '-' and '_' and
// the start of its SHA-256: a name sites keep as it is, unique to its
// bytes.
func TestUploadName(t *testing.T) {
	for file, want := range map[string]string{
		"/m/cat.png":              "cat-1a2b3c4d5e6f",
		"/m/my photo.final.jpg":   "my-photo-final-1a2b3c4d5e6f",
		`/m/a"b\c'd.gif`:          "a-b-c-d-1a2b3c4d5e6f",
		"/m/--café ☕--.png":       "caf-1a2b3c4d5e6f",
		"/m/☕.png":                "image-1a2b3c4d5e6f",
		"/m/noext":                "noext-1a2b3c4d5e6f",
		"/m/under_score-dash.gif": "under_score-dash-1a2b3c4d5e6f",
	} {
		if got := uploadName(media.Item{File: file, SHA256: sha}); got != want {
			t.Errorf("%q: got %q, want %q", file, got, want)
		}
	}
}

// A slot puts its number and its upload name into selectors; the name is
// escaped so that it stays one quoted CSS string whatever it holds.
func TestSlotPut(t *testing.T) {
	for _, tt := range []struct {
		name, sel, want string
	}{
		{"cat", "#media-{n}", "#media-3"},
		{"cat-1a2b", `li[aria-label="{name}"]:nth-child({n})`, `li[aria-label="cat-1a2b"]:nth-child(3)`},
		{`a"b\c'd`, `[aria-label="{name}"]`, `[aria-label="a\"b\\c\'d"]`},
		{"line\nbreak", `[aria-label="{name}"]`, `[aria-label="line\a break"]`},
	} {
		if got := (slot{n: 3, name: tt.name}).put(tt.sel); got != tt.want {
			t.Errorf("%q in %q: got %q, want %q", tt.name, tt.sel, got, tt.want)
		}
	}
	if got := slotOf(0, media.Item{File: "/m/cat.png", SHA256: sha}).put(`#m-{n}[title="{name}"]`); got != `#m-1[title="cat-1a2b3c4d5e6f"]` {
		t.Errorf("slotOf: got %q", got)
	}
}

// pollFor tells its own timeout from the end of the caller's context: a
// step that ran out of time failed; a cancelled pass did not fail a step.
func TestPollForEnds(t *testing.T) {
	never := func(context.Context) (bool, error) { return false, nil }
	var got error
	keep := func(err error) error { got = err; return err }

	_ = pollFor(context.Background(), 30*time.Millisecond, 5*time.Millisecond, never, keep)
	var late errNotWithin
	if !errors.As(got, &late) || got.Error() != "not within 30ms" {
		t.Fatalf("timeout: got %v", got)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = pollFor(ctx, time.Minute, 5*time.Millisecond, never, keep)
	if !errors.Is(got, context.Canceled) {
		t.Fatalf("cancelled: got %v", got)
	}
	if err := stepErr("steps[0]: gone", "#x", got); !errors.Is(err, context.Canceled) || errors.Is(err, ErrStepFailed) {
		t.Fatalf("a cancelled step is not a failed one: %v", err)
	}

	boom := errors.New("boom")
	_ = pollFor(context.Background(), time.Minute, 5*time.Millisecond, func(context.Context) (bool, error) { return false, boom }, keep)
	if got != boom {
		t.Fatalf("cond's error: got %v", got)
	}
	if err := pollFor(context.Background(), time.Minute, 5*time.Millisecond, func(context.Context) (bool, error) { return true, nil }, keep); err != nil {
		t.Fatalf("holds: got %v", err)
	}
}
