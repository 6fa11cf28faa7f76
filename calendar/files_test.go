//go:build unix

package calendar_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/calendar"
)

// Files in the calendar folder that are not calendar files are that
// file's problem, at once: a FIFO (it never answered, and the pass hung
// with its lease held), a link to /dev/zero (read whole, it grew without
// bound), a file over calendar.MaxFile, and a FIFO named as an entry's
// image. The valid entry beside them still counts.
func TestLoadCalendarRefusesWhatIsNoCalendarFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.yaml"), []byte(
		"entries:\n  - id: fine\n    site: demo\n    actor: bob\n    type: post\n    at: 2026-12-01T10:00:00Z\n    text: ok\n"+
			"  - id: piped\n    site: demo\n    actor: bob\n    type: post\n    at: 2026-12-01T10:00:00Z\n    text: with an image\n"+
			"    media: [{file: pipe.png, alt: a pipe}]\n"), 0o600))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "b.yaml"), 0o600))
	require.NoError(t, os.Symlink("/dev/zero", filepath.Join(dir, "c.yaml")))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "d.yaml"), []byte("# "+strings.Repeat("x", calendar.MaxFile)+"\n"), 0o600))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "pipe.png"), 0o600))

	type loaded struct {
		cal calendar.Calendar
		err error
	}
	done := make(chan loaded, 1)
	go func() {
		cal, err := calendar.Load(dir, "")
		done <- loaded{cal, err}
	}()
	var got loaded
	select {
	case got = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("LoadCalendar blocked on a FIFO or a device")
	}
	require.NoError(t, got.err)
	require.Len(t, got.cal.Entries, 1)
	require.Equal(t, "fine", got.cal.Entries[0].ID)
	var msgs []string
	for _, p := range got.cal.Problems {
		msgs = append(msgs, p.Error())
	}
	all := strings.Join(msgs, "\n")
	require.Len(t, msgs, 4, all)
	require.Contains(t, all, "b.yaml: not a regular file (a FIFO)")
	require.Contains(t, all, "c.yaml: not a regular file (a device)")
	require.Contains(t, all, "d.yaml: too large")
	require.Contains(t, all, `entry "piped": media[0] "pipe.png": not a regular file (a FIFO)`)
}
