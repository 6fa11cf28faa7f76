package sites

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/media"
)

// MediaSpec says how an action attaches media, one item after another, in
// the intent's order. Every selector and step (but attached and
// attached_alt, which read all items) may name the item's slot as {n} (1
// for the first item): "input#media-file-{n}", and the name its file is
// uploaded under, without its extension, as {name}: its own name's
// letters, digits, '-' and '_', then '-' and the first 12 hex digits of
// its SHA-256 ("my-photo-1a2b3c4d5e6f"), escaped for a quoted CSS string.
// A media library lists an upload under that title:
// 'li.attachment:first-child[aria-label^="{name}"]'.
//
// For item n: the Before steps run (insert an image block, open a slot);
// Input, the one file input, gets the file (CDP DOM.setFileInputFiles,
// never a file dialog); the upload has finished when Uploaded shows and
// Progress matches nothing, and has failed when Failed shows, or when
// neither happens within Timeout. Then AltSteps run (open the alt text
// dialog), Alt is filled with the item's alt text and read back, and the
// After steps run (close the dialog). When every item is attached, the
// composer must show exactly as many Attached elements as items, and each
// alt text must read back: by AttachedAlt inside each Attached element
// when set, else by Alt again.
//
// Max, Types and MaxBytes are what the site takes, and AltRequired says
// an image without an alt text cannot be posted (its composer cannot
// read an empty one back); the calendar and the API refuse more, other
// types, larger files or a missing alt text before anything is reserved.
type MediaSpec struct {
	Max         int        `yaml:"max"`
	Types       []string   `yaml:"types"`
	MaxBytes    int64      `yaml:"max_bytes"`
	AltRequired bool       `yaml:"alt_required"`
	Before      []StepSpec `yaml:"before"`
	Input       string     `yaml:"input"`
	Uploaded    string     `yaml:"uploaded"`
	Progress    string     `yaml:"progress"`
	Failed      string     `yaml:"failed"`
	Timeout     *Duration  `yaml:"timeout"`
	AltSteps    []StepSpec `yaml:"alt_steps"`
	Alt         *FillSpec  `yaml:"alt"`
	After       []StepSpec `yaml:"after"`
	Attached    string     `yaml:"attached"`
	// AttachedAlt reads an attached item's alt text inside its Attached
	// element (an image's alt attribute in the editor).
	AttachedAlt *FieldSpec `yaml:"attached_alt"`
}

// MediaReadSpec reads the media of a result or search item: each element
// matching Selector inside the item is one media item, in page order. Its
// type is read from the attribute Type ("src" by default): a type name, a
// MIME type, or a URL whose extension names it. Its alt text is the
// attribute Alt ("alt" by default), unless HidesAlt says the site does not
// show alt texts: then alt texts are not compared (see verify/doc.go).
type MediaReadSpec struct {
	Selector string `yaml:"selector"`
	Type     string `yaml:"type"`
	Alt      string `yaml:"alt"`
	HidesAlt bool   `yaml:"hides_alt"`
}

// DefaultUploadTimeout is how long one upload may take when an adapter
// does not say.
const DefaultUploadTimeout = 60 * time.Second

// maxMediaPerAction bounds MediaSpec.Max.
const maxMediaPerAction = 20

