package browser

import (
	"context"
	"errors"
	"fmt"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// keyEvent is how a key a step may press is sent: its key and code names,
// its virtual key code, and the text it types ("" for none).
type keyEvent struct {
	key, code string
	vk        int64
	text      string
}

// The keys browserop sends. Enter types "\r": the browser's editing, and
// an editor's handlers, make a paragraph of it.
var (
	keyEnter     = keyEvent{"Enter", "Enter", 13, "\r"}
	keyBackspace = keyEvent{"Backspace", "Backspace", 8, ""}
)

// stepKeys are the keys Press sends, as a keyboard sends them.
var stepKeys = map[string]keyEvent{
	"Enter":  keyEnter,
	"Tab":    {"Tab", "Tab", 9, ""},
	"Escape": {"Escape", "Escape", 27, ""},
	",":      {",", "Comma", 188, ","},
}

// sendKey presses k in the focused element as a keyboard does: a key
// down that types its text (a raw key down for a key that types
// nothing), then a key up.
func sendKey(actx context.Context, k keyEvent) error {
	down := input.DispatchKeyEventParams{Type: input.DispatchKeyEventTypeKeyDown, Key: k.key, Code: k.code,
		WindowsVirtualKeyCode: k.vk, NativeVirtualKeyCode: k.vk, Text: k.text, UnmodifiedText: k.text}
	if k.text == "" {
		down.Type = input.DispatchKeyEventTypeRawKeyDown
	}
	if _, err := chromedp.Call(actx, input.DispatchKeyEvent, down); err != nil {
		return err
	}
	up := input.DispatchKeyEventParams{Type: input.DispatchKeyEventTypeKeyUp, Key: k.key, Code: k.code,
		WindowsVirtualKeyCode: k.vk, NativeVirtualKeyCode: k.vk}
	_, err := chromedp.Call(actx, input.DispatchKeyEvent, up)
	return err
}

// jsGuardSubmit, with on, holds back every form submission of the page
// until it is called again with off, which reports whether one was held
// back: a key pressed in a form's field (Enter) must not submit the form.
const jsGuardSubmit = `function(on){
	if (on) {
		window.__browseropHeld = false;
		window.__browseropGuard = e => { e.preventDefault(); e.stopImmediatePropagation(); window.__browseropHeld = true; };
		window.addEventListener('submit', window.__browseropGuard, true);
		return false;
	}
	window.removeEventListener('submit', window.__browseropGuard, true);
	return window.__browseropHeld === true;
}`

// ErrKeySubmits is a key press that would have submitted a form: it was
// held back, and nothing was sent.
var ErrKeySubmits = errors.New("the key would submit the form: it was held back")

// jsFocused reports whether the one element matching sel holds the focus
// (it is the active element, or holds it): a key is pressed only there.
const jsFocused = `function(sel){
	const l = __browseropQuery(document, sel);
	if (l.length !== 1) return {n: l.length};
	const a = document.activeElement;
	return {n: 1, focused: a !== null && (a === l[0] || l[0].contains(a))};
}`

// Press presses key (Enter, Tab, Escape or ",") in the one element
// matching sel, which must hold the focus (as Fill leaves it): a key
// down with the text the key types, then a key up, as a person's keyboard
// sends them, so that the page's handlers see a real key (an editor's tag
// field commits the tag on Enter). Nothing is pressed when the element
// does not hold the focus: the key would go to another element. A form
// submission the key sets off (Enter in a form's field) is held back,
// in the page's isolated world, and returns ErrKeySubmits: a step never
// submits.
func (t *Tab) Press(ctx context.Context, sel, key string) error {
	k, ok := stepKeys[key]
	if !ok {
		return fmt.Errorf("press %q: not a key browserop presses", key)
	}
	return t.run(ctx, fmt.Sprintf("press %s in %q", key, sel), 0, func(actx context.Context) error {
		var f struct {
			N       int  `json:"n"`
			Focused bool `json:"focused"`
		}
		if err := t.eval(actx, jsFocused, &f, sel); err != nil {
			return err
		}
		if f.N != 1 {
			return &SelectorError{Selector: sel, Count: f.N}
		}
		if !f.Focused {
			return fmt.Errorf("%w: %q does not hold the focus: %s is not pressed", ErrNotClickable, sel, key)
		}
		if err := t.eval(actx, jsGuardSubmit, nil, true); err != nil {
			return err
		}
		if err := sendKey(actx, k); err != nil {
			return err
		}
		var held bool
		if err := t.eval(actx, jsGuardSubmit, &held, false); err != nil {
			return err
		}
		if held {
			return fmt.Errorf("press %s in %q: %w", key, sel, ErrKeySubmits)
		}
		return nil
	})
}
