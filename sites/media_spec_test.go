package sites_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/media"
	"github.com/browserop/browserop/sites"
)

// The demo adapter takes up to 4 images on posts, replies and thread
// parts, and none on likes and follows.
func TestMediaLimits(t *testing.T) {
	d, err := sites.Load(demoPath)
	require.NoError(t, err)
	for _, k := range []kind.Kind{kind.Post, kind.Reply, kind.ThreadPart} {
		l := d.MediaLimits(k)
		require.Equal(t, 4, l.Max, k)
		require.Equal(t, []string{"png", "jpeg", "gif", "webp"}, l.Types, k)
		require.Equal(t, int64(5<<20), l.MaxBytes, k)
		require.True(t, l.TakesAlt, k)
	}
	require.Zero(t, d.MediaLimits(kind.Like).Max)

	img := func(typ string, size int64) media.Item { return media.Item{Type: typ, Size: size, SHA256: "x"} }
	l := d.MediaLimits(kind.Post)
	require.NoError(t, l.Check(nil))
	require.NoError(t, l.Check([]media.Item{img("png", 10), img("webp", 5<<20)}))
	require.ErrorContains(t, l.Check([]media.Item{img("png", 1), img("png", 1), img("png", 1), img("png", 1), img("png", 1)}), "5 media items, the site takes at most 4")
	require.ErrorContains(t, l.Check([]media.Item{img("png", 1), img("gif", 5<<20+1)}), "media[1]: 5242881 bytes is over the site's limit")
	require.ErrorContains(t, d.MediaLimits(kind.Like).Check([]media.Item{img("png", 1)}), "takes no media")
	l.TakesAlt = false
	require.ErrorContains(t, l.Check([]media.Item{{Type: "png", Alt: "dropped"}}), "media[0]: the site takes no alt text")
	require.NoError(t, l.Check([]media.Item{{Type: "png"}}))
	l.TakesAlt = true
	l.AltRequired = true
	require.ErrorContains(t, l.Check([]media.Item{{Type: "png", Alt: "described"}, {Type: "png", Alt: " "}}), "media[1]: the site needs an alt text")
	l.AltRequired = false
	l.Types = []string{"jpeg"}
	require.ErrorContains(t, l.Check([]media.Item{img("png", 1)}), "media[0]: the site does not take png images (it takes jpeg)")
}

// A media block that cannot work is refused at load, naming the key.
func TestMediaSpecProblems(t *testing.T) {
	base, err := os.ReadFile(demoPath)
	require.NoError(t, err)
	for _, tt := range []struct {
		name, from, to, want string
	}{
		{"NoMax", "      max: 4\n", "", "actions.post.media.max: required"},
		{"UnknownType", "types: [png, jpeg, gif, webp]", "types: [png, svg]", `actions.post.media.types[1]: "svg" is not one of png, jpeg, gif, webp`},
		{"NoInput", `      input: "input#media-file-{n}"` + "\n", "", "actions.post.media.input: required"},
		{"NoFinishedSign", "      uploaded: '#media-slot-{n}[data-state=\"done\"]'\n", "", "actions.post.media.uploaded: required"},
		{"AttachedBySlot", `attached: '#compose-media .media-slot[data-state="done"]'`, `attached: '#media-slot-{n}'`, "actions.post.media.attached: reads every attached item: no {n} or {name}"},
		{"AltRequiredWithoutAlt", `      alt: {selector: "input#media-alt-{n}"}` + "\n", "      alt_required: true\n", "actions.post.media.alt_required: needs alt"},
		{"NoAttached", "      attached: '#compose-media .media-slot[data-state=\"done\"]'\n", "", "actions.post.media.attached: required"},
		{"AltValue", `alt: {selector: "input#media-alt-{n}"}`, `alt: {selector: "input#media-alt-{n}", value: "{text}"}`, `actions.post.media.alt.value: "{text}": an alt field takes {alt}`},
		{"ResultMediaMissing", "      media: &post-media {selector: \"img.post-media\", type: data-type}\n", "", "actions.post.result.media: required"},
		{"SearchMediaMissing", "  media: *post-media\n", "", "search.media: required"},
		{"BadTimeout", "      timeout: 30s\n", "      timeout: 0s\n", "actions.post.media.timeout: must be more than 0s"},
		{"HidesAltWithAlt", `{selector: "img.post-media", type: data-type}`, `{selector: "img.post-media", type: data-type, alt: alt, hides_alt: true}`, "a site that hides alt texts has no alt attribute"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := string(base)
			require.Contains(t, src, tt.from)
			src = strings.Replace(src, tt.from, tt.to, 1)
			if tt.name == "ResultMediaMissing" {
				src = strings.Replace(src, "  media: *post-media\n", "  media: {selector: \"img.post-media\", type: data-type}\n", 1)
			}
			if tt.name == "SearchMediaMissing" {
				// Without the anchor's target the alias breaks: give the
				// result its own reader.
				src = strings.Replace(src, "media: &post-media", "media:", 1)
			}
			_, err := sites.Parse("demo.yaml", []byte(src))
			require.ErrorIs(t, err, sites.ErrInvalid)
			require.ErrorContains(t, err, tt.want)
		})
	}
	// Media on a like is refused.
	src := strings.Replace(string(base), "  like:\n    open: \"{target}\"\n", "  like:\n    open: \"{target}\"\n    media: *media\n", 1)
	_, err = sites.Parse("demo.yaml", []byte(src))
	require.ErrorContains(t, err, "actions.like.media: like attaches no media")
}
