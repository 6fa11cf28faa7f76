package sites_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/sites"
)

// paragraphsPage is a composer whose editor, like Lexical, handles typing
// itself: an inserted text goes into the paragraph at the caret as it is
// (its newlines literal, shown by pre-wrap as line breaks); Enter makes a
// new paragraph, or, with split false, only adds a newline to the
// paragraph. Its button would post the editor's paragraphs.
func paragraphsPage(split bool) string {
	s := "false"
	if split {
		s = "true"
	}
	return `<!doctype html><html><body><span id="whoami" data-handle="alice">alice</span>
<div id="ed" contenteditable="true" style="white-space:pre-wrap"><p><br></p></div>
<button id="go" onclick="fetch('/api/post', {method: 'POST', body: document.getElementById('ed').innerHTML})">Post</button>
<script>
const root = document.getElementById('ed'), split = ` + s + `;
let paras = [''], caret = {p: 0, o: 0};
const render = () => {
	root.textContent = '';
	for (const t of paras) {
		const p = document.createElement('p');
		p.appendChild(t === '' ? document.createElement('br') : document.createTextNode(t));
		root.appendChild(p);
	}
	const p = root.children[caret.p], r = document.createRange();
	if (paras[caret.p] === '') r.setStart(p, 0); else r.setStart(p.firstChild, caret.o);
	getSelection().removeAllRanges();
	getSelection().addRange(r);
};
const point = (node, off) => {
	if (node === root) return off >= root.children.length ? {p: paras.length - 1, o: paras[paras.length - 1].length} : {p: off, o: 0};
	let el = node.nodeType === 3 ? node.parentNode : node;
	while (el.parentNode !== root) el = el.parentNode;
	const p = Array.prototype.indexOf.call(root.children, el);
	return {p: p, o: node.nodeType === 3 ? off : (off > 0 ? paras[p].length : 0)};
};
root.addEventListener('beforeinput', e => {
	e.preventDefault();
	const r = getSelection().getRangeAt(0);
	const a = point(r.startContainer, r.startOffset), b = point(r.endContainer, r.endOffset);
	paras.splice(a.p, b.p - a.p + 1, paras[a.p].slice(0, a.o) + paras[b.p].slice(b.o));
	caret = a;
	const t = paras[caret.p];
	if (e.inputType === 'insertText') {
		paras[caret.p] = t.slice(0, caret.o) + e.data + t.slice(caret.o);
		caret.o += e.data.length;
	} else if (e.inputType === 'insertParagraph' && split) {
		paras.splice(caret.p, 1, t.slice(0, caret.o), t.slice(caret.o));
		caret = {p: caret.p + 1, o: 0};
	} else if (e.inputType === 'insertParagraph') {
		paras[caret.p] = t.slice(0, caret.o) + '\n' + t.slice(caret.o);
		caret.o++;
	}
	render();
});
</script></body></html>`
}

// paragraphsAdapter is a mini adapter whose one field is the editor, with
// its lines key (none when "").
func paragraphsAdapter(t *testing.T, origin, lines string) *sites.Declarative {
	t.Helper()
	field := `    fill: {selector: "#ed"}`
	if lines != "" {
		field = `    fill: {selector: "#ed", lines: ` + lines + `}`
	}
	y := miniYAML(origin, "/compose", "", "")
	require.Contains(t, y, `    fill: {selector: "textarea#t"}`, "fixture drifted")
	return miniSite(t, strings.Replace(y, `    fill: {selector: "textarea#t"}`, field, 1))
}

// TestFillLinesEnter: a body of three paragraphs, typed into an editor
// that makes a paragraph only of Enter, is three paragraphs and reads back
// as meant; an editor that keeps the lines in one paragraph (inserted as
// one input, or not splitting on Enter) reads back as a mismatch, naming
// the cause: the fill fails and nothing is posted.
func TestFillLinesEnter(t *testing.T) {
	text := "First paragraph.\nSecond paragraph.\n\nFourth, after an empty one."
	in := sites.Intent{Kind: kind.Post, Actor: "alice", Text: text}

	t.Run("Paragraphs", func(t *testing.T) {
		m := newMini(t, map[string]string{"/compose": paragraphsPage(true)}, 201, "")
		d := paragraphsAdapter(t, m.URL, "enter")
		ctx, tab := miniTab(t)
		_, err := d.Open(ctx, tab, in)
		require.NoError(t, err)
		got, err := d.Fill(ctx, tab, in)
		require.NoError(t, err)
		require.Equal(t, text, got)
		paras, err := tab.Texts(ctx, "#ed > p")
		require.NoError(t, err)
		require.Equal(t, []string{"First paragraph.", "Second paragraph.", "", "Fourth, after an empty one."}, paras)
	})
	for _, tc := range []struct {
		name  string
		split bool
		lines string
		hint  string
	}{
		{"InsertedInOneParagraph", true, "", "needs lines: enter"},
		{"EditorDoesNotSplitOnEnter", false, "enter", "kept the text's lines in one paragraph"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMini(t, map[string]string{"/compose": paragraphsPage(tc.split)}, 201, "")
			d := paragraphsAdapter(t, m.URL, tc.lines)
			ctx, tab := miniTab(t)
			_, err := d.Open(ctx, tab, in)
			require.NoError(t, err)
			_, err = d.Fill(ctx, tab, in)
			require.ErrorIs(t, err, sites.ErrReadBackMismatch)
			require.ErrorContains(t, err, tc.hint)
			require.NotErrorIs(t, err, sites.ErrOutcomeUnknown)
			n, err := tab.Count(ctx, "#ed > p")
			require.NoError(t, err)
			require.Equal(t, 1, n, "one paragraph holds the lines")
			require.Zero(t, m.posts.Load(), "nothing was posted")
		})
	}
}

// TestLinesKeyRefused: lines is insert or enter, refused otherwise at
// load, naming the key.
func TestLinesKeyRefused(t *testing.T) {
	y := strings.Replace(miniYAML("http://127.0.0.1:1", "/compose", "", ""), `    fill: {selector: "textarea#t"}`, "    fill:\n      selector: \"#ed\"\n      lines: paragraphs", 1)
	_, err := sites.Parse("mini.yaml", []byte(y))
	require.ErrorIs(t, err, sites.ErrInvalid)
	require.ErrorContains(t, err, `mini.yaml: line 8: actions.post.fill.lines: "paragraphs": use insert (the default) or enter`)
	for _, ok := range []string{"insert", "enter"} {
		y := strings.Replace(miniYAML("http://127.0.0.1:1", "/compose", "", ""), `    fill: {selector: "textarea#t"}`, `    fill: {selector: "#ed", lines: `+ok+`}`, 1)
		_, err := sites.Parse("mini.yaml", []byte(y))
		require.NoError(t, err, ok)
	}
}
