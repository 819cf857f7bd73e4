package confcheck

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/confmap"
)

// UnknownKeys names, by its path, every key of conf that the config cfg
// points to has no field for, in the order of the paths (a list element's
// index is a segment: witnesses::1::public_key). It returns nil when every
// key has a place. It reads the mapstructure tags of cfg's type, so it
// needs no decoding and does not depend on the decoder's messages.
func UnknownKeys(conf *confmap.Conf, cfg any) error {
	return errors.Join(unknownErrors(unknownPaths(conf.ToStringMap(), reflect.TypeOf(cfg)))...)
}

// unknownErrors is one error per unknown key, named by its path.
func unknownErrors(paths [][]string) []error {
	errs := make([]error, 0, len(paths)+1)
	for _, p := range paths {
		errs = append(errs, fmt.Errorf("%s: unknown key", joinPath(p)))
	}
	return errs
}

// unknownPaths walks raw, a config as confmap gives it (maps of strings,
// lists, scalars), beside t, the type it decodes into, and returns the path
// of each key t has no field for. Where t cannot say which keys it takes
// (an interface, a type that decodes itself without mapstructure tags),
// the walk stops and the decoder's own check stands.
func unknownPaths(raw any, t reflect.Type) [][]string {
	var out [][]string
	walk(nil, raw, t, func(path []string, k string, _ any, keys structKeys) {
		if _, known := keys.fields[k]; !known && !keys.remain {
			out = append(out, with(path, k))
		}
	})
	return out
}

// splitPaths walks raw beside t like unknownPaths and returns the path of
// each list tagged `confcheck:"whole"` written as one string with a comma,
// which the decoder would split there.
func splitPaths(raw any, t reflect.Type) [][]string {
	var out [][]string
	walk(nil, raw, t, func(path []string, k string, v any, keys structKeys) {
		if s, isString := v.(string); isString && keys.whole[k] && strings.Contains(s, ",") {
			out = append(out, with(path, k))
		}
	})
	return out
}

// visitor sees each key k of a struct's map at path, with its value v and
// the keys the struct takes.
type visitor func(path []string, k string, v any, keys structKeys)

func walk(path []string, raw any, t reflect.Type, visit visitor) {
	t = deref(t)
	if inner, ok := optionalValue(t); ok {
		walk(path, withoutEnabled(raw), inner, visit)
		return
	}
	// The decoder hands only a map to a type's own Unmarshal; a list
	// (headers as name/value pairs) is decoded by the type's fields.
	if _, isMap := raw.(map[string]any); isMap && decodesItself(t) && !tagMapped(t) {
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		if m, ok := raw.(map[string]any); ok && tagMapped(t) {
			walkStruct(path, m, keysOf(t), visit)
		}
	case reflect.Slice, reflect.Array:
		list, _ := raw.([]any)
		for i, elem := range list {
			walk(with(path, strconv.Itoa(i)), elem, t.Elem(), visit)
		}
	case reflect.Map:
		m, _ := raw.(map[string]any)
		for _, k := range slices.Sorted(maps.Keys(m)) {
			walk(with(path, k), m[k], t.Elem(), visit)
		}
	}
}

func walkStruct(path []string, m map[string]any, keys structKeys, visit visitor) {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		visit(path, k, m[k], keys)
		if ft, known := keys.fields[k]; known {
			walk(with(path, k), m[k], ft, visit)
		}
	}
}

// with is path extended by one segment, never sharing path's array.
func with(path []string, segment string) []string {
	return append(slices.Clip(path), segment)
}

func joinPath(path []string) string { return strings.Join(path, confmap.KeyDelimiter) }
