package media_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/media"
)

func pngBytes(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	img.Set(1, 1, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, img))
	return b.Bytes()
}

func TestLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := pngBytes(t)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sub", "red.png"), data, 0o600))
	// The name says jpg; the bytes say png: the bytes win.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "lying.jpg"), data, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not an image"), 0o600))

	it, err := media.Load(dir, "sub/red.png", "A red dot")
	require.NoError(t, err)
	sum := sha256.Sum256(data)
	require.Equal(t, media.Item{File: filepath.Join(dir, "sub", "red.png"), SHA256: hex.EncodeToString(sum[:]), Type: media.PNG, Size: int64(len(data)), Alt: "A red dot"}, it)

	it, err = media.Load(dir, "lying.jpg", "")
	require.NoError(t, err)
	require.Equal(t, media.PNG, it.Type)

	_, err = media.Load(dir, "notes.txt", "")
	require.ErrorContains(t, err, `media "notes.txt": not an image`)
	_, err = media.Load(dir, "gone.png", "")
	require.ErrorIs(t, err, os.ErrNotExist)
	require.ErrorContains(t, err, `media "gone.png"`)
	require.NotContains(t, err.Error(), dir, "the error names the file as written")
	_, err = media.Load(dir, "sub", "")
	require.ErrorContains(t, err, "not a regular file")
	_, err = media.Load(dir, "sub/red.png", "line\nbreak")
	require.ErrorContains(t, err, "control character")
	_, err = media.Load(dir, "sub/red.png", strings.Repeat("a", media.MaxAltRunes+1))
	require.ErrorContains(t, err, "longer than")
	_, err = media.Load(dir, "sub/red.png", "\xff")
	require.ErrorContains(t, err, "UTF-8")
}

// Nothing outside the media directory is read: not by an absolute name,
// not by "..", not through a link.
func TestLoadRefusesOutside(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dir := filepath.Join(root, "media")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	secret := filepath.Join(root, "secret.png")
	require.NoError(t, os.WriteFile(secret, pngBytes(t), 0o600))
	require.NoError(t, os.Symlink(secret, filepath.Join(dir, "link.png")))
	require.NoError(t, os.Symlink(root, filepath.Join(dir, "up")))
	for _, name := range []string{secret, "../secret.png", "sub/../../secret.png", "link.png", "up/secret.png", "/etc/passwd", ""} {
		_, err := media.Load(dir, name, "")
		require.Error(t, err, name)
		if name != "" {
			require.True(t, errors.Is(err, media.ErrOutside), "%s: %v", name, err)
			// Where a link leads is never printed: it could name what
			// the person should not be shown (/proc/PID/environ).
			require.NotContains(t, strings.ReplaceAll(err.Error(), name, "NAME"), root, name)
		}
	}
	// A link that stays inside is followed.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "in.png"), pngBytes(t), 0o600))
	require.NoError(t, os.Symlink(filepath.Join(dir, "in.png"), filepath.Join(dir, "alias.png")))
	_, err := media.Load(dir, "alias.png", "")
	require.NoError(t, err)
}

func TestSniffAndTypeOf(t *testing.T) {
	t.Parallel()
	require.Equal(t, media.PNG, media.Sniff(pngBytes(t)))
	require.Equal(t, media.JPEG, media.Sniff([]byte{0xFF, 0xD8, 0xFF, 0xE0, 0, 0}))
	require.Equal(t, media.GIF, media.Sniff([]byte("GIF89a....")))
	require.Equal(t, media.WebP, media.Sniff([]byte("RIFF\x00\x00\x00\x00WEBPVP8 ")))
	require.Equal(t, "", media.Sniff([]byte("RIFF\x00\x00\x00\x00WAVE")))
	require.Equal(t, "", media.Sniff(nil))
	for v, want := range map[string]string{
		"png": media.PNG, "JPEG": media.JPEG, "jpg": media.JPEG, "image/webp": media.WebP, "image/gif; x=1": media.GIF,
		"https://site.test/wp-content/uploads/2026/12/red-300x300.png?ver=2": media.PNG,
		"/media/7.JPG": media.JPEG, "/media/7.jpeg#x": media.JPEG, "/media/7": "", "image/svg+xml": "", "": "",
	} {
		require.Equal(t, want, media.TypeOf(v), v)
	}
}

// Bytes reads the file again and refuses other bytes than those loaded.
func TestBytes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := pngBytes(t)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.png"), data, 0o600))
	it, err := media.Load(dir, "a.png", "")
	require.NoError(t, err)
	got, err := it.Bytes()
	require.NoError(t, err)
	require.Equal(t, data, got)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.png"), append(data, 0), 0o600))
	_, err = it.Bytes()
	require.ErrorIs(t, err, media.ErrChanged)
	require.NoError(t, os.Remove(filepath.Join(dir, "a.png")))
	_, err = it.Bytes()
	require.ErrorIs(t, err, os.ErrNotExist)
}
