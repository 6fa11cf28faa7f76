package mcptools

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// An answer past its bound is cut off: the handler is aborted (the
// connection closes) instead of writing on.
func TestBoundedWriterAborts(t *testing.T) {
	rec := httptest.NewRecorder()
	w := &boundedWriter{ResponseWriter: rec, left: 10}
	if _, err := w.Write([]byte("0123456789")); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if p := recover(); p != http.ErrAbortHandler {
			t.Fatalf("got %v, want http.ErrAbortHandler", p)
		}
		if rec.Body.String() != "0123456789" {
			t.Fatalf("wrote %q past the bound", rec.Body.String())
		}
	}()
	w.Write([]byte("x"))
	t.Fatal("a write past the bound went through")
}
