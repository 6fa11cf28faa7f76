package browser

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// ErrNotFileInput means SetFiles's selector matched one element that is not
// an enabled <input type=file>.
var ErrNotFileInput = errors.New("not a file input")

// jsFileInput returns the one element sel matches when it is an enabled
// file input, else the number of matches (-1: one match, not a file input).
const jsFileInput = `function(sel){
	const l = __browseropQuery(document, sel);
	if (l.length !== 1) return l.length;
	const e = l[0];
	if (!(e instanceof HTMLInputElement) || e.type !== 'file' || e.disabled) return -1;
	return e;
}`

// SetFiles sets the files of the one file input matching sel to paths, as
// a person choosing them in the file dialog would: through CDP
// DOM.setFileInputFiles, never a native dialog, and the page gets its
// change and input events. Each path must be an absolute path to a regular
// file. A selector that matches zero or several elements returns a
// *SelectorError; one that matches something other than an enabled file
// input returns ErrNotFileInput. Setting files uploads nothing by itself:
// the page decides what its change event does.
func (t *Tab) SetFiles(ctx context.Context, sel string, paths []string) error {
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			return fmt.Errorf("set files %q: %q is not an absolute path", sel, p)
		}
		st, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("set files %q: %w", sel, err)
		}
		if !st.Mode().IsRegular() {
			return fmt.Errorf("set files %q: %q is not a regular file", sel, p)
		}
	}
	return t.run(ctx, fmt.Sprintf("set files %q", sel), 0, func(actx context.Context) error {
		obj, err := t.call(actx, jsFileInput, false, sel)
		if err != nil {
			return err
		}
		if obj == nil {
			return fmt.Errorf("set files %q: no answer from the page", sel)
		}
		if obj.Type == runtime.RemoteObjectTypeNumber {
			n, _ := strconv.Atoi(string(obj.Value))
			if n == -1 {
				return fmt.Errorf("%w: %q", ErrNotFileInput, sel)
			}
			return &SelectorError{Selector: sel, Count: n}
		}
		if obj.ObjectID == "" {
			return fmt.Errorf("set files %q: the page answered %s", sel, obj.Type)
		}
		defer func() {
			// Released even when actx ended: else the element stays
			// pinned in the world until the document goes.
			rctx, cancel := context.WithTimeout(context.WithoutCancel(actx), 2*time.Second)
			defer cancel()
			_, _ = chromedp.Call(rctx, runtime.ReleaseObject, runtime.ReleaseObjectParams{ObjectID: obj.ObjectID})
		}()
		_, err = chromedp.Call(actx, dom.SetFileInputFiles, dom.SetFileInputFilesParams{Files: paths, ObjectID: obj.ObjectID})
		return err
	})
}
