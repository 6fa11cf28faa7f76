package demosite_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/demosite"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
	"github.com/stretchr/testify/require"
)

// The image slots driven in real headless Chromium: a file is set on the
// slot's input with CDP DOM.setFileInputFiles (browser.Tab.SetFiles, as
// browserop does), and the page uploads it.

// devtools opens a second DevTools session on tab, in the shared browser,
// for what the browser package has no primitive for (reading a property).
// The session detaches when the test ends and leaves the tab open.
func devtools(t *testing.T, ctx context.Context, tab *browser.Tab) context.Context {
	t.Helper()
	ws, err := browser.ReadActivePort(filepath.Join(chrome.Browser(t).ProfileDir(), browser.ActivePortFileName))
	require.NoError(t, err)
	actx, acancel := remote.NewAllocator(ctx, ws)
	cctx, ccancel := chromedp.NewContext(actx, chromedp.WithTargetID(target.ID(tab.ID().Raw())), chromedp.WithDetachOnCancel())
	t.Cleanup(func() {
		require.NoError(t, chromedp.Cancel(cctx))
		ccancel()
		acancel()
	})
	return cctx
}

// setFiles sets files on the file input sel with DOM.setFileInputFiles,
// which fires input and change, as browserop does.
func setFiles(t *testing.T, ctx context.Context, tab *browser.Tab, sel string, files ...string) {
	t.Helper()
	require.NoError(t, tab.SetFiles(ctx, sel, files))
}

// writeFile writes data to a file called name in a temporary directory and
// returns its path.
func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, data, 0o600))
	return p
}

func count(t *testing.T, ctx context.Context, tab *browser.Tab, sel string) int {
	t.Helper()
	n, err := tab.Count(ctx, sel)
	require.NoError(t, err)
	return n
}

// TestComposeImage: a PNG set on slot 1 uploads (done, a thumb, the hidden
// id), its alt text is filled as a text input, and the post carries it: the
// permalink shows img.post-media with the alt and type, and the effect has
// the sha256 of the file.
func TestComposeImage(t *testing.T) {
	st := newSite(t, demosite.Faults{})
	ctx, tab := signedInTab(t, st, "alice", "/compose")
	cdp := devtools(t, ctx, tab)
	_, err := tab.Fill(ctx, "#media-alt-1", "too early")
	require.ErrorIs(t, err, browser.ErrNotClickable, "no alt text before the image is uploaded")

	data := pngImage(t, red)
	setFiles(t, ctx, tab, "#media-file-1", writeFile(t, "red.png", data))
	require.NoError(t, tab.WaitVisible(ctx, `#media-slot-1[data-state="done"]`, 0))
	require.Equal(t, 1, count(t, ctx, tab, `#compose-media .media-slot[data-state="done"]`))
	require.Equal(t, 1, count(t, ctx, tab, `#media-slot-1 img.media-thumb`))
	require.Zero(t, count(t, ctx, tab, `#media-slot-1 .media-progress`))
	id, err := tab.Attr(ctx, `#media-slot-1 input[type="hidden"][name="media-1"]`, "value")
	require.NoError(t, err)
	require.NotEmpty(t, id)
	require.Equal(t, 3, count(t, ctx, tab, `#compose-media .media-slot[data-state="empty"]`))
	require.Equal(t, 1, demosite.UploadCount(st.Server), "one file, one upload (input and change both fire)")

	alt := "A red square, slightly transparent at the left"
	got, err := tab.Fill(ctx, "#media-alt-1", alt)
	require.NoError(t, err)
	require.Equal(t, alt, got)
	got, err = tab.Fill(ctx, "#compose-text", "a post with an image")
	require.NoError(t, err)
	require.Equal(t, "a post with an image", got)

	landed, err := tab.ClickOnceAndLand(ctx, "#compose-submit", browser.LandingSigns{Navigation: true})
	require.NoError(t, err)
	require.Equal(t, 200, landed.Status)
	effects := st.Effects()
	require.Len(t, effects, 1)
	require.Equal(t, "a post with an image", effects[0].Text)
	require.Equal(t, []demosite.EffectMedia{{SHA256: sha(data), Type: "png", Alt: alt}}, effects[0].Media)
	require.Equal(t, st.URL+"/p/"+strconv.FormatInt(effects[0].PostID, 10), landed.URL)

	require.Equal(t, 1, count(t, ctx, tab, "#post img.post-media"))
	for name, want := range map[string]string{"alt": alt, "data-type": "png", "src": "/media/" + id + ".png"} {
		v, err := tab.Attr(ctx, "#post img.post-media", name)
		require.NoError(t, err)
		require.Equal(t, want, v, name)
	}
	width, err := chromedp.Run(cdp, chromedp.Evaluate[int](`document.querySelector("#post img.post-media").naturalWidth`))
	require.NoError(t, err)
	require.Equal(t, 8, width, "the image loaded")
}

// TestComposeImageFaults: upload_fail leaves the slot failed, with the
// site's message and nothing to attach; upload_delay shows the slot
// uploading (the Post button disabled) before it is done.
func TestComposeImageFaults(t *testing.T) {
	t.Run("UploadFail", func(t *testing.T) {
		st := newSite(t, demosite.Faults{UploadFail: true})
		ctx, tab := signedInTab(t, st, "alice", "/compose")
		setFiles(t, ctx, tab, "#media-file-1", writeFile(t, "red.png", pngImage(t, red)))
		require.NoError(t, tab.WaitVisible(ctx, `#media-slot-1[data-state="failed"] span.media-error`, 0))
		msg, err := tab.Text(ctx, "#media-slot-1 .media-error")
		require.NoError(t, err)
		require.Contains(t, msg, "upload failed")
		require.Zero(t, count(t, ctx, tab, "#media-slot-1 .media-thumb, #media-slot-1 .media-progress"))
		require.Zero(t, count(t, ctx, tab, `input[name="media-1"]`))
		require.Zero(t, count(t, ctx, tab, `#compose-media .media-slot[data-state="done"]`))
		require.Zero(t, demosite.UploadCount(st.Server))
	})

	t.Run("UploadDelay", func(t *testing.T) {
		st := newSite(t, demosite.Faults{UploadDelay: 2 * time.Second})
		ctx, tab := signedInTab(t, st, "alice", "/compose")
		setFiles(t, ctx, tab, "#media-file-1", writeFile(t, "red.png", pngImage(t, red)))
		require.Equal(t, 1, count(t, ctx, tab, `#media-slot-1[data-state="uploading"] span.media-progress`))
		require.Equal(t, 1, count(t, ctx, tab, "#compose-submit:disabled"), "no post while an upload runs")
		require.NoError(t, tab.WaitVisible(ctx, `#media-slot-1[data-state="done"] img.media-thumb`, 0))
		require.Zero(t, count(t, ctx, tab, "#media-slot-1 .media-progress"))
		require.Zero(t, count(t, ctx, tab, "#compose-submit:disabled"))
		require.Equal(t, 1, count(t, ctx, tab, `input[name="media-1"]`))
	})
}
