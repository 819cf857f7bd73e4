package confcheck

import (
	"reflect"
	"regexp"
	"strings"
)

// expectedType finds the type the decoder says a key expected.
var expectedType = regexp.MustCompile(`expected type '([^']+)'`)

// yamlShapes names the decoder's Go types of YAML lists and maps as such,
// and says what a duration is where Go's parser names its package.
var yamlShapes = strings.NewReplacer(
	"type '[]interface {}'", "type 'list'", "type 'map[string]interface {}'", "type 'map'",
	"time: invalid duration", "is not a duration such as 30s, 5m or 2h (or is out of range)",
	"time: unknown unit", "is not a duration such as 30s, 5m or 2h (unknown unit)",
	"time: missing unit in duration", "is not a duration such as 30s, 5m or 2h (no unit)",
)

// plainTypes rewrites the decoder's "expected type 'pkg.Name'" for the
// named types of cfg (a fsync mode, a format) into their kind ("string"):
// an operator writes YAML, and a Go package means nothing there. The
// error still unwraps to the decoder's.
func plainTypes(cfg any, err error) error {
	kinds := map[string]string{}
	namedKinds(reflect.TypeOf(cfg), kinds, map[reflect.Type]bool{})
	msg := expectedType.ReplaceAllStringFunc(err.Error(), func(m string) string {
		name := expectedType.FindStringSubmatch(m)[1]
		if kind, ok := kinds[name]; ok {
			return "expected type '" + kind + "'"
		}
		return m
	})
	msg = yamlShapes.Replace(msg)
	if msg == err.Error() {
		return err
	}
	return &rewritten{msg: msg, err: err}
}

// namedKinds records, for every named type of a basic kind reachable from
// t (through fields, pointers, slices, maps and generic holders such as
// configoptional.Optional), its kind by its qualified name.
func namedKinds(t reflect.Type, kinds map[string]string, seen map[reflect.Type]bool) {
	if t == nil || seen[t] {
		return
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		namedKinds(t.Elem(), kinds, seen)
	case reflect.Map:
		namedKinds(t.Key(), kinds, seen)
		namedKinds(t.Elem(), kinds, seen)
	case reflect.Struct:
		for i := range t.NumField() {
			namedKinds(t.Field(i).Type, kinds, seen)
		}
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		if t.PkgPath() != "" {
			kinds[t.String()] = t.Kind().String()
		}
	}
}

type rewritten struct {
	msg string
	err error
}

func (r *rewritten) Error() string { return r.msg }

func (r *rewritten) Unwrap() error { return r.err }
