package confcheck

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"go.opentelemetry.io/collector/confmap"
)

// invalidKeys finds the key names in the decoder's "has invalid keys"
// errors, which name the Go type or section holding them rather than the
// key's path.
var invalidKeys = regexp.MustCompile(`has invalid keys: ([^\n]+)`)

// UnknownKeys turns decodeErr, the decoder's refusal of keys cfg does not
// have, into one error per unknown key, named by its path. It returns nil
// when decodeErr is about something else, or when the unknown keys cannot
// be placed, so the decoder's own error stands.
func UnknownKeys(conf *confmap.Conf, cfg any, decodeErr error) error {
	names := invalidNames(decodeErr)
	t := reflect.TypeOf(cfg)
	if len(names) == 0 || t.Kind() != reflect.Pointer {
		return nil
	}
	plain, ok := withoutMethods(t.Elem())
	if !ok {
		return nil
	}
	refused := func(c *confmap.Conf) int {
		return len(invalidNamesOf(c.Unmarshal(reflect.New(plain).Interface())))
	}
	all := refused(conf)
	raw := conf.ToStringMap()
	var errs []error
	placed := map[string]int{}
	for _, path := range candidates(conf, names) {
		// A path is unknown when the decoder, given conf without it, refuses
		// one key fewer.
		without := confmap.NewFromStringMap(withoutKey(raw, strings.Split(path, confmap.KeyDelimiter)))
		if refused(without) < all {
			errs = append(errs, fmt.Errorf("%s: unknown key", path))
			placed[lastSegment(path)]++
		}
	}
	if len(errs) == 0 {
		return nil
	}
	// Keys inside a list have no path here: named alone, so none is lost.
	for _, n := range invalidNamesOf(decodeErr) {
		if placed[n] > 0 {
			placed[n]--
			continue
		}
		errs = append(errs, fmt.Errorf("unknown key %q", n))
	}
	return errors.Join(errs...)
}

// candidates are the key paths of conf that end in a name the decoder
// refused, shortest first, without repeats.
func candidates(conf *confmap.Conf, names map[string]bool) []string {
	seen := map[string]bool{}
	var out []string
	for _, key := range conf.AllKeys() {
		parts := strings.Split(key, confmap.KeyDelimiter)
		for i, p := range parts {
			path := strings.Join(parts[:i+1], confmap.KeyDelimiter)
			if names[p] && !seen[path] {
				seen[path] = true
				out = append(out, path)
			}
		}
	}
	sort.Strings(out)
	return out
}

// withoutKey copies the nested map m without the key at path.
func withoutKey(m map[string]any, path []string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		switch sub, isMap := v.(map[string]any); {
		case k != path[0]:
			out[k] = v
		case len(path) > 1 && isMap:
			out[k] = withoutKey(sub, path[1:])
		case len(path) > 1:
			out[k] = v
		}
	}
	return out
}

func invalidNames(err error) map[string]bool {
	names := map[string]bool{}
	for _, n := range invalidNamesOf(err) {
		names[n] = true
	}
	return names
}

// withoutMethods is a struct type with t's exported fields and tags but
// none of its methods, so decoding into it does not call t's Unmarshal
// (which would come back here). It refuses a type with embedded fields,
// whose promoted methods a struct built at run time cannot carry.
func withoutMethods(t reflect.Type) (reflect.Type, bool) {
	if t.Kind() != reflect.Struct {
		return nil, false
	}
	var fields []reflect.StructField
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			return nil, false
		}
		if f.IsExported() {
			fields = append(fields, reflect.StructField{Name: f.Name, Type: f.Type, Tag: f.Tag})
		}
	}
	return reflect.StructOf(fields), true
}

// invalidNamesOf lists every key name err's "has invalid keys" parts give,
// repeats included.
func invalidNamesOf(err error) []string {
	if err == nil {
		return nil
	}
	var names []string
	for _, m := range invalidKeys.FindAllStringSubmatch(err.Error(), -1) {
		names = append(names, strings.Split(m[1], ", ")...)
	}
	return names
}

func lastSegment(path string) string {
	parts := strings.Split(path, confmap.KeyDelimiter)
	return parts[len(parts)-1]
}
