package browser_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/browser"
)

// SetFiles gives a file input its files as a person's choice would: the
// page's change handler reads them, the input may be hidden, and anything
// but one enabled file input is refused before the page sees a thing.
func TestSetFiles(t *testing.T) {
	s := newSite(t)
	_, tab := newTab(t, "")
	ctx := ctxT(t)
	_, err := tab.Navigate(ctx, s.URL+"/files")
	require.NoError(t, err)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.png"), filepath.Join(dir, "b.txt")
	require.NoError(t, os.WriteFile(a, []byte("PNGBYTES-and-more"), 0o600))
	require.NoError(t, os.WriteFile(b, []byte("TEXTBYTES"), 0o600))

	require.NoError(t, tab.SetFiles(ctx, "#pick", []string{a, b}))
	require.Eventually(t, func() bool {
		got, err := tab.Text(ctx, "#got")
		return err == nil && got == "a.png:17:PNGBYTES,b.txt:9:TEXTBYTE"
	}, 10*time.Second, 50*time.Millisecond)

	var se *browser.SelectorError
	err = tab.SetFiles(ctx, "input.many", []string{a})
	require.ErrorAs(t, err, &se)
	require.Equal(t, 2, se.Count)
	require.ErrorIs(t, tab.SetFiles(ctx, "#nothing", []string{a}), browser.ErrNotFound)
	require.ErrorIs(t, tab.SetFiles(ctx, "#off", []string{a}), browser.ErrNotFileInput)
	require.ErrorIs(t, tab.SetFiles(ctx, "#text", []string{a}), browser.ErrNotFileInput)
	require.Error(t, tab.SetFiles(ctx, "#pick", []string{"a.png"}), "a relative path")
	err = tab.SetFiles(ctx, "#pick", []string{filepath.Join(dir, "missing.png")})
	require.True(t, errors.Is(err, os.ErrNotExist), "got %v", err)
	got, err := tab.Text(ctx, "#got")
	require.NoError(t, err)
	require.Equal(t, "a.png:17:PNGBYTES,b.txt:9:TEXTBYTE", got, "a refused call changed nothing")
}

// Extract with All reads every match of a field, in page order, with ""
// for a match without the attribute.
func TestExtractAll(t *testing.T) {
	s := newSite(t)
	_, tab := newTab(t, "")
	ctx := ctxT(t)
	_, err := tab.Navigate(ctx, s.URL+"/files")
	require.NoError(t, err)
	items, err := tab.Extract(ctx, "figure.item", []browser.Field{
		{Name: "src", Selector: "img", Attr: "src", All: true},
		{Name: "alt", Selector: "img", Attr: "alt", All: true},
		{Name: "first", Selector: "img", Attr: "alt"},
	})
	require.NoError(t, err)
	require.Len(t, items, 2)
	require.Equal(t, []string{"/a.png", "/b.jpg"}, items[0]["src"].Values)
	require.Equal(t, []string{"first", ""}, items[0]["alt"].Values)
	require.Equal(t, browser.Found{Value: "first", Count: 2, Present: true}, items[0]["first"])
	require.Empty(t, items[1]["src"].Values)
	require.Equal(t, 0, items[1]["src"].Count)
}
