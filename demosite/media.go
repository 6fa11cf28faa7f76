package demosite

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Images attached to posts and replies: the composer uploads each chosen
// file with fetch to POST /media as soon as it is chosen, as X, Bluesky and
// Mastodon do, and the form then carries only the upload's id and its alt
// text.

const (
	// MediaSlots is the number of images one post or reply may carry.
	MediaSlots = 4
	// MaxMediaBytes is the largest upload POST /media takes; a larger one
	// is refused with 413.
	MaxMediaBytes = 5 << 20
	// MaxAltRunes is the longest alt text, in runes; a longer one is
	// refused with 400 and the form error.
	MaxAltRunes = 1500
	// maxReencodePixels bounds the image the reencode fault decodes, so
	// that a small file that claims a huge canvas cannot exhaust memory.
	maxReencodePixels = 40_000_000
)

// The stored types of an upload.
const (
	typePNG  = "png"
	typeJPEG = "jpeg"
	typeGIF  = "gif"
	typeWebP = "webp"
)

// sniff returns the type of data from its leading bytes, or "" when it is
// none of the types the site takes. It never trusts a file name or a
// Content-Type.
func sniff(data []byte) string {
	switch {
	case len(data) >= 8 && string(data[:8]) == "\x89PNG\r\n\x1a\n":
		return typePNG
	case len(data) >= 3 && data[0] == 0xFF && data[1] == 0xD8 && data[2] == 0xFF:
		return typeJPEG
	case len(data) >= 6 && (string(data[:6]) == "GIF87a" || string(data[:6]) == "GIF89a"):
		return typeGIF
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		return typeWebP
	}
	return ""
}

// extension is the file name extension a stored type is served under.
func extension(typ string) string {
	if typ == typeJPEG {
		return "jpg"
	}
	return typ
}

// upload is one image as POST /media stored it.
type upload struct {
	ID    string
	Owner string // the acting account of the upload
	Type  string // stored type, after the reencode fault
	Data  []byte // stored bytes, after the reencode fault
	// SHA256 is of the bytes as uploaded, before any re-encoding.
	SHA256 string
}

func (u *upload) url() string { return "/media/" + u.ID + "." + extension(u.Type) }

// attachment is one image of a post: the upload it came from and its alt
// text as stored.
type attachment struct {
	ID     string
	Type   string
	SHA256 string
	Alt    string
}

func (a attachment) url() string { return "/media/" + a.ID + "." + extension(a.Type) }

// addUpload stores data of type typ for owner; original is the SHA-256 of
// the bytes as uploaded. Upload ids are random, so one never names an upload
// from before a reset.
func (st *store) addUpload(owner, typ string, data []byte, original string) upload {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	u := &upload{ID: hex.EncodeToString(b[:]), Owner: owner, Type: typ, Data: data, SHA256: original}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.uploads[u.ID] = u
	return *u
}

// upload returns the upload with id. Its Data is never changed, so the
// caller may read it without the lock.
func (st *store) upload(id string) (upload, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	u, ok := st.uploads[id]
	if !ok {
		return upload{}, false
	}
	return *u, true
}

func (st *store) uploadCount() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.uploads)
}

// mediaError answers POST /media with a JSON error the composer shows.
func mediaError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

