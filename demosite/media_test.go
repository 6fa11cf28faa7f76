package demosite_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"html"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/browserop/browserop/demosite"
	"github.com/stretchr/testify/require"
)

// pngImage returns a small PNG of one colour, half transparent at the left
// so that re-encoding has an alpha channel to deal with.
func pngImage(tb testing.TB, c color.NRGBA) []byte {
	tb.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, 8, 6))
	for y := range 6 {
		for x := range 8 {
			px := c
			if x == 0 {
				px.A = 0x80
			}
			img.SetNRGBA(x, y, px)
		}
	}
	var buf bytes.Buffer
	require.NoError(tb, png.Encode(&buf, img))
	return buf.Bytes()
}

func gifImage(tb testing.TB) []byte {
	tb.Helper()
	img := image.NewPaletted(image.Rect(0, 0, 4, 4), color.Palette{color.Black, color.RGBA{0, 0, 0xff, 0xff}})
	for i := range img.Pix {
		img.Pix[i] = 1
	}
	var buf bytes.Buffer
	require.NoError(tb, gif.Encode(&buf, img, nil))
	return buf.Bytes()
}

func jpegImage(tb testing.TB) []byte {
	tb.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	var buf bytes.Buffer
	require.NoError(tb, jpeg.Encode(&buf, img, nil))
	return buf.Bytes()
}

// webpImage is a WebP header and nothing of worth: the site only sniffs
// the leading bytes of a WebP and never decodes one.
var webpImage = []byte("RIFF\x24\x00\x00\x00WEBPVP8 \x18\x00\x00\x00not really an image")

var red = color.NRGBA{R: 0xff, A: 0xff}

func sha(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// uploaded is the answer to a successful POST /media.
type uploaded struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	URL  string `json:"url"`
}

// upload sends body to POST /media as the composer's fetch does.
func (c *client) upload(body []byte) response {
	c.tb.Helper()
	res, err := c.uploadCtx(context.Background(), body)
	require.NoError(c.tb, err)
	return res
}

func (c *client) uploadCtx(ctx context.Context, body []byte) (response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/media", bytes.NewReader(body))
	require.NoError(c.tb, err)
	req.Header.Set("Content-Type", "application/octet-stream")
	return c.do(req)
}

// mustUpload uploads body and returns the site's answer, which must be 201.
func (c *client) mustUpload(body []byte) uploaded {
	c.tb.Helper()
	res := c.upload(body)
	require.Equal(c.tb, http.StatusCreated, res.Status, res.Body)
	require.Equal(c.tb, "application/json", res.Header.Get("Content-Type"))
	var u uploaded
	require.NoError(c.tb, json.Unmarshal([]byte(res.Body), &u))
	require.NotEmpty(c.tb, u.ID)
	return u
}

// jsonError returns the "error" of a JSON error answer, checking its shape.
func jsonError(tb testing.TB, res response) string {
	tb.Helper()
	require.Equal(tb, "application/json", res.Header.Get("Content-Type"))
	require.Empty(tb, res.Location(), "a fetch is never redirected")
	var e struct {
		Error string `json:"error"`
	}
	require.NoError(tb, json.Unmarshal([]byte(res.Body), &e))
	require.NotEmpty(tb, e.Error)
	return e.Error
}

// postMedia is one img.post-media as rendered.
type postMedia struct{ Src, Alt, Type string }

var postMediaRE = regexp.MustCompile(`<img class="post-media" src="([^"]*)" alt="([^"]*)" data-type="([^"]*)">`)

func mediaOf(a article) []postMedia {
	var out []postMedia
	for _, m := range postMediaRE.FindAllStringSubmatch(a.Raw, -1) {
		out = append(out, postMedia{html.UnescapeString(m[1]), html.UnescapeString(m[2]), m[3]})
	}
	return out
}

