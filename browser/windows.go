package browser

import (
	"context"
	"errors"
	"fmt"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// Surface names the layer an Inventory comes from. A tab is proven gone
// only by its absence from complete inventories of both.
type Surface string

// Inventory surfaces.
const (
	// SurfaceController is the browser's page targets over DevTools
	// (Target.getTargets): what browserop, the controller, can drive.
	SurfaceController Surface = "controller"
	// SurfacePerson is the tabs in the person's windows, as the browser's
	// window layer places them (Browser.getWindowForTarget).
	SurfacePerson Surface = "person"
)

// Windows takes the person's inventory: each tab of controller, and each
// of ids besides (the tabs the caller means to prove present or gone,
// asked for even when controller does not list them), placed in the
// window that holds it. A tab in a window is listed, with the window and
// its state; one the browser answers it has no target for is not. The
// inventory is Complete only when controller is a complete controller
// inventory and every question got one of those two answers: any other
// answer (a timeout, a target not in a window) leaves it incomplete, and
// its error wraps ErrBrowserGone or ErrTimeout where that applies.
func (b *Browser) Windows(ctx context.Context, controller Inventory, ids ...TargetID) (Inventory, error) {
	inv := Inventory{Surface: SurfacePerson, At: time.Now()}
	if controller.Surface != SurfaceController {
		return inv, fmt.Errorf("list windows: the inventory given is of the %q surface, not %q", controller.Surface, SurfaceController)
	}
	asked := make([]Target, 0, len(controller.Targets)+len(ids))
	asked = append(asked, controller.Targets...)
	for _, id := range ids {
		if id != "" && !controller.Has(id) {
			asked = append(asked, Target{ID: id})
		}
	}
	var errs []error
	for _, t := range asked {
		w, err := b.windowFor(ctx, t.ID)
		switch {
		case err == nil:
			t.WindowID, t.WindowState = int64(w.WindowID), string(w.Bounds.WindowState)
			if t.WindowState == "" {
				t.WindowState = string(cdpbrowser.WindowStateNormal)
			}
			inv.Targets = append(inv.Targets, t)
		case errors.Is(err, ErrTabGone):
			// In no window: not listed.
		default:
			errs = append(errs, err)
		}
	}
	inv.Complete = controller.Complete && len(errs) == 0
	if err := errors.Join(errs...); err != nil {
		return inv, fmt.Errorf("list windows: %w", err)
	}
	if !controller.Complete {
		return inv, errors.New("list windows: the controller inventory is not complete")
	}
	return inv, nil
}

// windowFor asks the browser for the window holding a target; ErrTabGone
// when it has no such target.
func (b *Browser) windowFor(ctx context.Context, id TargetID) (*cdpbrowser.GetWindowForTargetResult, error) {
	if err := b.goneErr(); err != nil {
		return nil, fmt.Errorf("window of %s: %w", id, err)
	}
	cctx, cancel := b.callCtx(ctx)
	defer cancel()
	res, err := chromedp.CallBrowser(cctx, cdpbrowser.GetWindowForTarget, cdpbrowser.GetWindowForTargetParams{TargetID: target.ID(id)})
	if err != nil {
		if isNoTarget(err) {
			return nil, fmt.Errorf("window of %s: %w", id, ErrTabGone)
		}
		return nil, b.browserErr("window of "+id.String(), ctx, cctx, err)
	}
	if res.Bounds == nil {
		res.Bounds = &cdpbrowser.Bounds{}
	}
	return &res, nil
}
