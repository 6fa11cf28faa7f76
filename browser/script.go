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
	res, err := t.call(actx, fn, true, args...)
	if err != nil {
		return err
	}
	if out == nil || res == nil || len(res.Value) == 0 {
		return nil
	}
	if err := json.Unmarshal(res.Value, out); err != nil {
		return fmt.Errorf("decode page script result: %w", err)
	}
	return nil
}

// call calls fn with args in the isolated world and returns its result:
// by value (JSON in Value), or, with byValue false, as a remote object
// (an element's ObjectID) the caller releases.
func (t *Tab) call(actx context.Context, fn string, byValue bool, args ...any) (*runtime.RemoteObject, error) {
	callArgs := make([]*runtime.CallArgument, 0, len(args))
	for _, a := range args {
		b, err := json.Marshal(a)
		if err != nil {
			return nil, fmt.Errorf("encode argument: %w", err)
		}
		callArgs = append(callArgs, &runtime.CallArgument{Value: b})
	}
	for attempt := 0; ; attempt++ {
		cid, err := t.worldID(actx)
		if err != nil {
			return nil, err
		}
		res, err := chromedp.Call(actx, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
			FunctionDeclaration: fn,
			Arguments:           callArgs,
			ExecutionContextID:  cid,
			ReturnByValue:       new(byValue),
			AwaitPromise:        new(true),
			Silent:              new(true),
		})
		if err != nil {
			if attempt == 0 && isStaleContext(err) {
				// The document changed under us; its world went with it.
				t.resetWorld(cid)
				continue
			}
			return nil, err
		}
		if res.ExceptionDetails != nil {
			return nil, fmt.Errorf("page script: %w", &chromedp.ExceptionError{ExceptionDetails: res.ExceptionDetails})
		}
		return res.Result, nil
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
	// The world's query function, which every page function uses to
	// match a selector (see jsQuery).
	ev, err := chromedp.Call(actx, runtime.Evaluate, runtime.EvaluateParams{
		Expression: jsQuery, ContextID: res.ExecutionContextID, Silent: new(true),
	})
	if err != nil {
		return 0, err
	}
	if ev.ExceptionDetails != nil {
		return 0, fmt.Errorf("page script: %w", &chromedp.ExceptionError{ExceptionDetails: ev.ExceptionDetails})
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
	// jsQuery defines, in browserop's world, the one way a selector is
	// matched: __browseropQuery(root, sel) returns the elements under root
	// (in document order) that match sel, which is CSS, or CSS followed by
	// one :text("…") (the element's visible text is that, white space
	// collapsed and trimmed) or :name("…") (its accessible name is that:
	// aria-label, the text of aria-labelledby's elements, its label, the
	// value of a button input, alt, title, else its visible text). An
	// empty CSS part, or one that ends in a combinator or a space, is
	// followed by any element ("div :text(…)" is a div's descendant). A
	// selector that is not valid CSS throws, as querySelectorAll does.
	jsQuery = `globalThis.__browseropQuery = (function(){
	const re = /^([\s\S]*?):(text|name)\("((?:[^"\\]|\\.)*)"\)$/;
	const norm = s => String(s == null ? '' : s).replace(/\s+/g, ' ').trim();
	const label = (root, id) => { const e = root.getElementById ? root.getElementById(id) : null; return e ? e.textContent : ''; };
	const name = e => {
		const own = e.getAttribute('aria-label');
		if (own && norm(own)) return own;
		const by = e.getAttribute('aria-labelledby');
		if (by) {
			const doc = e.ownerDocument, t = by.split(/\s+/).map(id => label(doc, id)).join(' ');
			if (norm(t)) return t;
		}
		if (e.labels && e.labels.length) return Array.from(e.labels, l => l.textContent).join(' ');
		if (e.tagName === 'INPUT' && /^(button|submit|reset)$/i.test(e.type)) return e.value;
		for (const a of ['alt', 'title']) { const v = e.getAttribute(a); if (v && norm(v)) return v; }
		return e.innerText;
	};
	return function(root, sel) {
		const m = re.exec(sel);
		if (!m) return Array.from(root.querySelectorAll(sel));
		const want = norm(JSON.parse('"' + m[3] + '"'));
		const by = m[2] === 'text' ? (e => e.innerText) : name;
		// "div :text(…)" is a div's descendant, as CSS reads "div *".
		const css = (m[1] === '' || /[\s>+~]$/.test(m[1])) ? m[1] + '*' : m[1];
		return Array.from(root.querySelectorAll(css)).filter(e => norm(by(e)) === want);
	};
})();`

	jsCount = `function(sel){return __browseropQuery(document, sel).length}`

	jsTexts = `function(sel){return Array.from(__browseropQuery(document, sel), e => e.textContent)}`

	jsAttrs = `function(sel, name){return Array.from(__browseropQuery(document, sel), e => e.getAttribute(name))}`

	jsVisible = `function(sel){
	for (const e of __browseropQuery(document, sel)) {
		const r = e.getBoundingClientRect(), s = getComputedStyle(e);
		if (r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none') return true;
	}
	return false;
}`

	// jsFrameDoc begins every function that works in a frame: frameSel ""
	// is the main document, else the one iframe it names, whose document
	// must be reachable from the main frame (same origin). It returns early
	// with fn (how many elements frameSel matched) and ferr.
	jsFrameDoc = `
	let doc = document;
	if (frameSel) {
		const fl = __browseropQuery(document, frameSel);
		if (fl.length !== 1) return {fn: fl.length};
		const f = fl[0];
		if (f.tagName !== 'IFRAME' && f.tagName !== 'FRAME') return {fn: 1, ferr: 'it is not an iframe'};
		let d = null;
		try { d = f.contentDocument; } catch (e) {}
		if (!d) return {fn: 1, ferr: 'its document is of another origin or sandboxed'};
		doc = d;
	}
`

	// jsEditorText is the text a person sees in an editable element (the
	// innerText of its blocks, without innerText's paragraph gaps): every
	// block (a p, a div, a heading, a list item) is a line, a <br> ends a
	// line (the last one of a block only holds an empty line open). A
	// line that begins a block is joined to the one before with "\n"; a
	// line that continues the paragraph of the one before (after a <br>,
	// or a newline that pre-wrap keeps) with U+2028 LINE SEPARATOR, so
	// that lines an editor kept in one paragraph never read back as
	// paragraphs. White space collapses as CSS says it does:
	// runs of spaces become one and vanish at line ends, except in pre,
	// pre-wrap and break-spaces, where spaces and newlines are kept (the
	// editors of ProseMirror, Lexical and Draft.js are pre-wrap). innerText
	// itself reads <p>a</p><p>b</p> as "a\n\nb" and <div><br></div> as two
	// newlines, so what a fill inserted would not read back as inserted.
	jsEditorText = `
	function editorText(root) {
		const win = root.ownerDocument.defaultView;
		let out = '', lines = 0, soft = false;
		let line = null, trim = false;
		// close ends the current line: at a block's edge (soft false),
		// or at a line break inside a paragraph (soft true), after
		// which the next line continues that paragraph.
		const close = (brk) => {
			if (line !== null) {
				if (lines > 0) out += soft ? '\u2028' : '\n';
				out += trim ? line.slice(0, -1) : line;
				lines++;
				soft = brk === true;
			} else if (brk !== true) {
				soft = false;
			}
			line = null;
			trim = false;
		};
		const text = (data, ws) => {
			const keep = ws === 'pre' || ws === 'pre-wrap' || ws === 'break-spaces';
			const lf = keep || ws === 'pre-line';
			const parts = lf ? data.split(/\r\n|\r|\n/) : [data];
			parts.forEach((p, i) => {
				if (i > 0) {
					if (line === null) line = '';
					close(true);
					line = '';
				}
				if (keep) {
					if (p !== '') { line = (line === null ? '' : line) + p; trim = false; }
					return;
				}
				p = p.replace(/[ \t\n\r\f]+/g, ' ');
				if (p.startsWith(' ') && (line === null || line === '' || trim)) p = p.slice(1);
				if (p === '') return;
				line = (line === null ? '' : line) + p;
				trim = p.endsWith(' ');
			});
		};
		const walk = (node, ws) => {
			for (const c of node.childNodes) {
				if (c.nodeType === 3) { text(c.data, ws); continue; }
				if (c.nodeType !== 1) continue;
				const st = win.getComputedStyle(c);
				if (st.display === 'none') continue;
				if (c.tagName === 'BR') {
					if (line === null) line = '';
					close(true);
					continue;
				}
				const block = !st.display.startsWith('inline') && st.display !== 'contents';
				if (block) close();
				walk(c, st.whiteSpace);
				if (block) close();
			}
		};
		walk(root, win.getComputedStyle(root).whiteSpace);
		close();
		return out;
	}
`

	// jsValue reads what an editable element holds after the page's own
	// handlers had a turn (a timer of the page queued before ours runs
	// first), so a fill that a script rewrites is seen rewritten. Elements
	// are told apart by tag, not instanceof: an element of another frame
	// is no instance of this window's classes. With blocks, sel may match
	// several contenteditable elements, the paragraphs of an editor that
	// makes each its own element: their texts are read in document order
	// as its paragraphs (a match inside another is part of it).
	jsValue = `async function(frameSel, sel, settle, blocks){
	if (settle > 0) await new Promise(r => setTimeout(r, settle));` + jsFrameDoc + jsEditorText + `
	const l = __browseropQuery(doc, sel);
	const field = e => e.tagName === 'INPUT' || e.tagName === 'TEXTAREA' || e.tagName === 'SELECT';
	if (blocks && l.length > 1 && l.every(e => e.isContentEditable && !field(e))) {
		const top = l.filter(e => !l.some(o => o !== e && o.contains(e)));
		return {fn: 1, n: 1, v: top.map(editorText).join('\n')};
	}
	if (l.length !== 1) return {fn: 1, n: l.length};
	const e = l[0];
	if (e.tagName === 'INPUT' || e.tagName === 'TEXTAREA' || e.tagName === 'SELECT') return {fn: 1, n: 1, v: e.value};
	// A plain-text editor has lines, not paragraphs.
	if (e.contentEditable === 'plaintext-only') return {fn: 1, n: 1, v: editorText(e).replace(/\u2028/g, '\n')};
	if (e.isContentEditable) return {fn: 1, n: 1, v: editorText(e)};
	return {fn: 1, n: 1, err: 'not an editable element'};
}`

	// jsPrepareFill focuses the one element (and first the iframe that
	// holds it) and selects everything in it, so the insertion that
	// follows replaces the content. With over (an array of one text: an
	// empty string alone would arrive as undefined), it first reads the
	// element as jsValue does and, unless it holds exactly over[0],
	// touches nothing and says so (changed): what it would replace is not
	// what the caller read.
	jsPrepareFill = `function(frameSel, sel, over){` + jsFrameDoc + jsEditorText + `
	const l = __browseropQuery(doc, sel);
	if (l.length !== 1) return {fn: 1, n: l.length};
	const e = l[0];
	const field = e.tagName === 'INPUT' || e.tagName === 'TEXTAREA';
	if (!field && !e.isContentEditable) return {fn: 1, n: 1, err: 'not an editable element'};
	if (e.disabled || e.readOnly) return {fn: 1, n: 1, err: 'disabled or read-only'};
	if (Array.isArray(over)) {
		let cur;
		if (field) cur = e.value;
		else if (e.contentEditable === 'plaintext-only') cur = editorText(e).replace(/\u2028/g, '\n');
		else cur = editorText(e);
		if (cur !== over[0]) return {fn: 1, n: 1, changed: true};
	}
	if (doc !== document) {
		const f = __browseropQuery(document, frameSel)[0];
		f.scrollIntoView({block: 'center', inline: 'center'});
		f.focus();
	}
	e.scrollIntoView({block: 'center', inline: 'center'});
	e.focus();
	if (doc.activeElement !== e) return {fn: 1, n: 1, err: 'cannot take focus'};
	if (field) {
		e.select();
		return {fn: 1, n: 1, empty: e.value === '', field: true};
	}
	// A plain-text editor takes its text's newlines as a textarea does.
	const plain = e.contentEditable === 'plaintext-only';
	const r = doc.createRange();
	r.selectNodeContents(e);
	const s = doc.getSelection();
	s.removeAllRanges();
	s.addRange(r);
	return {fn: 1, n: 1, empty: e.textContent === '', field: plain};
}`

	// jsSettle lets the page's own handlers run for ms milliseconds.
	jsSettle = `function(ms){return new Promise(r => setTimeout(r, ms))}`

	// jsTypingIn reports whether the focus is in what a fill types into:
	// the document of frameSel (its iframe is the page's active element)
	// and, there, an element matching sel or inside one, so that the next
	// line of a text typed line by line goes where the ones before went.
	jsTypingIn = `function(frameSel, sel){` + jsFrameDoc + `
	if (doc !== document && document.activeElement !== __browseropQuery(document, frameSel)[0]) return {fn: 1, in: false};
	const a = doc.activeElement;
	return {fn: 1, in: a !== null && __browseropQuery(doc, sel).some(e => e === a || e.contains(a))};
}`

	// jsClickPoint finds the centre of the one visible element matching
	// sel and checks that a click there reaches it and not something laid
	// over it. Hidden copies (a mobile layout's button, a template) do not
	// count, as a person sees none of them: n is the number of visible
	// matches, hidden the others. The one match of a selector that matches
	// only hidden elements is reported as such (not clickable), not as
	// missing.
	jsClickPoint = `function(sel){
	const all = __browseropQuery(document, sel);
	const shown = e => {
		const r = e.getBoundingClientRect();
		return r.width > 0 && r.height > 0 && e.checkVisibility({visibilityProperty: true});
	};
	const vis = Array.prototype.filter.call(all, shown);
	if (vis.length === 0 && all.length === 1) return {n: 1, err: 'it has no box (hidden?)'};
	if (vis.length !== 1) return {n: vis.length, hidden: all.length - vis.length};
	const e = vis[0];
	e.scrollIntoView({block: 'center', inline: 'center'});
	const r = e.getBoundingClientRect();
	if (!(r.width > 0 && r.height > 0)) return {n: 1, err: 'it has no box (hidden?)'};
	const x = r.left + r.width / 2, y = r.top + r.height / 2;
	const h = document.elementFromPoint(x, y);
	if (!h || !(h === e || e.contains(h))) return {n: 1, err: 'another element covers it'};
	if (e.disabled || e.getAttribute('aria-disabled') === 'true') return {n: 1, err: 'it is disabled'};
	// A finite animation or transition running on it or an ancestor (a
	// panel sliding in) moves it, even when no frame was drawn between two
	// looks on a busy machine; an endless one (a pulse) is not a move.
	const moving = document.getAnimations().some(a => {
		const t = a.effect && a.effect.target;
		return a.playState === 'running' && t && (t === e || t.contains(e)) &&
			Number.isFinite(a.effect.getComputedTiming().endTime);
	});
	return {n: 1, x: x, y: y, moving: moving};
}`

	// jsFetchText fetches a URL with the page's cookies and gives its
	// status and text (at most 1 MiB of it).
	jsFetchText = `async function(u){
	try {
		const r = await fetch(u, {credentials: 'same-origin', cache: 'no-store', redirect: 'manual'});
		if (r.type === 'opaqueredirect') return {status: 302, body: ''};
		const t = await r.text();
		return {status: r.status, body: t.slice(0, 1048576)};
	} catch (e) {
		return {status: 0, body: '', err: String(e)};
	}
}`

	// jsLandMark marks every element matching one of sels in a WeakSet
	// held by this isolated world's global, which page scripts cannot
	// reach; token names the marks of one click, so marks of a world that
	// was replaced are never mistaken for none. It returns the first
	// selector that is not valid CSS, marking nothing then.
	jsLandMark = `function(sels, token){
	const m = new WeakSet();
	for (const sel of sels) {
		try { __browseropQuery(document, sel); } catch (e) { return {sel: sel}; }
	}
	for (const sel of sels) for (const e of __browseropQuery(document, sel)) m.add(e);
	globalThis.__browseropLanding = {token: token, marks: m};
	return {sel: ''};
}`

	// jsCountNew counts the visible elements matching sel that were not
	// marked by token's click, and gives their texts; token "" counts
	// every visible match (a new document). Without the marks of token it
	// reports them lost.
	jsCountNew = `function(sel, token){
	let marks = null;
	if (token) { // an empty string arrives as undefined
		const s = globalThis.__browseropLanding;
		if (!s || s.token !== token) return {n: 0, texts: [], lost: true};
		marks = s.marks;
	}
	const texts = [];
	for (const e of __browseropQuery(document, sel)) {
		if (marks && marks.has(e)) continue;
		const r = e.getBoundingClientRect(), st = getComputedStyle(e);
		if (r.width > 0 && r.height > 0 && st.visibility !== 'hidden' && st.display !== 'none') texts.push(e.innerText);
	}
	return {n: texts.length, texts: texts, lost: false};
}`

	// jsLandElement looks for a visible element matching sel that was not
	// marked. Without the marks of token (the world was replaced) nothing
	// is found.
	jsLandElement = `function(sel, token){
	const s = globalThis.__browseropLanding;
	if (!s || s.token !== token) return {found: false, lost: true};
	for (const e of __browseropQuery(document, sel)) {
		if (s.marks.has(e)) continue;
		const r = e.getBoundingClientRect(), st = getComputedStyle(e);
		if (r.width > 0 && r.height > 0 && st.visibility !== 'hidden' && st.display !== 'none') return {found: true};
	}
	return {found: false};
}`

	jsLocation = `function(){return location.href}`

	jsNavStatus = `function(){
	const e = performance.getEntriesByType('navigation')[0];
	return e && e.responseStatus ? e.responseStatus : 0;
}`

	// jsExtract reads fields of every item: for each field, the first
	// match of its selector inside the item (or the item itself), its text
	// or attribute, and how many elements matched; with all, every
	// match's value too.
	jsExtract = `function(itemSel, fields){
	return Array.from(__browseropQuery(document, itemSel), it => {
		const o = {};
		for (const f of fields) {
			const l = f.sel ? __browseropQuery(it, f.sel) : [it];
			let v = null;
			if (l.length > 0) v = f.attr ? l[0].getAttribute(f.attr) : l[0].textContent;
			o[f.name] = {n: l.length, v: v};
			if (f.all) o[f.name].vs = Array.from(l, e => f.attr ? e.getAttribute(f.attr) : e.textContent);
		}
		return o;
	});
}`
)
