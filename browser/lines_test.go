package browser_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/browser"
)

// LinesEditorsHTML has editors that handle typing themselves, as modern
// rich editors do, each with a model of paragraphs it renders as <p>
// elements:
//   - #lex, like Lexical: an inserted text goes into the paragraph at the
//     caret as it is, its newlines kept as literal text (pre-wrap shows
//     them as line breaks); only Enter (insertParagraph) makes a new
//     paragraph.
//   - #nosplit: the same, except that Enter too only adds a newline to the
//     paragraph: it never makes one.
//   - #blocks, like the WordPress block editor: each paragraph is its own
//     contenteditable p.blk; Enter makes the next block and moves the
//     caret into it a moment later (after a render), an inserted newline
//     stays literal text in the block.
//   - #send, a composer that sends on Enter and moves the focus to #other.
const linesEditorsHTML = `<!doctype html><html><head><title>lines</title>
<style>#lex,#nosplit,.blk{white-space:pre-wrap}</style></head><body>
<div id="lex" contenteditable="true"></div>
<div id="nosplit" contenteditable="true"></div>
<div id="blocks"><p class="blk" contenteditable="true">old block</p></div>
<div id="send" contenteditable="true"></div>
<input id="other">
<p id="sent"></p>
<script>
function editor(root, split) {
	let paras = ['old one', 'old two'];
	let caret = {p: 0, o: 0};
	const render = () => {
		root.textContent = '';
		for (const t of paras) {
			const p = document.createElement('p');
			p.appendChild(t === '' ? document.createElement('br') : document.createTextNode(t));
			root.appendChild(p);
		}
		if (document.activeElement !== root) return;
		const p = root.children[caret.p], r = document.createRange();
		if (paras[caret.p] === '') r.setStart(p, 0); else r.setStart(p.firstChild, caret.o);
		r.collapse(true);
		getSelection().removeAllRanges();
		getSelection().addRange(r);
	};
	const point = (node, off) => {
		if (node === root) {
			if (off >= root.children.length) return {p: paras.length - 1, o: paras[paras.length - 1].length};
			return {p: off, o: 0};
		}
		let el = node.nodeType === 3 ? node.parentNode : node;
		while (el.parentNode !== root) el = el.parentNode;
		const p = Array.prototype.indexOf.call(root.children, el);
		return {p: p, o: node.nodeType === 3 ? off : (off > 0 ? paras[p].length : 0)};
	};
	root.addEventListener('beforeinput', e => {
		e.preventDefault();
		const r = getSelection().getRangeAt(0), collapsed = r.collapsed;
		const a = point(r.startContainer, r.startOffset), b = point(r.endContainer, r.endOffset);
		paras.splice(a.p, b.p - a.p + 1, paras[a.p].slice(0, a.o) + paras[b.p].slice(b.o));
		caret = a;
		const t = paras[caret.p];
		switch (e.inputType) {
		case 'insertText':
			paras[caret.p] = t.slice(0, caret.o) + e.data + t.slice(caret.o);
			caret.o += e.data.length;
			break;
		case 'insertParagraph':
			if (split) {
				paras.splice(caret.p, 1, t.slice(0, caret.o), t.slice(caret.o));
				caret = {p: caret.p + 1, o: 0};
			} else {
				paras[caret.p] = t.slice(0, caret.o) + '\n' + t.slice(caret.o);
				caret.o++;
			}
			break;
		case 'deleteContentBackward':
			if (collapsed && caret.o > 0) {
				paras[caret.p] = t.slice(0, caret.o - 1) + t.slice(caret.o);
				caret.o--;
			}
			break;
		}
		render();
	});
	render();
}
editor(document.getElementById('lex'), true);
editor(document.getElementById('nosplit'), false);

const caretAt = (node, off) => {
	const r = document.createRange();
	r.setStart(node, off);
	r.collapse(true);
	getSelection().removeAllRanges();
	getSelection().addRange(r);
};
document.getElementById('blocks').addEventListener('beforeinput', e => {
	if (e.inputType !== 'insertText') return;
	e.preventDefault();
	const r = getSelection().getRangeAt(0);
	r.deleteContents();
	const n = document.createTextNode(e.data);
	r.insertNode(n);
	e.target.closest('.blk').normalize();
	caretAt(e.target.closest('.blk'), e.target.closest('.blk').childNodes.length);
});
document.getElementById('blocks').addEventListener('keydown', e => {
	if (e.key !== 'Enter') return;
	e.preventDefault();
	const blk = e.target.closest('.blk');
	const r = getSelection().getRangeAt(0);
	const tail = document.createRange();
	tail.setStart(r.startContainer, r.startOffset);
	tail.setEndAfter(blk.lastChild || blk);
	const rest = tail.extractContents().textContent;
	const next = document.createElement('p');
	next.className = 'blk';
	next.contentEditable = 'true';
	next.textContent = rest;
	blk.after(next);
	setTimeout(() => { next.focus(); caretAt(next, 0); }, 10);
});

document.getElementById('send').addEventListener('keydown', e => {
	if (e.key !== 'Enter') return;
	e.preventDefault();
	document.getElementById('sent').textContent = 'sent: ' + e.target.textContent;
	e.target.textContent = '';
	document.getElementById('other').focus();
});
</script>
</body></html>`

