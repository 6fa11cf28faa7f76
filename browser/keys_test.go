package browser_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/browser"
)

// keysHTML has a tag field that commits a tag on Enter (its keydown
// handler, as a token field's), a field of a form that Enter would submit
// to /publish, and a button that takes no keys.
const keysHTML = `<!doctype html><html><head><title>keys</title></head><body>
<div id="tags"><input id="tag"></div>
<ul id="tokens"></ul>
<form method="post" action="/publish"><input id="title" name="title"><button>Publish</button></form>
<button id="plain">plain</button>
<script>
document.getElementById('tag').addEventListener('keydown', e => {
	if (e.key !== 'Enter' && e.key !== ',') return;
	e.preventDefault();
	const li = document.createElement('li');
	li.textContent = e.target.value;
	document.getElementById('tokens').appendChild(li);
	e.target.value = '';
});
</script></body></html>`

// TestPress: a key is pressed as a keyboard sends it, in the element that
// holds the focus: Enter and "," commit a tag the page's handler reads. A
// key that would submit a form is held back and fails with ErrKeySubmits:
// nothing reaches the site. An element without the focus is not pressed
// in, and a key browserop does not press is refused.
func TestPress(t *testing.T) {
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			posts.Add(1)
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, keysHTML)
	}))
	t.Cleanup(srv.Close)
	_, tab := newTab(t, srv.URL)
	ctx := ctxT(t)

	for _, key := range []string{"Enter", ","} {
		_, err := tab.Fill(ctx, "#tag", "go "+key)
		require.NoError(t, err)
		require.NoError(t, tab.Press(ctx, "#tag", key))
	}
	tokens, err := tab.Texts(ctx, "#tokens li")
	require.NoError(t, err)
	require.Equal(t, []string{"go Enter", "go ,"}, tokens, "the page's handler saw each key")

	_, err = tab.Fill(ctx, "#title", "A title")
	require.NoError(t, err)
	err = tab.Press(ctx, "#title", "Enter")
	require.ErrorIs(t, err, browser.ErrKeySubmits)
	time.Sleep(500 * time.Millisecond)
	require.Zero(t, posts.Load(), "the form was not submitted")
	u, err := tab.URL(ctx)
	require.NoError(t, err)
	require.Equal(t, srv.URL+"/", u, "the page stayed")

	err = tab.Press(ctx, "#plain", "Enter")
	require.ErrorIs(t, err, browser.ErrNotClickable, "#plain does not hold the focus")
	require.ErrorContains(t, tab.Press(ctx, "#tag", "Space"), "not a key browserop presses")
	require.Zero(t, posts.Load())
}