func TestUpload(t *testing.T) {
	t.Parallel()
	st := newSite(t, demosite.Faults{})
	alice := st.as(t, "alice")

	t.Run("OK", func(t *testing.T) {
		for _, c := range []struct {
			typ, ext, contentType string
			data                  []byte
		}{
			{"png", "png", "image/png", pngImage(t, red)},
			{"jpeg", "jpg", "image/jpeg", jpegImage(t)},
			{"gif", "gif", "image/gif", gifImage(t)},
			{"webp", "webp", "image/webp", webpImage},
		} {
			u := alice.mustUpload(c.data)
			require.Equal(t, c.typ, u.Type)
			require.Equal(t, "/media/"+u.ID+"."+c.ext, u.URL)
			// Images are public, like the posts that show them.
			res := st.client(t).get(u.URL)
			require.Equal(t, http.StatusOK, res.Status, c.typ)
			require.Equal(t, c.contentType, res.Header.Get("Content-Type"))
			require.Equal(t, "nosniff", res.Header.Get("X-Content-Type-Options"))
			require.Equal(t, string(c.data), res.Body, "stored as uploaded")
			for _, other := range []string{"/media/" + u.ID + ".bmp", "/media/" + u.ID, "/media/" + u.ID + "." + c.ext + ".png"} {
				require.Equal(t, http.StatusNotFound, alice.get(other).Status, other)
			}
		}
		require.Equal(t, http.StatusNotFound, alice.get("/media/0123456789abcdef.png").Status)
		require.Empty(t, st.Effects(), "an upload is no effect")
	})

	t.Run("ErrUnsupportedType", func(t *testing.T) {
		before := demosite.UploadCount(st.Server)
		for _, body := range [][]byte{[]byte("just text"), nil, []byte("<svg xmlns='http://www.w3.org/2000/svg'/>"), []byte("\x89PN")} {
			res := alice.upload(body)
			require.Equal(t, http.StatusUnsupportedMediaType, res.Status, "%q", body)
			require.Contains(t, jsonError(t, res), "PNG, JPEG, GIF or WebP")
		}
		require.Equal(t, before, demosite.UploadCount(st.Server), "nothing stored")
	})

	t.Run("ErrTooLarge", func(t *testing.T) {
		atLimit := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, demosite.MaxMediaBytes-8)...)
		require.Equal(t, "png", alice.mustUpload(atLimit).Type, "exactly the limit is fine")
		res := alice.upload(append(atLimit, 0))
		require.Equal(t, http.StatusRequestEntityTooLarge, res.Status)
		require.Contains(t, jsonError(t, res), "5 MiB")
	})

	t.Run("ErrSignedOut", func(t *testing.T) {
		before := demosite.UploadCount(st.Server)
		res := st.client(t).upload(pngImage(t, red))
		require.Equal(t, http.StatusUnauthorized, res.Status)
		require.Contains(t, jsonError(t, res), "signed out")
		require.Equal(t, before, demosite.UploadCount(st.Server))
	})
}

// TestUploadBlocked: the blockers and session_expired answer an upload in
// JSON, as they answer the JSON API.
func TestUploadBlocked(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		faults demosite.Faults
		status int
	}{
		{"SessionExpired", demosite.Faults{SessionExpired: true}, http.StatusUnauthorized},
		{"Captcha", demosite.Faults{Captcha: true}, http.StatusForbidden},
		{"RateLimit", demosite.Faults{RateLimit: true}, http.StatusTooManyRequests},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			st := newSite(t, c.faults)
			res := st.as(t, "alice").upload(pngImage(t, red))
			require.Equal(t, c.status, res.Status)
			jsonError(t, res)
			require.Zero(t, demosite.UploadCount(st.Server))
		})
	}
}

