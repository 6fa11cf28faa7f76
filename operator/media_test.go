package operator_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/budgets"
	"github.com/browserop/browserop/demosite"
	"github.com/browserop/browserop/ledger"
)

// writeImage writes a PNG drawn from seed to the world's calendar
// directory (the media directory by default) and returns its SHA-256.
func (w *world) writeImage(name string, seed byte) string {
	w.t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 6, 6))
	img.Set(int(seed)%6, 3, color.RGBA{R: seed, G: 90, A: 255})
	var b bytes.Buffer
	require.NoError(w.t, png.Encode(&b, img))
	require.NoError(w.t, os.WriteFile(filepath.Join(w.calDir, name), b.Bytes(), 0o600))
	sum := sha256.Sum256(b.Bytes())
	return hex.EncodeToString(sum[:])
}

const imagePost = `entries:
  - id: pic
    site: demo
    actor: alice
    type: post
    at: "{at}"
    text: "a post with a picture"
    media:
      - {file: pic.png, alt: "A red dot on a grey square"}
`

// A calendar post with an image: uploaded, described, published once,
// verified by its text and its media, counted as post_image; the next pass
// does nothing.
func TestImagePostVerified(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	sum := w.writeImage("pic.png", 1)
	w.calendar(imagePost)
	s := w.pass()
	require.Equal(t, "ok", s.Outcome, "%+v", s)
	as := w.actions()
	require.Len(t, as, 1)
	a := as[0]
	require.Equal(t, ledger.Verified, a.Status, a.FailureReason)
	require.Equal(t, budgets.PostImage, a.Format)
	p, err := ledger.ParsePayload(a.Payload)
	require.NoError(t, err)
	require.Equal(t, []ledger.PayloadMedia{{SHA256: sum, Type: "png", Alt: "A red dot on a grey square"}}, p.Media)
	posts := w.effects(demosite.EffectPost)
	require.Len(t, posts, 1)
	require.Equal(t, []demosite.EffectMedia{{SHA256: sum, Type: "png", Alt: "A red dot on a grey square"}}, posts[0].Media)
	w.checkBooks()

	s = w.pass()
	require.Empty(t, s.Actions, "%+v", s)
	require.Len(t, w.effects(""), 1)
}

// A failed upload fails the action before the click (upload_failed), with
// nothing published; a later pass replans it and publishes it once.
func TestImageUploadFailsThenRetried(t *testing.T) {
	w := newWorld(t, demosite.Faults{UploadFail: true})
	w.writeImage("pic.png", 2)
	w.calendar(imagePost)
	s := w.pass()
	require.Equal(t, 1, s.Counts["upload_failed"], "%v", notes(s))
	a := w.actions()[0]
	require.Equal(t, ledger.Failed, a.Status)
	require.Equal(t, ledger.Definitive, a.FailureClass)
	require.True(t, a.ExecutingAt.IsZero(), "it never went executing")
	require.Contains(t, a.FailureReason, "a media upload failed")
	require.Contains(t, a.FailureReason, "nothing was submitted")
	require.Empty(t, w.effects(""))

	require.NoError(t, w.srv.SetFaults(demosite.Faults{}))
	s = w.pass()
	require.Equal(t, "ok", s.Outcome, "%+v", s)
	w.republishedOnce("a post with a picture")
}

// The site drops the alt text or re-encodes the image: the post exists, but
// not as intended. It is never verified (its landed page and its search
// show other media), never proven absent, and never published again: it
// waits for a person.
func TestImageChangedBySiteNeverVerified(t *testing.T) {
	for _, tt := range []struct {
		name   string
		faults demosite.Faults
	}{
		{"DropAlt", demosite.Faults{DropAlt: true}},
		{"Reencode", demosite.Faults{Reencode: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, tt.faults)
			w.writeImage("pic.png", 3)
			w.calendar(imagePost)
			w.pass()
			a := w.actions()[0]
			require.Equal(t, ledger.Ambiguous, a.Status, "%s: %s", a.Status, a.FailureReason)
			require.Len(t, w.effects(demosite.EffectPost), 1)

			// The site behaves again; the post it changed is still there
			// as it changed it: reconciliation finds an item with the
			// text and other media, which proves neither.
			require.NoError(t, w.srv.SetFaults(demosite.Faults{}))
			w.pass()
			a = w.actions()[0]
			require.Equal(t, ledger.Ambiguous, a.Status)
			require.Contains(t, a.FailureReason, "other media")
			require.Len(t, w.effects(demosite.EffectPost), 1, "never published again")
		})
	}
}

// An image replaced after its post was published is an edit of the entry:
// a conflict, nothing published again.
func TestImageReplacedAfterPublishedIsConflict(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	w.writeImage("pic.png", 4)
	w.calendar(imagePost)
	w.pass()
	require.Equal(t, ledger.Verified, w.actions()[0].Status)

	w.writeImage("pic.png", 5) // other bytes under the same name
	s := w.pass()
	require.Equal(t, 1, s.Counts["conflicts"], "%+v", s)
	require.Len(t, w.effects(demosite.EffectPost), 1)
	require.Len(t, w.actions(), 1)
}

// A post with an image counts against post_image, not post_text: with one
// image post left in its budget, the second waits while text posts go on.
func TestImagePostBudget(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	var err error
	w.policy, err = budgets.NewPolicy(map[string]budgets.FormatLimit{
		budgets.PostText:  {Max: 100, Window: 24 * time.Hour},
		budgets.PostImage: {Max: 1, Window: 24 * time.Hour},
	}, nil)
	require.NoError(t, err)
	w.writeImage("a.png", 6)
	w.writeImage("b.png", 7)
	w.calendar(`entries:
  - {id: one, site: demo, actor: alice, type: post, at: "{at}", text: "first image post", media: [{file: a.png, alt: "first"}]}
  - {id: two, site: demo, actor: alice, type: post, at: "{at}", text: "second image post", media: [{file: b.png, alt: "second"}]}
` + post("words", "a text post"))
	s := w.pass()
	require.Equal(t, 2, s.Counts["verified"], "%v", notes(s))
	require.Equal(t, 1, s.Counts["budget_skips"], "%v", notes(s))
	require.Len(t, w.effects(demosite.EffectPost), 2)
	w.checkBooks()
}
