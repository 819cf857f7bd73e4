package confcheck

import (
	"reflect"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/confmap"
)

// structKeys are the keys a struct type takes: its fields by tag name,
// squashed structs' fields included, whether a ",remain" field takes
// every other key, and the keys of lists tagged `confcheck:"whole"`.
type structKeys struct {
	fields map[string]reflect.Type
	remain bool
	whole  map[string]bool
}

// keysOf reads t's mapstructure tags as the collector's decoder does:
// names match exactly, an untagged field goes by its Go name, an
// unexported field takes no key, and only a ",squash" tag squashes.
func keysOf(t reflect.Type) structKeys {
	keys := structKeys{fields: map[string]reflect.Type{}, whole: map[string]bool{}}
	addKeys(t, &keys)
	return keys
}

func addKeys(t reflect.Type, keys *structKeys) {
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("mapstructure"), ",")
		switch option := firstOf(opts, "squash", "remain"); {
		case option == "squash" && deref(f.Type).Kind() == reflect.Struct:
			addKeys(deref(f.Type), keys)
		case option == "remain":
			keys.remain = true
		case name == "":
			keys.fields[f.Name] = f.Type
		default:
			keys.fields[name] = f.Type
			keys.whole[name] = f.Tag.Get("confcheck") == "whole"
		}
	}
}

// firstOf is the first of the comma-separated options that is one of
// wanted, or "".
func firstOf(opts string, wanted ...string) string {
	for opt := range strings.SplitSeq(opts, ",") {
		if slices.Contains(wanted, opt) {
			return opt
		}
	}
	return ""
}

// tagMapped reports whether t is a struct with a mapstructure tag, so its
// keys can be read from its fields.
func tagMapped(t reflect.Type) bool {
	if t.Kind() != reflect.Struct {
		return false
	}
	for i := range t.NumField() {
		if f := t.Field(i); f.IsExported() && f.Tag.Get("mapstructure") != "" {
			return true
		}
	}
	return false
}

// decodesItself reports whether t has an Unmarshal method the decoder
// calls in its place. Such a type may take keys its fields do not name (a
// map of headers), so it is walked only when its fields carry tags (a
// component's Config, exporterhelper's queue).
func decodesItself(t reflect.Type) bool {
	return reflect.PointerTo(t).Implements(reflect.TypeFor[confmap.Unmarshaler]())
}

// optionalValue is the type an Optional[T] holds, T. An Optional section
// also takes the key "enabled".
func optionalValue(t reflect.Type) (reflect.Type, bool) {
	optionalPkg := reflect.TypeFor[configoptional.Optional[struct{}]]().PkgPath()
	if t.PkgPath() != optionalPkg || !strings.HasPrefix(t.Name(), "Optional[") {
		return nil, false
	}
	f, ok := t.FieldByName("value")
	if !ok {
		return nil, false
	}
	return f.Type, true
}

// withoutEnabled is raw without an Optional section's "enabled" key.
func withoutEnabled(raw any) any {
	m, ok := raw.(map[string]any)
	if _, has := m["enabled"]; !ok || !has {
		return raw
	}
	out := make(map[string]any, len(m)-1)
	for k, v := range m {
		if k != "enabled" {
			out[k] = v
		}
	}
	return out
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}