func linesSite(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, linesEditorsHTML)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestFillEnterLines: with EnterLines, a text's lines are typed with Enter
// between them, so an editor that makes a paragraph only of the key (and
// keeps an inserted newline as text) holds one paragraph per line, each
// its own element or not; a blank line is an empty paragraph. Lines an
// editor kept in one paragraph read back with U+2028 between them, never
// as the paragraphs meant.
func TestFillEnterLines(t *testing.T) {
	_, tab := newTab(t, linesSite(t))
	ctx := ctxT(t)
	three := "First paragraph.\nSecond – ünïcödé 🙂\nThird."

	t.Run("Paragraphs", func(t *testing.T) {
		got, err := tab.Fill(ctx, "#lex", three, browser.EnterLines())
		require.NoError(t, err)
		require.Equal(t, three, got)
		paras, err := tab.Texts(ctx, "#lex > p")
		require.NoError(t, err)
		require.Equal(t, []string{"First paragraph.", "Second – ünïcödé 🙂", "Third."}, paras, "three paragraphs, the old ones replaced")
		v, err := tab.Value(ctx, "#lex")
		require.NoError(t, err)
		require.Equal(t, three, v)
	})
	t.Run("BlankLineIsAnEmptyParagraph", func(t *testing.T) {
		text := "One\n\nTwo"
		got, err := tab.Fill(ctx, "#lex", text, browser.EnterLines())
		require.NoError(t, err)
		require.Equal(t, text, got)
		paras, err := tab.Texts(ctx, "#lex > p")
		require.NoError(t, err)
		require.Equal(t, []string{"One", "", "Two"}, paras)
		got, err = tab.Fill(ctx, "#lex", "", browser.EnterLines())
		require.NoError(t, err)
		require.Equal(t, "", got)
	})
	t.Run("InsertedIsOneParagraph", func(t *testing.T) {
		// Inserted as one input, the editor keeps the newlines as text
		// in one paragraph: that reads back as lines of one paragraph.
		got, err := tab.Fill(ctx, "#lex", three)
		require.NoError(t, err)
		require.Equal(t, "First paragraph.\u2028Second – ünïcödé 🙂\u2028Third.", got)
		n, err := tab.Count(ctx, "#lex > p")
		require.NoError(t, err)
		require.Equal(t, 1, n)
	})
	t.Run("EditorDoesNotSplit", func(t *testing.T) {
		got, err := tab.Fill(ctx, "#nosplit", "One\n\nTwo", browser.EnterLines())
		require.NoError(t, err)
		require.Equal(t, "One\u2028\u2028Two", got, "one paragraph with line breaks is not three paragraphs")
		n, err := tab.Count(ctx, "#nosplit > p")
		require.NoError(t, err)
		require.Equal(t, 1, n)
	})
	t.Run("BlockPerParagraph", func(t *testing.T) {
		got, err := tab.Fill(ctx, "#blocks .blk", three, browser.EnterLines())
		require.NoError(t, err)
		require.Equal(t, three, got)
		blocks, err := tab.Texts(ctx, "#blocks > p.blk")
		require.NoError(t, err)
		require.Equal(t, []string{"First paragraph.", "Second – ünïcödé 🙂", "Third."}, blocks, "a block per paragraph, the caret followed into each")
		v, err := tab.Value(ctx, "#blocks .blk", browser.EnterLines())
		require.NoError(t, err)
		require.Equal(t, three, v, "read back from every block, in order")
		_, err = tab.Value(ctx, "#blocks .blk")
		require.ErrorIs(t, err, browser.ErrSelectorAmbiguous, "without EnterLines a selector names one element")
		_, err = tab.Fill(ctx, "#blocks .blk", "again", browser.EnterLines())
		require.ErrorIs(t, err, browser.ErrSelectorAmbiguous, "typing goes into one element")
	})
	t.Run("StopsWhenTheFocusLeaves", func(t *testing.T) {
		got, err := tab.Fill(ctx, "#send", "hello\nworld", browser.EnterLines())
		require.NoError(t, err)
		require.Equal(t, "", got, "the composer took the first line away")
		other, err := tab.Value(ctx, "#other")
		require.NoError(t, err)
		require.Equal(t, "", other, "the next line is not typed where the focus went")
	})
	t.Run("TextareaKeepsNewlines", func(t *testing.T) {
		_, err := tab.Navigate(ctx, newSite(t).URL+"/page")
		require.NoError(t, err)
		text := "wiki paragraph\n\nanother\nline"
		got, err := tab.Fill(ctx, "#t", text, browser.EnterLines())
		require.NoError(t, err)
		require.Equal(t, text, got)
	})
}

// TestValueLineBreaks: a contenteditable element reads back a line per
// paragraph joined by "\n", and a line break inside a paragraph (a <br>, a
// newline kept by pre-wrap) as U+2028; a plain-text editor has lines
// only.
func TestValueLineBreaks(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `<!doctype html><body>
<div id="p" contenteditable="true"><p>a</p><p><br></p><p>b</p></div>
<div id="br" contenteditable="true"><p>a<br>b</p><p>c<br></p><p>d</p></div>
<div id="pre" contenteditable="true" style="white-space:pre-wrap"><p>a

b</p></div>
<div id="plain" contenteditable="plaintext-only" style="white-space:pre-wrap">a
b</div>
</body>`)
	}))
	t.Cleanup(srv.Close)
	_, tab := newTab(t, srv.URL)
	ctx := ctxT(t)
	for sel, want := range map[string]string{
		"#p":     "a\n\nb",
		"#br":    "a\u2028b\nc\nd",
		"#pre":   "a\u2028\u2028b",
		"#plain": "a\nb",
	} {
		got, err := tab.Value(ctx, sel)
		require.NoError(t, err)
		require.Equal(t, want, got, sel)
	}
	got, err := tab.Fill(ctx, "#plain", "x\n\ny", browser.EnterLines())
	require.NoError(t, err)
	require.Equal(t, "x\n\ny", got, "a plain-text editor takes newlines as a textarea does")
}
