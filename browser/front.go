package browser

import (
	"context"
	"fmt"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// Visibility is what BringToFront proved of a tab handed to the person.
type Visibility struct {
	// Headless: the browser draws no window, so no tab of it can be seen.
	Headless bool `json:"headless,omitempty"`
	// Visible: after activation the tab's document said its visibility
	// state is "visible" and its window is not minimized.
	Visible bool `json:"visible"`
	// WindowState is the state of the window holding the tab (normal,
	// maximized, fullscreen, minimized), "" when it could not be read.
	WindowState string `json:"window_state,omitempty"`
	// Unverified says why Visible is false: a fixed phrase, with the
	// browser's error when one came.
	Unverified string `json:"unverified,omitempty"`
}

// frontWait bounds the wait for an activated tab to report itself visible:
// activation and a window's restore are asynchronous.
const frontWait = 3 * time.Second

// BringToFront shows the person the tab t: it activates the tab
// (Target.activateTarget, which raises its window and selects the tab in
// it), restores its window when minimized, and then proves it visible,
// reading the window's state from the browser (Browser.getWindowForTarget)
// and the document's own document.visibilityState, until both say so or
// frontWait passes. In a headless browser nothing is shown and nothing is
// tried: a headless document reports "visible" with no window at all. It
// sends no input to the page and never navigates it.
func (b *Browser) BringToFront(ctx context.Context, t *Tab) Visibility {
	if b.Headless() {
		return Visibility{Headless: true, Unverified: "the browser runs headless: it draws no window"}
	}
	return b.bringToFront(ctx, t)
}

// bringToFront is BringToFront for a browser taken to have windows.
func (b *Browser) bringToFront(ctx context.Context, t *Tab) Visibility {
	id := t.ID()
	if err := b.goneErr(); err != nil {
		return Visibility{Unverified: err.Error()}
	}
	cctx, cancel := b.callCtx(ctx)
	_, err := chromedp.CallBrowser(cctx, target.ActivateTarget, target.ActivateTargetParams{TargetID: target.ID(id)})
	cancel()
	if err != nil {
		return Visibility{Unverified: fmt.Sprintf("the tab could not be activated: %v", scrub(err))}
	}
	w, err := b.windowFor(ctx, id)
	if err != nil {
		return Visibility{Unverified: fmt.Sprintf("the tab's window could not be read: %v", scrub(err))}
	}
	if w.Bounds.WindowState == cdpbrowser.WindowStateMinimized {
		cctx, cancel := b.callCtx(ctx)
		_, err := chromedp.CallBrowser(cctx, cdpbrowser.SetWindowBounds, cdpbrowser.SetWindowBoundsParams{
			WindowID: w.WindowID, Bounds: &cdpbrowser.Bounds{WindowState: cdpbrowser.WindowStateNormal}})
		cancel()
		if err != nil {
			return Visibility{WindowState: string(w.Bounds.WindowState), Unverified: fmt.Sprintf("the tab's window is minimized and could not be restored: %v", scrub(err))}
		}
		// Activate again: restoring a window does not select the tab.
		cctx, cancel = b.callCtx(ctx)
		_, _ = chromedp.CallBrowser(cctx, target.ActivateTarget, target.ActivateTargetParams{TargetID: target.ID(id)})
		cancel()
	}
	deadline := time.Now().Add(frontWait)
	var v Visibility
	for {
		v = Visibility{}
		w, err := b.windowFor(ctx, id)
		if err != nil {
			return Visibility{Unverified: fmt.Sprintf("the tab's window could not be read: %v", scrub(err))}
		}
		v.WindowState = string(w.Bounds.WindowState)
		if v.WindowState == "" {
			v.WindowState = string(cdpbrowser.WindowStateNormal)
		}
		var state string
		err = t.run(ctx, "read the tab's visibility", 0, func(actx context.Context) error {
			return t.eval(actx, `function(){return document.visibilityState}`, &state)
		})
		switch {
		case err != nil:
			v.Unverified = fmt.Sprintf("the tab's visibility could not be read: %v", scrub(err))
		case v.WindowState == string(cdpbrowser.WindowStateMinimized):
			v.Unverified = "the tab's window is still minimized"
		case state != "visible":
			v.Unverified = fmt.Sprintf("the tab says its document is %q, not visible (another tab may be in front of it)", state)
		default:
			v.Visible = true
			return v
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return v
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			return v
		}
	}
}
