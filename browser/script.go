package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Every read and every preparation of an input runs as a function in an
// isolated world of the main frame: it shares the DOM with the page but not
// its JavaScript, so a page cannot shadow querySelectorAll, getAttribute or
// textContent to lie to browserop. Arguments travel as JSON values, never
// spliced into source text.

// worldName names browserop's isolated world.
const worldName = "browserop"

// eval calls fn (a JavaScript function expression) with args in the isolated
// world and decodes its JSON result into out (which may be nil). A promise
// result is awaited.
func (t *Tab) eval(actx context.Context, fn string, out any, args ...any) error {
	callArgs := make([]*runtime.CallArgument, 0, len(args))
	for _, a := range args {
		b, err := json.Marshal(a)
		if err != nil {
			return fmt.Errorf("encode argument: %w", err)
		}
		callArgs = append(callArgs, &runtime.CallArgument{Value: b})
	}
	for attempt := 0; ; attempt++ {
		cid, err := t.worldID(actx)
		if err != nil {
			return err
		}
		res, err := chromedp.Call(actx, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
			FunctionDeclaration: fn,
			Arguments:           callArgs,
			ExecutionContextID:  cid,
			ReturnByValue:       new(true),
			AwaitPromise:        new(true),
			Silent:              new(true),
		})
		if err != nil {
			if attempt == 0 && isStaleContext(err) {
				// The document changed under us; its world went with it.
				t.resetWorld(cid)
				continue
			}
			return err
		}
		if res.ExceptionDetails != nil {
			return fmt.Errorf("page script: %w", &chromedp.ExceptionError{ExceptionDetails: res.ExceptionDetails})
		}
		if out == nil || res.Result == nil || len(res.Result.Value) == 0 {
			return nil
		}
		if err := json.Unmarshal(res.Result.Value, out); err != nil {
			return fmt.Errorf("decode page script result: %w", err)
		}
		return nil
	}
}

// worldID returns the isolated world of the current document, creating it
// when the last navigation or a context reset dropped it.
func (t *Tab) worldID(actx context.Context) (runtime.ExecutionContextID, error) {
	t.mu.Lock()
	id, frame, seq := t.world, t.nav.mainFrame, t.nav.seq
	t.mu.Unlock()
	if id != 0 {
		return id, nil
	}
	res, err := chromedp.Call(actx, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{
		FrameID:             frame,
		WorldName:           worldName,
		GrantUniveralAccess: new(false),
	})
	if err != nil {
		return 0, err
	}
	t.mu.Lock()
	if t.nav.seq == seq {
		t.world = res.ExecutionContextID
	}
	t.mu.Unlock()
	return res.ExecutionContextID, nil
}

func (t *Tab) resetWorld(id runtime.ExecutionContextID) {
	t.mu.Lock()
	if t.world == id {
		t.world = 0
	}
	t.mu.Unlock()
}

// isStaleContext reports the browser's answer for an execution context that
// no longer exists.
func isStaleContext(err error) bool {
	var cerr *cdproto.Error
	if !errors.As(err, &cerr) {
		return false
	}
	m := strings.ToLower(cerr.Message)
	return strings.Contains(m, "context") && (strings.Contains(m, "find") || strings.Contains(m, "destroyed") || strings.Contains(m, "not found"))
}

// The page functions. Each takes plain JSON arguments and returns plain JSON.
const (
	jsCount = `function(sel){return document.querySelectorAll(sel).length}`

	jsTexts = `function(sel){return Array.from(document.querySelectorAll(sel), e => e.textContent)}`

	jsAttrs = `function(sel, name){return Array.from(document.querySelectorAll(sel), e => e.getAttribute(name))}`

	jsVisible = `function(sel){
	for (const e of document.querySelectorAll(sel)) {
		const r = e.getBoundingClientRect(), s = getComputedStyle(e);
		if (r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none') return true;
	}
	return false;
}`

	// jsValue reads what an editable element holds after the page's own
	// handlers had a turn (a timer of the page queued before ours runs
	// first), so a fill that a script rewrites is seen rewritten.
	jsValue = `async function(sel, settle){
	if (settle > 0) await new Promise(r => setTimeout(r, settle));
	const l = document.querySelectorAll(sel);
	if (l.length !== 1) return {n: l.length};
	const e = l[0];
	if (e instanceof HTMLInputElement || e instanceof HTMLTextAreaElement || e instanceof HTMLSelectElement) return {n: 1, v: e.value};
	if (e.isContentEditable) return {n: 1, v: e.innerText};
	return {n: 1, err: 'not an editable element'};
}`

	// jsPrepareFill focuses the one element and selects everything in it,
	// so the insertion that follows replaces the content.
	jsPrepareFill = `function(sel){
	const l = document.querySelectorAll(sel);
	if (l.length !== 1) return {n: l.length};
	const e = l[0];
	const field = e instanceof HTMLInputElement || e instanceof HTMLTextAreaElement;
	if (!field && !e.isContentEditable) return {n: 1, err: 'not an editable element'};
	if (e.disabled || e.readOnly) return {n: 1, err: 'disabled or read-only'};
	e.scrollIntoView({block: 'center', inline: 'center'});
	e.focus();
	if (document.activeElement !== e) return {n: 1, err: 'cannot take focus'};
	if (field) {
		e.select();
		return {n: 1, empty: e.value === ''};
	}
	const r = document.createRange();
	r.selectNodeContents(e);
	const s = getSelection();
	s.removeAllRanges();
	s.addRange(r);
	return {n: 1, empty: e.textContent === ''};
}`

	// jsClickPoint finds the centre of the one element and checks that a
	// click there reaches it and not something laid over it.
	jsClickPoint = `function(sel){
	const l = document.querySelectorAll(sel);
	if (l.length !== 1) return {n: l.length};
	const e = l[0];
	e.scrollIntoView({block: 'center', inline: 'center'});
	const r = e.getBoundingClientRect();
	if (!(r.width > 0 && r.height > 0)) return {n: 1, err: 'it has no box (hidden?)'};
	const x = r.left + r.width / 2, y = r.top + r.height / 2;
	const h = document.elementFromPoint(x, y);
	if (!h || !(h === e || e.contains(h))) return {n: 1, err: 'another element covers it'};
	if (e.disabled) return {n: 1, err: 'it is disabled'};
	return {n: 1, x: x, y: y};
}`

	jsLocation = `function(){return location.href}`

	jsNavStatus = `function(){
	const e = performance.getEntriesByType('navigation')[0];
	return e && e.responseStatus ? e.responseStatus : 0;
}`

	// jsExtract reads fields of every item: for each field, the first
	// match of its selector inside the item (or the item itself), its text
	// or attribute, and how many elements matched.
	jsExtract = `function(itemSel, fields){
	return Array.from(document.querySelectorAll(itemSel), it => {
		const o = {};
		for (const f of fields) {
			const l = f.sel ? it.querySelectorAll(f.sel) : [it];
			let v = null;
			if (l.length > 0) v = f.attr ? l[0].getAttribute(f.attr) : l[0].textContent;
			o[f.name] = {n: l.length, v: v};
		}
		return o;
	});
}`
)
