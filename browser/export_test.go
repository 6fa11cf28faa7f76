package browser

import (
	"context"
	"os"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// These hooks let the external tests play the person and the machine: open
// and close tabs behind browserop's back, crash a page, kill the process.

func ProcessOf(b *Browser) *os.Process { return b.cdp.Process() }

// RawCreate opens a tab outside the owned set, as the person would.
func RawCreate(b *Browser, url string) (TargetID, error) {
	ctx, cancel := b.callCtx(context.Background())
	defer cancel()
	res, err := chromedp.CallBrowser(ctx, target.CreateTarget, target.CreateTargetParams{URL: url})
	return TargetID(res.TargetID), err
}

// RawCloseTarget closes any tab, as the person would.
func RawCloseTarget(b *Browser, id TargetID) error {
	ctx, cancel := b.callCtx(context.Background())
	defer cancel()
	_, err := chromedp.CallBrowser(ctx, target.CloseTarget, target.CloseTargetParams{TargetID: target.ID(id)})
	return err
}

// CrashTab makes the tab's renderer crash.
func CrashTab(t *Tab) {
	ctx, cancel := context.WithTimeout(t.ctx, 2e9)
	defer cancel()
	_, _ = chromedp.Call(ctx, page.Crash, cdp.Empty{})
}
