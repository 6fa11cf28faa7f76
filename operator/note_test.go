package operator_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/operator"
)

// TestEveryNoteIsDocumented: docs/operator.md names every note an action
// report carries and every count of the summary, each once in the list
// of the summary's counts.
func TestEveryNoteIsDocumented(t *testing.T) {
	raw, err := os.ReadFile("../docs/operator.md")
	require.NoError(t, err)
	doc := string(raw)
	start := strings.Index(doc, "The pass **summary**")
	require.NotEqual(t, -1, start, "docs/operator.md describes the summary")
	end := strings.Index(doc[start:], "\n\n")
	require.NotEqual(t, -1, end)
	summary := doc[start : start+end]
	seen := map[string]bool{}
	for _, n := range operator.Notes {
		require.False(t, seen[string(n)], "note %q listed twice in operator.Notes", n)
		seen[string(n)] = true
		require.Contains(t, summary, "`"+string(n)+"`", "docs/operator.md's summary names the note %q", n)
	}
	for _, c := range operator.Counts {
		require.False(t, seen[string(c)], "count %q is also a note", c)
		seen[string(c)] = true
		require.Contains(t, summary, "`"+string(c)+"`", "docs/operator.md's summary names the count %q", c)
	}
}

// TestNotesListsEveryNote: operator.Notes and operator.Counts hold every
// constant of their type that note.go declares.
func TestNotesListsEveryNote(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "note.go", nil, 0)
	require.NoError(t, err)
	declared := map[string][]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			v := spec.(*ast.ValueSpec)
			typ, ok := v.Type.(*ast.Ident)
			if !ok || len(v.Values) != 1 {
				continue
			}
			lit, ok := v.Values[0].(*ast.BasicLit)
			if !ok {
				continue
			}
			val, err := strconv.Unquote(lit.Value)
			require.NoError(t, err)
			declared[typ.Name] = append(declared[typ.Name], val)
		}
	}
	var notes, counts []string
	for _, n := range operator.Notes {
		notes = append(notes, string(n))
	}
	for _, c := range operator.Counts {
		counts = append(counts, string(c))
	}
	require.NotEmpty(t, declared["Note"])
	require.ElementsMatch(t, declared["Note"], notes)
	require.ElementsMatch(t, declared["Count"], counts)
}
