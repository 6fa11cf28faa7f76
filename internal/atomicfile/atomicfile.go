// Package atomicfile writes a file so that a reader sees the old content or
// the new, never a part: through a temporary file in the same directory,
// synced, then renamed over the path.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write replaces path with data, with permissions perm. The directory must
// exist. On an error path is unchanged and no temporary file is left.
func Write(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