func (m *MediaSpec) validate(p *problems, path string) {
	if m.Max < 1 || m.Max > maxMediaPerAction {
		p.add(path+".max", "required: 1 to %d items per action", maxMediaPerAction)
	}
	if len(m.Types) == 0 {
		p.add(path+".types", "required: the image types the site takes (%s)", strings.Join(media.Types, ", "))
	}
	for i, t := range m.Types {
		if !media.Known(t) {
			p.add(fmt.Sprintf("%s.types[%d]", path, i), "%q is not one of %s", t, strings.Join(media.Types, ", "))
		}
	}
	if m.MaxBytes < 0 || m.MaxBytes > media.MaxBytes {
		p.add(path+".max_bytes", "must be 1 to %d (0: %d)", media.MaxBytes, media.MaxBytes)
	}
	slot := func(sel string) string { return slot{n: 1, name: "x"}.put(sel) }
	attachedAlt := ""
	if m.AttachedAlt != nil {
		attachedAlt = m.AttachedAlt.Selector
	}
	for _, f := range [][2]string{{"attached", m.Attached}, {"attached_alt.selector", attachedAlt}} {
		if strings.Contains(f[1], "{n}") || strings.Contains(f[1], "{name}") {
			p.add(path+"."+f[0], "reads every attached item: no {n} or {name}")
		}
	}
	checkSelector(p, path+".input", slot(m.Input), true)
	checkSelector(p, path+".uploaded", slot(m.Uploaded), false)
	checkSelector(p, path+".progress", slot(m.Progress), false)
	checkSelector(p, path+".failed", slot(m.Failed), false)
	checkSelector(p, path+".attached", m.Attached, true)
	if m.Uploaded == "" {
		// Progress alone would count as finished before the page drew it.
		p.add(path+".uploaded", "required: what shows the upload finished (a thumbnail, a done state)")
	}
	if m.Timeout != nil && (*m.Timeout <= 0 || time.Duration(*m.Timeout) > 30*time.Minute) {
		p.add(path+".timeout", "must be more than 0s and at most 30m")
	}
	for i, st := range m.Before {
		st.validate(p, fmt.Sprintf("%s.before[%d]", path, i))
	}
	for i, st := range m.AltSteps {
		st.validate(p, fmt.Sprintf("%s.alt_steps[%d]", path, i))
	}
	for i, st := range m.After {
		st.validate(p, fmt.Sprintf("%s.after[%d]", path, i))
	}
	if m.AltRequired && m.Alt == nil {
		p.add(path+".alt_required", "needs alt: the field the alt text is typed into")
	}
	if m.Alt != nil {
		checkSelector(p, path+".alt.selector", slot(m.Alt.Selector), true)
		checkSelector(p, path+".alt.frame", slot(m.Alt.Frame), false)
		if m.Alt.Value != "" && m.Alt.Value != "{alt}" {
			p.add(path+".alt.value", "%q: an alt field takes {alt}", m.Alt.Value)
		}
	}
	if m.AttachedAlt != nil {
		checkSelector(p, path+".attached_alt.selector", m.AttachedAlt.Selector, false)
		checkName(p, path+".attached_alt.attribute", m.AttachedAlt.Attribute)
		if m.Alt == nil {
			p.add(path+".attached_alt", "reads back alt texts, and needs alt to fill them")
		}
		if m.AttachedAlt.Template != "" || m.AttachedAlt.Page || m.AttachedAlt.Layout != "" {
			p.add(path+".attached_alt", "takes only selector and attribute")
		}
	}
}

func (r *MediaReadSpec) validate(p *problems, path string) {
	if r == nil {
		return
	}
	checkSelector(p, path+".selector", r.Selector, true)
	checkName(p, path+".type", r.Type)
	checkName(p, path+".alt", r.Alt)
	if r.HidesAlt && r.Alt != "" {
		p.add(path+".alt", "a site that hides alt texts has no alt attribute to read")
	}
}

func (r *MediaReadSpec) typeAttr() string {
	if r.Type == "" {
		return "src"
	}
	return r.Type
}

func (r *MediaReadSpec) altAttr() string {
	if r.Alt == "" {
		return "alt"
	}
	return r.Alt
}

// MediaLimits returns what the action of kind k takes as media.
func (d *Declarative) MediaLimits(k kind.Kind) MediaLimits {
	a := d.spec.Actions.get(k)
	if a == nil || a.Media == nil {
		return MediaLimits{}
	}
	l := MediaLimits{Max: a.Media.Max, Types: append([]string(nil), a.Media.Types...), MaxBytes: a.Media.MaxBytes,
		TakesAlt: a.Media.Alt != nil, AltRequired: a.Media.AltRequired}
	if l.MaxBytes == 0 {
		l.MaxBytes = media.MaxBytes
	}
	return l
}

// slot is one media item's place: its number n (from 1) and the name
// its file is uploaded under (uploadName).
type slot struct {
	n    int
	name string
}

func slotOf(i int, it media.Item) slot {
	return slot{n: i + 1, name: uploadName(it)}
}