func TestAttach(t *testing.T) {
	t.Parallel()

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		st := newSite(t, demosite.Faults{})
		alice := st.as(t, "alice")
		pngData, gifData := pngImage(t, red), gifImage(t)
		a, b := alice.mustUpload(pngData), alice.mustUpload(gifData)
		alt := `A "red" <square> & more`
		res := alice.post("/posts", url.Values{
			"text":    {"two images"},
			"media-1": {a.ID}, "alt-1": {alt},
			"alt-2":   {"a slot without an image: ignored"},
			"media-3": {b.ID}, "alt-3": {""},
		})
		require.Equal(t, http.StatusSeeOther, res.Status, res.Body)
		require.Equal(t, "/p/1", res.Location())

		require.Equal(t, []demosite.Effect{{
			Seq: 1, Kind: demosite.EffectPost, Author: "alice", PostID: 1, Text: "two images", At: t0.Truncate(time.Millisecond),
			Media: []demosite.EffectMedia{{SHA256: sha(pngData), Type: "png", Alt: alt}, {SHA256: sha(gifData), Type: "gif", Alt: ""}},
		}}, st.Effects())
		oracle := st.client(t).get("/_oracle/effects").Body
		require.Contains(t, oracle, `"sha256": "`+sha(pngData)+`"`)

		want := []postMedia{{a.URL, alt, "png"}, {b.URL, "", "gif"}}
		page := alice.get("/p/1").Body
		as := articles(page)
		require.Len(t, as, 1)
		require.True(t, as[0].IsMain)
		require.Equal(t, want, mediaOf(as[0]))
		require.Equal(t, "two images", as[0].Text)
		require.Contains(t, as[0].Raw, `alt="A &#34;red&#34; &lt;square&gt; &amp; more"`, "alt is escaped")
		require.Less(t, strings.Index(as[0].Raw, `class="post-text"`), strings.Index(as[0].Raw, `class="post-media"`), "images follow the text")
		for _, path := range []string{"/u/alice", "/home"} {
			as := articles(alice.get(path).Body)
			require.Len(t, as, 1, path)
			require.Equal(t, want, mediaOf(as[0]), path)
		}
	})

	t.Run("Reply", func(t *testing.T) {
		t.Parallel()
		st := newSite(t, demosite.Faults{})
		parent := st.SeedPost("bob", "show me", time.Time{})
		alice := st.as(t, "alice")
		data := pngImage(t, red)
		u := alice.mustUpload(data)
		res := alice.post("/p/1/reply", url.Values{"text": {"here"}, "media-2": {u.ID}, "alt-2": {"red"}})
		require.Equal(t, http.StatusSeeOther, res.Status, res.Body)
		effects := st.Effects()
		require.Len(t, effects, 1)
		require.Equal(t, demosite.EffectReply, effects[0].Kind)
		require.Equal(t, parent, effects[0].ParentID)
		require.Equal(t, []demosite.EffectMedia{{SHA256: sha(data), Type: "png", Alt: "red"}}, effects[0].Media)

		as := articles(section(t, alice.get("/p/1").Body, `<section id="replies">`, `</section>`))
		require.Len(t, as, 1)
		require.Equal(t, []postMedia{{u.URL, "red", "png"}}, mediaOf(as[0]))
		require.Equal(t, []postMedia{{u.URL, "red", "png"}}, mediaOf(articles(alice.get(res.Location()).Body)[0]))
	})

	t.Run("NoMedia", func(t *testing.T) {
		t.Parallel()
		st := newSite(t, demosite.Faults{})
		alice := st.as(t, "alice")
		alice.mustUpload(pngImage(t, red)) // uploaded but never attached
		require.Equal(t, http.StatusSeeOther, alice.post("/posts", url.Values{"text": {"plain"}, "alt-1": {"no image"}}).Status)
		require.Nil(t, st.Effects()[0].Media)
		require.NotContains(t, st.client(t).get("/_oracle/effects").Body, `"media"`, "an effect without media serialises as before")
		as := articles(alice.get("/p/1").Body)
		require.Len(t, as, 1)
		require.NotContains(t, as[0].Raw, "<img", "no media, no img")
	})

	t.Run("SameUploadTwice", func(t *testing.T) {
		t.Parallel()
		st := newSite(t, demosite.Faults{})
		alice := st.as(t, "alice")
		u := alice.mustUpload(pngImage(t, red))
		for range 2 {
			require.Equal(t, http.StatusSeeOther, alice.post("/posts", url.Values{"text": {"again"}, "media-1": {u.ID}}).Status)
		}
		effects := st.Effects()
		require.Len(t, effects, 2)
		require.Equal(t, effects[0].Media, effects[1].Media)
	})

	t.Run("Refused", func(t *testing.T) {
		t.Parallel()
		st := newSite(t, demosite.Faults{})
		st.SeedPost("carol", "reply to me", time.Time{})
		alice, bob := st.as(t, "alice"), st.as(t, "bob")
		mine, theirs := alice.mustUpload(pngImage(t, red)), bob.mustUpload(pngImage(t, red))
		for name, c := range map[string]struct {
			form url.Values
			says string
		}{
			"ErrNotYours":   {url.Values{"media-1": {mine.ID}, "media-2": {theirs.ID}}, "Image 2 is not one of your uploads"},
			"ErrUnknown":    {url.Values{"media-4": {"0123456789abcdef"}}, "Image 4 is not one of your uploads"},
			"ErrAltTooLong": {url.Values{"media-1": {mine.ID}, "alt-1": {strings.Repeat("é", demosite.MaxAltRunes+1)}}, "the limit is 1500"},
			"ErrAltUTF8":    {url.Values{"media-1": {mine.ID}, "alt-1": {"\xff"}}, "not valid UTF-8"},
		} {
			for _, path := range []string{"/posts", "/p/1/reply"} {
				form := url.Values{"text": {"kept text"}}
				for k, v := range c.form {
					form[k] = v
				}
				res := alice.post(path, form)
				require.Equal(t, http.StatusBadRequest, res.Status, name+" "+path)
				require.Contains(t, res.Body, `id="form-error"`, name)
				require.Contains(t, html.UnescapeString(res.Body), c.says, name)
				require.Contains(t, res.Body, "kept text", "the form keeps the text")
				require.Contains(t, res.Body, `id="compose-media"`, "the slots come back, empty")
			}
		}
		require.Empty(t, st.Effects(), "nothing committed")
	})
}

