// Package media reads the files an action attaches (images, each with its
// alternative text) and names them as the ledger, the adapters and
// verification do: by the SHA-256 of the bytes, the type the bytes are (never
// the file name's), and the alt text.
package media

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/browserop/browserop/internal/pubtext"
	"github.com/browserop/browserop/internal/regularfile"
)

// The types an image may be, as sites declare them and as the canonical
// payload records them.
const (
	PNG  = "png"
	JPEG = "jpeg"
	GIF  = "gif"
	WebP = "webp"
)

// Types lists every type browserop recognises, in a fixed order.
var Types = []string{PNG, JPEG, GIF, WebP}

// Known reports whether t is one of Types.
func Known(t string) bool { return slices.Contains(Types, t) }

// MaxAltRunes bounds an alt text; sites may have lower limits.
const MaxAltRunes = 1500

// MaxBytes bounds any media file browserop reads, whatever a site allows.
const MaxBytes = 64 << 20

// Item is one media file an action attaches: where it is, what its bytes
// are, and its alternative text.
type Item struct {
	// File is the absolute path of the file read. It is not part of the
	// idempotency key: the bytes are (SHA256).
	File string
	// SHA256 is the lowercase hex SHA-256 of the file's bytes.
	SHA256 string
	// Type is the image type the bytes are (Types).
	Type string
	// Size is the file's size in bytes.
	Size int64
	// Alt is the alternative text, "" for none.
	Alt string
}

// ErrChanged is returned (wrapped) by Item.Bytes for a file whose bytes
// are no longer those the item was read with.
var ErrChanged = errors.New("the file changed since it was read")

// Bytes reads the item's file again and returns its bytes, checked
// against SHA256: an error wrapping ErrChanged when they differ (the file
// was replaced since Load), or the error that kept it from being read.
func (it Item) Bytes() ([]byte, error) {
	f, _, err := regularfile.Open(it.File)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", it.File, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxBytes+1))
	if err != nil {
		return nil, err
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != it.SHA256 {
		return nil, fmt.Errorf("%s: %w", it.File, ErrChanged)
	}
	return data, nil
}

// Sniff returns the image type of data from its leading bytes, or "" when
// it is not one of Types.
func Sniff(data []byte) string {
	switch {
	case len(data) >= 8 && string(data[:8]) == "\x89PNG\r\n\x1a\n":
		return PNG
	case len(data) >= 3 && data[0] == 0xFF && data[1] == 0xD8 && data[2] == 0xFF:
		return JPEG
	case len(data) >= 6 && (string(data[:6]) == "GIF87a" || string(data[:6]) == "GIF89a"):
		return GIF
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		return WebP
	}
	return ""
}

// ErrOutside is returned (wrapped) for a file outside the media directory.
var ErrOutside = errors.New("outside the media directory")

// Load reads the file named by name, a path relative to dir (the media
// directory), and returns it as an Item with alt. It refuses a name that
// is absolute or leads outside dir (also through a symbolic link), a
// missing or unreadable file, a file over MaxBytes, bytes that are not one
// of Types, and an alt text that is not valid UTF-8, holds a control
// character or is over MaxAltRunes. Its errors name the file as written.
func Load(dir, name, alt string) (Item, error) {
	if err := CheckAlt(alt); err != nil {
		return Item{}, fmt.Errorf("media %q: alt %w", name, err)
	}
	p, err := Resolve(dir, name)
	if err != nil {
		return Item{}, err
	}
	// Opened without blocking: a FIFO put in the folder is refused at
	// once, never waited on.
	f, st, err := regularfile.Open(p)
	if err != nil {
		return Item{}, fmt.Errorf("media %q: %w", name, unwrapPath(err))
	}
	defer f.Close()
	if st.Size() > MaxBytes {
		return Item{}, fmt.Errorf("media %q: %d bytes is over the limit of %d", name, st.Size(), MaxBytes)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxBytes+1))
	if err != nil {
		return Item{}, fmt.Errorf("media %q: %w", name, unwrapPath(err))
	}
	t := Sniff(data)
	if t == "" {
		return Item{}, fmt.Errorf("media %q: not an image of a known type (%s)", name, strings.Join(Types, ", "))
	}
	sum := sha256.Sum256(data)
	return Item{File: p, SHA256: hex.EncodeToString(sum[:]), Type: t, Size: int64(len(data)), Alt: alt}, nil
}

// Resolve returns the absolute path of name inside dir, refusing an
// absolute name, one with "..", and one whose real path (links followed)
// is not inside dir's real path.
func Resolve(dir, name string) (string, error) {
	switch {
	case name == "":
		return "", errors.New("media: file is empty")
	case filepath.IsAbs(name) || strings.HasPrefix(name, "/") || strings.HasPrefix(name, `\`):
		return "", fmt.Errorf("media %q: %w: name a file relative to it", name, ErrOutside)
	case !filepath.IsLocal(filepath.FromSlash(name)):
		return "", fmt.Errorf("media %q: %w", name, ErrOutside)
	}
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("media directory %s: %w", dir, err)
	}
	p := filepath.Join(absDir, filepath.FromSlash(name))
	realDir, err := filepath.EvalSymlinks(absDir)
	if err != nil {
		return "", fmt.Errorf("media %q: media directory %s: %w", name, dir, unwrapPath(err))
	}
	realP, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Errorf("media %q: %w", name, unwrapPath(err))
	}
	rel, err := filepath.Rel(realDir, realP)
	if err != nil || !filepath.IsLocal(rel) {
		// Where the link leads is not said: a hostile link could make an
		// error print what it names (another process's environment).
		return "", fmt.Errorf("media %q: %w (a link in its path leads out of the folder)", name, ErrOutside)
	}
	return p, nil
}

// CheckAlt returns why alt cannot be an alt text, or nil.
func CheckAlt(alt string) error {
	switch {
	case !utf8.ValidString(alt):
		return errors.New("is not valid UTF-8")
	case utf8.RuneCountInString(alt) > MaxAltRunes:
		return fmt.Errorf("is longer than %d characters", MaxAltRunes)
	}
	return pubtext.Check(alt, false)
}

// unwrapPath drops the *PathError around an error: messages name the file
// as the entry wrote it, not the resolved path.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// TypeOfURL returns the image type a URL's file extension names ("png" for
// ".../a.png?ver=2"), or "" when it names none of Types.
func TypeOfURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	switch strings.ToLower(path.Ext(u.Path)) {
	case ".png":
		return PNG
	case ".jpg", ".jpeg", ".jpe":
		return JPEG
	case ".gif":
		return GIF
	case ".webp":
		return WebP
	}
	return ""
}

// TypeOfMIME returns the type a MIME type names ("image/png"), or "".
func TypeOfMIME(mt string) string {
	mt = strings.ToLower(strings.TrimSpace(strings.SplitN(mt, ";", 2)[0]))
	switch mt {
	case "image/png":
		return PNG
	case "image/jpeg", "image/jpg", "image/pjpeg":
		return JPEG
	case "image/gif":
		return GIF
	case "image/webp":
		return WebP
	}
	return ""
}

// TypeOf reads a type from a value a page shows: a type name ("png"), a
// MIME type ("image/png") or a URL whose extension names it.
func TypeOf(v string) string {
	v = strings.TrimSpace(v)
	switch l := strings.ToLower(v); {
	case Known(l):
		return l
	case l == "jpg":
		return JPEG
	case strings.HasPrefix(l, "image/"):
		return TypeOfMIME(l)
	}
	return TypeOfURL(v)
}
