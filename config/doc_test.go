package config

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestConfigFieldsSayDefault: every setting of the schema (config.go) says
// its default in its doc comment, as the example file does in its values;
// a field that is a section of its own says it on its fields.
func TestConfigFieldsSayDefault(t *testing.T) {
	t.Parallel()
	f, err := parser.ParseFile(token.NewFileSet(), "config.go", nil, parser.ParseComments)
	require.NoError(t, err)
	fields := 0
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok {
			return true
		}
		st, ok := ts.Type.(*ast.StructType)
		if !ok {
			return false
		}
		for _, fd := range st.Fields.List {
			if id, ok := fd.Type.(*ast.Ident); ok && strings.HasSuffix(id.Name, "Config") {
				continue // a section: its own fields say their defaults
			}
			fields++
			require.NotNil(t, fd.Doc, "%s.%s has no doc comment", ts.Name.Name, fd.Names[0].Name)
			require.Contains(t, fd.Doc.Text(), "Default", "%s.%s does not say its default", ts.Name.Name, fd.Names[0].Name)
		}
		return false
	})
	require.Greater(t, fields, 30)
}
