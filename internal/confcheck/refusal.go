package confcheck

import (
	"errors"
	"reflect"
	"slices"
	"strconv"

	"go.opentelemetry.io/collector/confmap"
)

// refusal is what an operator reads when the decoder refused conf: each
// unknown key by its path, then what the decoder refuses in the rest of
// conf (a value of the wrong type). With no unknown key found it is the
// decoder's own error. Either way Go types are named as YAML kinds.
func refusal(conf *confmap.Conf, cfg any, decodeErr error) error {
	raw := conf.ToStringMap()
	paths := unknownPaths(raw, reflect.TypeOf(cfg))
	if len(paths) == 0 {
		return plainTypes(cfg, decodeErr)
	}
	errs := unknownErrors(paths)
	for _, p := range paths {
		raw = withoutPath(raw, p).(map[string]any)
	}
	if err := decodePlain(raw, cfg); err != nil {
		errs = append(errs, plainTypes(cfg, err))
	}
	return errors.Join(errs...)
}

// decodePlain decodes raw into a new value of cfg's struct type without
// its methods, so that decoding does not call cfg's own Unmarshal (which
// would come back here).
func decodePlain(raw map[string]any, cfg any) error {
	t := reflect.TypeOf(cfg)
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil
	}
	return confmap.NewFromStringMap(raw).Unmarshal(reflect.New(withoutMethods(t.Elem())).Interface())
}

// withoutMethods is a struct type with t's exported fields and tags but
// none of its methods. An embedded field becomes a named one: the decoder
// squashes by tag alone, and a struct built at run time cannot carry the
// methods an embedded field would promote.
func withoutMethods(t reflect.Type) reflect.Type {
	var fields []reflect.StructField
	for i := range t.NumField() {
		if f := t.Field(i); f.IsExported() {
			fields = append(fields, reflect.StructField{Name: f.Name, Type: f.Type, Tag: f.Tag})
		}
	}
	return reflect.StructOf(fields)
}

// withoutPath copies v, a config map or list, without the key at path;
// what path does not reach is kept as is.
func withoutPath(v any, path []string) any {
	switch c := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(c))
		for k, e := range c {
			switch {
			case k != path[0]:
				out[k] = e
			case len(path) > 1:
				out[k] = withoutPath(e, path[1:])
			}
		}
		return out
	case []any:
		i, err := strconv.Atoi(path[0])
		if err != nil || i < 0 || i >= len(c) || len(path) == 1 {
			return v
		}
		out := slices.Clone(c)
		out[i] = withoutPath(c[i], path[1:])
		return out
	}
	return v
}
