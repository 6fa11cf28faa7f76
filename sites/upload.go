package sites

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/browserop/browserop/internal/atomicfile"
	"github.com/browserop/browserop/internal/privatedir"
	"github.com/browserop/browserop/media"
)

// The browser is given a private copy of each file to upload, never the
// file in the media directory: a file replaced (or a link swapped in)
// after the calendar or the intent was read must not be uploaded under a
// key that records other bytes. The copy holds the bytes read right
// before the upload, checked against the SHA-256 the key records, and is
// named after them: uploadName.

// uploadRetention is how long a private copy is kept for a later attempt.
const uploadRetention = 24 * time.Hour

// uploadDir is the private directory of the copies, in the shared
// temporary folder: it must be this user's alone (privatedir.Check), since
// another user could have made it first to read the copies or make every
// upload fail.
func uploadDir() (string, error) {
	dir := filepath.Join(os.TempDir(), "browserop-uploads-"+strconv.Itoa(os.Getuid()))
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", err
	}
	if err := privatedir.Check(dir); err != nil {
		return "", fmt.Errorf("upload copies: %w", err)
	}
	return dir, nil
}

// uploadName is the name a file is uploaded under, without its
// extension: the letters, digits, '-' and '_' of its own name (any other
// run of characters one '-'), '-', and the first 12 hex digits of its
// SHA-256: "my photo.png" becomes "my-photo-1a2b3c4d5e6f". Sites keep such
// a name as it is, and no other file's upload carries it.
func uploadName(it media.Item) string {
	base := filepath.Base(it.File)
	base = strings.TrimSuffix(base, filepath.Ext(base))
	var b strings.Builder
	dash := false
	for _, r := range base {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	name := strings.Trim(b.String(), "-")
	if len(name) > 60 {
		name = strings.TrimRight(name[:60], "-")
	}
	if name == "" {
		name = "image"
	}
	return name + "-" + it.SHA256[:min(12, len(it.SHA256))]
}

var uploadExt = map[string]string{media.PNG: ".png", media.JPEG: ".jpg", media.GIF: ".gif", media.WebP: ".webp"}

// uploadCopy reads it.File now, checks its bytes against it.SHA256 and
// returns the path of a private copy of them named uploadName. A file
// that changed since it was read is ErrUploadFailed: nothing is uploaded.
func uploadCopy(it media.Item, what string) (string, error) {
	data, err := it.Bytes()
	if errors.Is(err, media.ErrChanged) {
		return "", fmt.Errorf("%w: %s: the file changed since it was read: its bytes are not those its idempotency key records", ErrUploadFailed, what)
	}
	if err != nil {
		return "", fmt.Errorf("%w: %s: %v", ErrUploadFailed, what, err)
	}
	dir, err := uploadDir()
	if err != nil {
		return "", fmt.Errorf("%w: %s: a private copy to upload: %v", ErrUploadFailed, what, err)
	}
	pruneUploads(dir)
	p := filepath.Join(dir, uploadName(it)+uploadExt[it.Type])
	if err := atomicfile.Write(p, data, 0o400); err != nil {
		return "", fmt.Errorf("%w: %s: a private copy to upload: %v", ErrUploadFailed, what, err)
	}
	return p, nil
}

// pruneUploads removes the copies older than uploadRetention, best effort.
func pruneUploads(dir string) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, de := range des {
		if fi, err := de.Info(); err == nil && fi.Mode().IsRegular() && time.Since(fi.ModTime()) > uploadRetention {
			os.Remove(filepath.Join(dir, de.Name()))
		}
	}
}