// handleUpload stores the request body, the raw bytes of one image, for the
// signed-in account. It answers 201 {"id", "type", "url"}, or {"error"}
// with 401 (signed out), 413 (over MaxMediaBytes), 415 (not PNG, JPEG, GIF
// or WebP by its bytes, or a PNG or GIF the reencode fault cannot decode)
// or 500 (upload_fail). upload_delay holds the answer, after the checks and
// before anything is stored; a client that goes away meanwhile gets
// nothing and nothing is stored.
func (s *Server) handleUpload(w http.ResponseWriter, r *http.Request) {
	// Read the body before answering: an early answer to a request still
	// sending its body can reach the browser as a reset connection.
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxMediaBytes))
	var tooLarge *http.MaxBytesError
	if err != nil && !errors.As(err, &tooLarge) {
		mediaError(w, http.StatusBadRequest, "Could not read the upload.")
		return
	}
	v := visitFrom(r)
	if v.me == "" {
		mediaError(w, http.StatusUnauthorized, "You are signed out. Log in again to attach images.")
		return
	}
	if tooLarge != nil {
		mediaError(w, http.StatusRequestEntityTooLarge, "The image is larger than 5 MiB.")
		return
	}
	typ := sniff(data)
	if typ == "" {
		mediaError(w, http.StatusUnsupportedMediaType, "Attach a PNG, JPEG, GIF or WebP image.")
		return
	}
	sum := sha256.Sum256(data)
	stored := data
	if v.faults.Reencode && (typ == typePNG || typ == typeGIF) {
		if stored, err = reencode(data, typ); err != nil {
			mediaError(w, http.StatusUnsupportedMediaType, "The image could not be read: "+err.Error())
			return
		}
		typ = typeJPEG
	}
	if !s.wait(r.Context(), v.faults.UploadDelay) {
		drop(w)
		return
	}
	if v.faults.UploadFail {
		mediaError(w, http.StatusInternalServerError, "The upload failed. Try again.")
		return
	}
	u := s.store.addUpload(v.me, typ, stored, hex.EncodeToString(sum[:]))
	writeJSON(w, http.StatusCreated, map[string]string{"id": u.ID, "type": u.Type, "url": u.url()})
}

// reencode decodes a PNG or GIF (its first frame) and encodes it as JPEG,
// over white where it was transparent, as sites that recompress uploads do.
func reencode(data []byte, typ string) ([]byte, error) {
	decodeConfig, decode := png.DecodeConfig, png.Decode
	if typ == typeGIF {
		decodeConfig, decode = gif.DecodeConfig, gif.Decode
	}
	cfg, err := decodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width*cfg.Height > maxReencodePixels {
		return nil, fmt.Errorf("%dx%d pixels is too large", cfg.Width, cfg.Height)
	}
	img, err := decode(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	canvas := image.NewRGBA(img.Bounds())
	draw.Draw(canvas, canvas.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	draw.Draw(canvas, canvas.Bounds(), img, img.Bounds().Min, draw.Over)
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, canvas, &jpeg.Options{Quality: 90}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// mediaTypes are the Content-Types images are served with.
var mediaTypes = map[string]string{
	typePNG:  "image/png",
	typeJPEG: "image/jpeg",
	typeGIF:  "image/gif",
	typeWebP: "image/webp",
}

// handleMedia serves GET /media/{id}.{ext}: the stored bytes, when ext is
// the stored type's extension; anything else is 404.
func (s *Server) handleMedia(w http.ResponseWriter, r *http.Request) {
	id, ext, _ := strings.Cut(r.PathValue("file"), ".")
	u, ok := s.store.upload(id)
	if !ok || ext != extension(u.Type) {
		s.handleNotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", mediaTypes[u.Type])
	w.Header().Set("Content-Length", strconv.Itoa(len(u.Data)))
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(u.Data)
	}
}

// readMedia reads the fields media-1..media-4 and alt-1..alt-4 of a parsed
// form: the uploads to attach, in slot order. A slot without a media id is
// skipped, its alt text ignored. Every id must name an upload of the acting
// account. The message is for the person who submitted the form.
func (s *Server) readMedia(r *http.Request) ([]attachment, string) {
	v := visitFrom(r)
	var out []attachment
	for n := 1; n <= MediaSlots; n++ {
		slot := strconv.Itoa(n)
		id := r.PostForm.Get("media-" + slot)
		if id == "" {
			continue
		}
		u, ok := s.store.upload(id)
		if !ok || u.Owner != v.me {
			return nil, "Image " + slot + " is not one of your uploads (it may have expired). Attach it again."
		}
		alt := r.PostForm.Get("alt-" + slot)
		switch {
		case !utf8.ValidString(alt):
			return nil, "The alt text of image " + slot + " is not valid UTF-8."
		case utf8.RuneCountInString(alt) > MaxAltRunes:
			return nil, "The alt text of image " + slot + " is " + strconv.Itoa(utf8.RuneCountInString(alt)) + " characters long; the limit is " + strconv.Itoa(MaxAltRunes) + "."
		}
		if v.faults.DropAlt {
			alt = ""
		}
		out = append(out, attachment{ID: u.ID, Type: u.Type, SHA256: u.SHA256, Alt: alt})
	}
	return out, ""
}