// put puts the slot into a selector: {n}, and {name} escaped for a quoted
// CSS string.
func (s slot) put(sel string) string {
	sel = strings.ReplaceAll(sel, "{n}", strconv.Itoa(s.n))
	if !strings.Contains(sel, "{name}") {
		return sel
	}
	var b strings.Builder
	for _, r := range s.name {
		switch {
		case r == '"' || r == '\\' || r == '\'':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\%x ", r)
		default:
			b.WriteRune(r)
		}
	}
	return strings.ReplaceAll(sel, "{name}", b.String())
}

func (s slot) steps(steps []StepSpec) []StepSpec {
	out := make([]StepSpec, len(steps))
	for i, st := range steps {
		st.Click, st.If, st.Unless, st.Wait, st.Gone = s.put(st.Click), s.put(st.If), s.put(st.Unless), s.put(st.Wait), s.put(st.Gone)
		out[i] = st
	}
	return out
}

func (m *MediaSpec) altField(s slot) FillSpec {
	return FillSpec{Selector: s.put(m.Alt.Selector), Frame: s.put(m.Alt.Frame), Value: "{alt}"}
}

// attach uploads and describes every media item of the intent, then reads
// back what the composer holds. A failed or unfinished upload returns
// ErrUploadFailed; an alt text or a count that reads back otherwise,
// ErrReadBackMismatch. Nothing is submitted.
func (d *Declarative) attach(ctx context.Context, tab *browser.Tab, k kind.Kind, items []media.Item) error {
	if len(items) == 0 {
		return nil
	}
	a, err := d.action(k)
	if err != nil {
		return err
	}
	m := a.Media
	if err := d.MediaLimits(k).Check(items); err != nil {
		return fmt.Errorf("%w: %v", ErrStepFailed, err)
	}
	for i, it := range items {
		sl := slotOf(i, it)
		what := fmt.Sprintf("media[%d]", i)
		if err := d.runSteps(ctx, tab, sl.steps(m.Before), what+".before", a.Ready); err != nil {
			return err
		}
		input := sl.put(m.Input)
		// A file input is often hidden behind a styled button: it need
		// only be in the page.
		err := pollUntil(ctx, func(ctx context.Context) (bool, error) {
			c, err := tab.Count(ctx, input)
			return c > 0, err
		}, func(err error) error { return stepErr(what+": file input", input, err) })
		if err != nil {
			return err
		}
		upload, err := uploadCopy(it, what)
		if err != nil {
			return err
		}
		if err := tab.SetFiles(ctx, input, []string{upload}); err != nil {
			if errors.Is(err, browser.ErrNotFileInput) || errors.Is(err, browser.ErrSelectorAmbiguous) && !errors.Is(err, browser.ErrNotFound) {
				return hardStop(StopSelectorAmbiguous, err, "%s: file input", what)
			}
			return stepErr(what+": file input", input, err)
		}
		if err := m.waitUploaded(ctx, tab, sl, what); err != nil {
			return err
		}
		if err := d.runSteps(ctx, tab, sl.steps(m.AltSteps), what+".alt_steps", a.Ready); err != nil {
			return err
		}
		if m.Alt != nil {
			f := m.altField(sl)
			got, err := fillField(ctx, tab, f, it.Alt)
			if err != nil {
				return stepErr(what+": alt", f.Selector, err)
			}
			if !sameFill(it.Alt, got) {
				return fmt.Errorf("%w: %s alt: %s", ErrReadBackMismatch, what, describeMismatch(it.Alt, got))
			}
		}
		if err := d.runSteps(ctx, tab, sl.steps(m.After), what+".after", a.Ready); err != nil {
			return err
		}
	}
	return m.readBack(ctx, tab, items)
}

// errShownFailed is what waitUploaded's poll ends on when the page shows
// the upload failed.
var errShownFailed = errors.New("the page shows the upload failed")

