package semconv

import (
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"go/types"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNamesAreDistinctAndWellFormed reads every constant of attributes.go:
// two names with one value would make the mapping read one attribute for
// two fields, and a malformed name cannot be queried the way users expect
// (lowercase, dot-separated, snake_case segments, as OTel names are).
func TestNamesAreDistinctAndWellFormed(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "attributes.go", nil, 0)
	require.NoError(t, err)
	info := &types.Info{Defs: map[*ast.Ident]types.Object{}}
	_, err = (&types.Config{}).Check("semconv", fset, []*ast.File{f}, info)
	require.NoError(t, err)

	wellFormed := regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$`)
	byValue := map[string]string{}
	for id, obj := range info.Defs {
		c, ok := obj.(*types.Const)
		if !ok || c.Parent() != c.Pkg().Scope() {
			continue
		}
		v := constant.StringVal(c.Val())
		if id.Name == "SpanNamePrefix" {
			assert.Equal(t, "sandbox.", v)
			continue
		}
		assert.Regexp(t, wellFormed, v, id.Name)
		if other, dup := byValue[v]; dup {
			t.Errorf("%s and %s are both %q", other, id.Name, v)
		}
		byValue[v] = id.Name
	}
	// The walk found the constants at all.
	assert.Equal(t, "AttrOperation", byValue["sandbox.operation"])
	assert.Equal(t, "EventSessionFinish", byValue["sandbox.session.finish"])
}
