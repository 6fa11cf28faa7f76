package sites_test

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/demosite"
	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/media"
	"github.com/browserop/browserop/sites"
)

// images writes n distinct PNGs to a media directory and loads them with
// alt texts alts[i].
func images(t *testing.T, alts ...string) []media.Item {
	t.Helper()
	dir := t.TempDir()
	var out []media.Item
	for i, alt := range alts {
		img := image.NewRGBA(image.Rect(0, 0, 6, 6))
		img.Set(i%6, 0, color.RGBA{R: 200, G: uint8(40 * i), A: 255})
		var b bytes.Buffer
		require.NoError(t, png.Encode(&b, img))
		name := filepath.Join("img", string(rune('a'+i))+".png")
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "img"), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o600))
		it, err := media.Load(dir, name, alt)
		require.NoError(t, err)
		out = append(out, it)
	}
	return out
}

// A post with two images: each uploaded through its file input, its alt
// text filled and read back; the result and the search read both, in
// order, with their types and alt texts, as the site stored them.
func TestMediaPostOnDemo(t *testing.T) {
	e := setup(t, demosite.Faults{})
	imgs := images(t, "A red square on white", "")
	text := "two images, one described"
	obs, err := e.perform(sites.Intent{Kind: kind.Post, Actor: "alice", Text: text, Media: imgs})
	require.NoError(t, err)
	want := []sites.MediaSeen{{Type: "png", Alt: "A red square on white", AltRead: true}, {Type: "png", Alt: "", AltRead: true}}
	require.Equal(t, want, obs.Media)
	require.Contains(t, obs.Read, "media")

	effects := demo.Effects()
	require.Len(t, effects, 1)
	require.Len(t, effects[0].Media, 2)
	for i, m := range effects[0].Media {
		require.Equal(t, imgs[i].SHA256, m.SHA256, "the site has the bytes uploaded")
		require.Equal(t, imgs[i].Alt, m.Alt)
	}

	res := e.search(sites.Query{Kind: kind.Post, Actor: "alice"})
	found := withText(res.Items, text)
	require.Len(t, found, 1)
	require.Equal(t, want, found[0].Media)
	require.True(t, found[0].OK())

	// A reply takes an image too.
	reply, err := e.perform(sites.Intent{Kind: kind.Reply, Actor: "alice", Target: obs.URL, Text: "and one more", Media: imgs[:1]})
	require.NoError(t, err)
	require.Equal(t, want[:1], reply.Media)
}

// A failed upload fails the preparation: ErrUploadFailed (a failed step),
// and nothing is published.
func TestMediaUploadFails(t *testing.T) {
	e := setup(t, demosite.Faults{UploadFail: true})
	in := sites.Intent{Kind: kind.Post, Actor: "alice", Text: "never published", Media: images(t, "alt")}
	_, err := e.perform(in)
	require.ErrorIs(t, err, sites.ErrUploadFailed)
	require.ErrorIs(t, err, sites.ErrStepFailed)
	require.Empty(t, demo.Effects())
}

// A slow upload is waited for; one slower than the adapter's timeout
// fails before the click, and nothing is published.
func TestMediaSlowUpload(t *testing.T) {
	e := setup(t, demosite.Faults{UploadDelay: 1500 * time.Millisecond})
	start := time.Now()
	obs, err := e.perform(sites.Intent{Kind: kind.Post, Actor: "alice", Text: "slowly uploaded", Media: images(t, "slow")})
	require.NoError(t, err)
	require.GreaterOrEqual(t, time.Since(start), 1500*time.Millisecond)
	require.Equal(t, []sites.MediaSeen{{Type: "png", Alt: "slow", AltRead: true}}, obs.Media)
	require.Len(t, demo.Effects(), 1)

	// The same adapter with a 1s upload timeout.
	raw, err := os.ReadFile(demoPath)
	require.NoError(t, err)
	d, err := sites.Parse("demo.yaml", bytes.Replace(raw, []byte("timeout: 30s"), []byte("timeout: 1s"), 1))
	require.NoError(t, err)
	e.site, err = d.WithOrigins(base)
	require.NoError(t, err)
	_, err = e.perform(sites.Intent{Kind: kind.Post, Actor: "alice", Text: "too slow", Media: images(t, "slow")})
	require.ErrorIs(t, err, sites.ErrUploadFailed)
	require.ErrorContains(t, err, "did not finish within 1s")
	require.Len(t, demo.Effects(), 1, "nothing more was published")
}

// The site drops the alt text, or re-encodes the image to another type:
// the post is published, and what the landed page and the search read says
// so, for verification to refuse it as a match.
func TestMediaChangedBySite(t *testing.T) {
	for _, tt := range []struct {
		name   string
		faults demosite.Faults
		want   sites.MediaSeen
	}{
		{"DropAlt", demosite.Faults{DropAlt: true}, sites.MediaSeen{Type: "png", Alt: "", AltRead: true}},
		{"Reencode", demosite.Faults{Reencode: true}, sites.MediaSeen{Type: "jpeg", Alt: "described", AltRead: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := setup(t, tt.faults)
			text := "changed by the site: " + tt.name
			obs, err := e.perform(sites.Intent{Kind: kind.Post, Actor: "alice", Text: text, Media: images(t, "described")})
			require.NoError(t, err)
			require.Equal(t, []sites.MediaSeen{tt.want}, obs.Media)
			found := withText(e.search(sites.Query{Kind: kind.Post, Actor: "alice"}).Items, text)
			require.Len(t, found, 1)
			require.Equal(t, []sites.MediaSeen{tt.want}, found[0].Media)
		})
	}
}

// More images than the site takes never reach the page.
func TestMediaOverTheLimit(t *testing.T) {
	e := setup(t, demosite.Faults{})
	_, err := e.perform(sites.Intent{Kind: kind.Post, Actor: "alice", Text: "five", Media: images(t, "1", "2", "3", "4", "5")})
	require.ErrorIs(t, err, sites.ErrStepFailed)
	require.ErrorContains(t, err, "5 media items, the site takes at most 4")
	require.Empty(t, demo.Effects())
}

// A file replaced after it was read (its SHA-256 is in the action's key)
// is not uploaded: the upload fails before anything reaches the page, and
// nothing is published. What the browser uploads is a private copy of the
// bytes checked, named after them.
func TestMediaFileChangedSinceRead(t *testing.T) {
	e := setup(t, demosite.Faults{})
	imgs := images(t, "first version")
	require.NoError(t, os.WriteFile(imgs[0].File, append([]byte("\x89PNG\r\n\x1a\n"), "other bytes"...), 0o600))
	_, err := e.perform(sites.Intent{Kind: kind.Post, Actor: "alice", Text: "never published: its image changed", Media: imgs})
	require.ErrorIs(t, err, sites.ErrUploadFailed)
	require.ErrorContains(t, err, "the file changed since it was read")
	require.Empty(t, demo.Effects())
	n, err := e.tab.Count(e.ctx, `#media-slot-1[data-state="empty"]`)
	require.NoError(t, err)
	require.Equal(t, 1, n, "nothing reached the page")
}
