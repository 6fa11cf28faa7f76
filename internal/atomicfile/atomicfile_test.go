package atomicfile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/browserop/browserop/internal/atomicfile"
	"github.com/stretchr/testify/require"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	require.NoError(t, atomicfile.Write(path, []byte("one"), 0o600))
	require.NoError(t, atomicfile.Write(path, []byte("two"), 0o644))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "two", string(got))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o644), fi.Mode().Perm())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file is left")

	require.Error(t, atomicfile.Write(filepath.Join(dir, "missing", "f"), []byte("x"), 0o600))
	got, _ = os.ReadFile(path)
	require.Equal(t, "two", string(got))
}