func TestFaultReencode(t *testing.T) {
	t.Parallel()
	st := newSite(t, demosite.Faults{Reencode: true})
	alice := st.as(t, "alice")

	t.Run("PNG", func(t *testing.T) {
		original := pngImage(t, red)
		u := alice.mustUpload(original)
		require.Equal(t, "jpeg", u.Type)
		require.Equal(t, "/media/"+u.ID+".jpg", u.URL)
		require.Equal(t, http.StatusNotFound, alice.get("/media/"+u.ID+".png").Status, "served under the stored type only")

		res := alice.get(u.URL)
		require.Equal(t, http.StatusOK, res.Status)
		require.Equal(t, "image/jpeg", res.Header.Get("Content-Type"))
		img, err := jpeg.Decode(strings.NewReader(res.Body))
		require.NoError(t, err, "really a JPEG")
		require.Equal(t, image.Rect(0, 0, 8, 6), img.Bounds())
		r, g, b, _ := img.At(4, 3).RGBA()
		require.Greater(t, r>>8, uint32(0xe0), "still red")
		require.Less(t, g>>8, uint32(0x30))
		require.Less(t, b>>8, uint32(0x30))

		res = alice.post("/posts", url.Values{"text": {"recompressed"}, "media-1": {u.ID}, "alt-1": {"red"}})
		require.Equal(t, http.StatusSeeOther, res.Status)
		e := st.Effects()[len(st.Effects())-1]
		require.Equal(t, []demosite.EffectMedia{{SHA256: sha(original), Type: "jpeg", Alt: "red"}}, e.Media, "the sha256 is of the bytes uploaded")
		as := articles(alice.get(res.Location()).Body)
		require.Equal(t, []postMedia{{u.URL, "red", "jpeg"}}, mediaOf(as[0]))
	})

	t.Run("GIF", func(t *testing.T) {
		u := alice.mustUpload(gifImage(t))
		require.Equal(t, "jpeg", u.Type)
		_, err := jpeg.Decode(strings.NewReader(alice.get(u.URL).Body))
		require.NoError(t, err)
	})

	t.Run("JPEGAndWebPKept", func(t *testing.T) {
		for typ, data := range map[string][]byte{"jpeg": jpegImage(t), "webp": webpImage} {
			u := alice.mustUpload(data)
			require.Equal(t, typ, u.Type)
			require.Equal(t, string(data), alice.get(u.URL).Body, "byte for byte")
		}
	})

	t.Run("ErrUndecodable", func(t *testing.T) {
		res := alice.upload([]byte("\x89PNG\r\n\x1a\nbroken"))
		require.Equal(t, http.StatusUnsupportedMediaType, res.Status)
		require.Contains(t, jsonError(t, res), "could not be read")
	})
}

func TestFaultDropAlt(t *testing.T) {
	t.Parallel()
	st := newSite(t, demosite.Faults{DropAlt: true})
	alice := st.as(t, "alice")
	u := alice.mustUpload(pngImage(t, red))
	res := alice.post("/posts", url.Values{"text": {"described"}, "media-1": {u.ID}, "alt-1": {"a red square"}})
	require.Equal(t, http.StatusSeeOther, res.Status)
	require.Equal(t, "", st.Effects()[0].Media[0].Alt)
	as := articles(alice.get(res.Location()).Body)
	require.Equal(t, []postMedia{{u.URL, "", "png"}}, mediaOf(as[0]))
	require.Contains(t, as[0].Raw, `alt=""`)
}

func TestFaultUploadFail(t *testing.T) {
	t.Parallel()
	st := newSite(t, demosite.Faults{UploadFail: true})
	alice := st.as(t, "alice")
	res := alice.upload(pngImage(t, red))
	require.Equal(t, http.StatusInternalServerError, res.Status)
	require.Contains(t, jsonError(t, res), "upload failed")
	require.NotContains(t, res.Body, `"id"`)
	require.Zero(t, demosite.UploadCount(st.Server), "nothing stored")

	require.NoError(t, st.SetFaults(demosite.Faults{}))
	alice.mustUpload(pngImage(t, red))
	require.Equal(t, 1, demosite.UploadCount(st.Server))
}

func TestFaultUploadDelay(t *testing.T) {
	t.Parallel()

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		const delay = 200 * time.Millisecond
		st := newSite(t, demosite.Faults{UploadDelay: delay})
		start := time.Now()
		st.as(t, "alice").mustUpload(pngImage(t, red))
		require.GreaterOrEqual(t, time.Since(start), delay, "the answer waited")
	})

	t.Run("ClientGone", func(t *testing.T) {
		t.Parallel()
		st := newSite(t, demosite.Faults{UploadDelay: time.Hour})
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_, err := st.as(t, "alice").uploadCtx(ctx, pngImage(t, red))
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.Zero(t, demosite.UploadCount(st.Server), "an abandoned upload stores nothing")
	})
}