// waitUploaded waits until the slot's upload finished (uploaded shows,
// progress is gone) or failed (failed shows, or the timeout passed).
func (m *MediaSpec) waitUploaded(ctx context.Context, tab *browser.Tab, sl slot, what string) error {
	timeout := DefaultUploadTimeout
	if m.Timeout != nil {
		timeout = time.Duration(*m.Timeout)
	}
	uploaded, progress, failed := sl.put(m.Uploaded), sl.put(m.Progress), sl.put(m.Failed)
	count := func(ctx context.Context, sel string) (int, error) {
		if sel == "" {
			return 0, nil
		}
		return tab.Count(ctx, sel)
	}
	return pollFor(ctx, timeout, 100*time.Millisecond, func(ctx context.Context) (bool, error) {
		if c, err := count(ctx, failed); err != nil || c > 0 {
			return false, cmp.Or(err, errShownFailed)
		}
		if c, err := count(ctx, uploaded); err != nil || c == 0 {
			return false, err
		}
		c, err := count(ctx, progress)
		return c == 0, err
	}, func(err error) error {
		var late errNotWithin
		switch {
		case errors.Is(err, errShownFailed):
			return fmt.Errorf("%w: %s: the page shows the upload failed (%q)", ErrUploadFailed, what, failed)
		case errors.As(err, &late):
			return fmt.Errorf("%w: %s: the upload did not finish within %s", ErrUploadFailed, what, timeout)
		case errors.Is(err, browser.ErrTabGone) || errors.Is(err, browser.ErrBrowserGone) || ctx.Err() != nil:
			return err
		}
		return fmt.Errorf("%w: %s: %v", ErrUploadFailed, what, err)
	})
}

// readBack checks that the composer holds exactly the items, each with its
// alt text.
func (m *MediaSpec) readBack(ctx context.Context, tab *browser.Tab, items []media.Item) error {
	attached := m.Attached
	if m.AttachedAlt == nil {
		c, err := tab.Count(ctx, attached)
		if err != nil {
			return stepErr("media: attached", attached, err)
		}
		if c != len(items) {
			return fmt.Errorf("%w: the composer holds %d media items, want %d", ErrReadBackMismatch, c, len(items))
		}
		if m.Alt == nil {
			return nil
		}
		for i, it := range items {
			f := m.altField(slotOf(i, it))
			got, err := readField(ctx, tab, f)
			if err != nil {
				return stepErr(fmt.Sprintf("media[%d]: alt read back", i), f.Selector, err)
			}
			if !sameFill(it.Alt, got) {
				return fmt.Errorf("%w: media[%d] alt: %s", ErrReadBackMismatch, i, describeMismatch(it.Alt, got))
			}
		}
		return nil
	}
	raw, err := tab.Extract(ctx, attached, []browser.Field{{Name: "alt", Selector: m.AttachedAlt.Selector, Attr: m.AttachedAlt.Attribute}})
	if err != nil {
		return stepErr("media: attached", attached, err)
	}
	if len(raw) != len(items) {
		return fmt.Errorf("%w: the composer holds %d media items, want %d", ErrReadBackMismatch, len(raw), len(items))
	}
	for i, it := range items {
		v := raw[i]["alt"]
		if v.Count != 1 {
			return fmt.Errorf("%w: media[%d] alt: %d elements hold it, want 1", ErrReadBackMismatch, i, v.Count)
		}
		if !sameFill(it.Alt, v.Value) {
			return fmt.Errorf("%w: media[%d] alt: %s", ErrReadBackMismatch, i, describeMismatch(it.Alt, v.Value))
		}
	}
	return nil
}

// mediaFields are the Extract fields that read an item's media.
func mediaFields(r *MediaReadSpec) []browser.Field {
	if r == nil {
		return nil
	}
	f := []browser.Field{{Name: "media.type", Selector: r.Selector, Attr: r.typeAttr(), All: true}}
	if !r.HidesAlt {
		f = append(f, browser.Field{Name: "media.alt", Selector: r.Selector, Attr: r.altAttr(), All: true})
	}
	return f
}

// readMedia turns what mediaFields read into the item's media. A media
// item whose type the page does not show (an image format browserop does
// not post, a placeholder) has the type "": it matches no intent, and an
// item with the intended text and such media keeps its verdict ambiguous,
// while the item does not make the rest of the view unreadable.
func readMedia(r *MediaReadSpec, m map[string]browser.Found) []MediaSeen {
	if r == nil {
		return nil
	}
	types := m["media.type"].Values
	alts := m["media.alt"].Values
	var out []MediaSeen
	for i, tv := range types {
		seen := MediaSeen{Type: media.TypeOf(tv), AltRead: !r.HidesAlt}
		if !r.HidesAlt && i < len(alts) {
			seen.Alt = alts[i]
		}
		out = append(out, seen)
	}
	return out
}
