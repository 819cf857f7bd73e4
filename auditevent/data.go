package auditevent

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// Data is an event's data object held as canonical JSON text: keys sorted
// by code point at every depth, integers exact, floats spelled as Python's
// repr, strings ASCII-escaped. Holding it canonical keeps every value
// lossless (big integers, float versus integer, nulls) and makes encoding a
// copy. Build one with ParseData or MarshalData; the zero value is {}.
type Data struct {
	canon []byte
}

var emptyObject = []byte("{}")

// newData wraps canonical text, storing {} as nil so that equal values
// have one representation.
func newData(canon []byte) Data {
	if len(canon) <= 2 {
		return Data{}
	}
	return Data{canon: canon}
}

// ParseData canonicalizes JSON object text. b is not kept.
func ParseData(b []byte) (Data, error) {
	if isCanonicalObject(b) {
		return newData(bytes.Clone(b)), nil
	}
	return canonicalizeData(b)
}

// ParseDataString is ParseData for text held in a string, such as a span
// attribute. Text that is already canonical (what MarshalData, and so
// sandboxtrace, writes) is validated in one scan and kept without a copy:
// Data never writes to its bytes, and a string's bytes never change.
func ParseDataString(s string) (Data, error) {
	b := unsafe.Slice(unsafe.StringData(s), len(s))
	if isCanonicalObject(b) {
		return newData(b), nil
	}
	return canonicalizeData(b)
}

// ParseDataStringLimit is ParseDataString that stops with a *TooLongError
// once the canonical text would pass limit bytes (0: no limit), before it
// is written: escapes make text up to six times as long.
func ParseDataStringLimit(s string, limit int) (Data, error) {
	b := unsafe.Slice(unsafe.StringData(s), len(s))
	if isCanonicalObject(b) {
		if limit > 0 && len(b) > limit {
			return Data{}, &TooLongError{Limit: limit}
		}
		return newData(b), nil
	}
	return canonicalizeLimit(b, limit)
}

// canonicalizeData rewrites object text in canonical form into a new slice.
func canonicalizeData(b []byte) (Data, error) { return canonicalizeLimit(b, 0) }

// canonicalizeLimit is canonicalizeData writing at most limit bytes.
func canonicalizeLimit(b []byte, limit int) (Data, error) {
	p := parser{buf: b, limit: limit}
	if p.peek() != '{' {
		if _, err := p.canonValue(nil); err != nil {
			return Data{}, err
		}
		return Data{}, errors.New("data must be a JSON object")
	}
	size := len(b)
	if limit > 0 {
		size = min(size, limit)
	}
	out, err := p.canonObject(make([]byte, 0, size))
	if err != nil {
		return Data{}, err
	}
	if err := p.finish(); err != nil {
		return Data{}, err
	}
	// Strings and numbers are counted before they are written; the
	// brackets and separators around them, here.
	if limit > 0 && len(out) > limit {
		return Data{}, &TooLongError{Limit: limit}
	}
	return newData(out), nil
}

// MustParseData is ParseData for literals in tests and examples.
func MustParseData(s string) Data {
	d, err := ParseData([]byte(s))
	if err != nil {
		panic(err)
	}
	return d
}

// Bytes returns the canonical text; the caller must not modify it.
func (d Data) Bytes() []byte {
	if len(d.canon) == 0 {
		return emptyObject
	}
	return d.canon
}

// String returns the canonical text.
func (d Data) String() string { return string(d.Bytes()) }

// IsEmpty reports whether the object has no members.
func (d Data) IsEmpty() bool { return len(d.canon) <= 2 }

// Equal reports whether two data objects are the same JSON value.
func (d Data) Equal(o Data) bool { return bytes.Equal(d.Bytes(), o.Bytes()) }

// MarshalJSON lets Data sit inside structs encoded with encoding/json.
func (d Data) MarshalJSON() ([]byte, error) { return d.Bytes(), nil }

// Lookup returns the canonical text of a top-level member's value.
func (d Data) Lookup(key string) ([]byte, bool) {
	start, end, vstart := d.find(key)
	if start < 0 {
		return nil, false
	}
	_ = end
	p := parser{buf: d.canon, pos: vstart}
	v, err := p.canonValue(nil)
	if err != nil {
		return nil, false
	}
	return v, true
}

// Without returns the object minus the top-level member key. The receiver
// is not modified; when key is absent, d itself is returned.
func (d Data) Without(key string) Data {
	start, end, _ := d.find(key)
	if start < 0 {
		return d
	}
	out := make([]byte, 0, len(d.canon)-(end-start))
	// Drop the member and one adjacent comma.
	switch {
	case d.canon[end] == ',':
		end++
	case d.canon[start-1] == ',':
		start--
	}
	out = append(out, d.canon[:start]...)
	out = append(out, d.canon[end:]...)
	return newData(out)
}

// lenWithout is the length of d.Without(key).Bytes(), counted without
// building it.
func (d Data) lenWithout(key string) int {
	n := len(d.Bytes())
	start, end, _ := d.find(key)
	if start < 0 {
		return n
	}
	n -= end - start
	if d.canon[end] == ',' || d.canon[start-1] == ',' {
		n-- // the adjacent comma goes too
	}
	return max(n, 2) // {} at least
}

// find locates the top-level member named key: the member spans
// canon[start:end] and its value starts at vstart. start is -1 if absent.
func (d Data) find(key string) (start, end, vstart int) {
	if d.IsEmpty() {
		return -1, -1, -1
	}
	p := parser{buf: d.canon, pos: 1}
	for p.pos < len(p.buf) && p.buf[p.pos] != '}' {
		mstart := p.pos
		k, err := p.readString()
		if err != nil {
			return -1, -1, -1
		}
		p.pos++ // ':'
		vs := p.pos
		// Skipped, not copied: the value may be most of a large object.
		if err := p.skipValue(); err != nil {
			return -1, -1, -1
		}
		if string(k) == key {
			return mstart, p.pos, vs
		}
		if p.pos < len(p.buf) && p.buf[p.pos] == ',' {
			p.pos++
		}
	}
	return -1, -1, -1
}

// MarshalData encodes a Go map as canonical data. Go values map to the JSON
// types Python would have: float64 and float32 are floats (30.0 stays
// "30.0"), Go integers and *big.Int are integers, json.Number keeps its
// spelling's type, nil is null, a []byte is the text it holds (as
// pydantic writes bytes; one that is not UTF-8 is an error, as there).
// Other types, and values with a JSON or text form of their own (net.IP,
// uuid.UUID), go through encoding/json.
// Keys are written with each byte that is not UTF-8 as U+FFFD; two keys of
// one map that this makes one are an error.
func MarshalData(v map[string]any) (Data, error) {
	if v == nil {
		return Data{}, nil
	}
	out, err := appendGo(make([]byte, 0, 64), v, 0)
	if err != nil {
		return Data{}, err
	}
	return newData(out), nil
}

func appendGo(dst []byte, v any, depth int) ([]byte, error) {
	if depth > maxDepth {
		return dst, fmt.Errorf("data nests deeper than %d", maxDepth)
	}
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case bool:
		return strconv.AppendBool(dst, x), nil
	case string:
		return appendQuoted(dst, x), nil
	case float64:
		return appendFiniteFloat(dst, x)
	case float32:
		// Spell the float32's shortest decimal, as a Python float of it.
		f, _ := strconv.ParseFloat(strconv.FormatFloat(float64(x), 'g', -1, 32), 64)
		return appendFiniteFloat(dst, f)
	case int:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int8:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int16:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int32:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(dst, x, 10), nil
	case uint:
		return strconv.AppendUint(dst, uint64(x), 10), nil
	case uint8:
		return strconv.AppendUint(dst, uint64(x), 10), nil
	case uint16:
		return strconv.AppendUint(dst, uint64(x), 10), nil
	case uint32:
		return strconv.AppendUint(dst, uint64(x), 10), nil
	case uint64:
		return strconv.AppendUint(dst, x, 10), nil
	case *big.Int:
		if x == nil {
			return append(dst, "null"...), nil
		}
		return x.Append(dst, 10), nil
	case json.Number:
		p := parser{buf: []byte(x)}
		out, err := p.canonNumber(dst)
		if err == nil {
			err = p.finish()
		}
		if err != nil {
			return dst, fmt.Errorf("json.Number %q: %w", string(x), err)
		}
		return out, nil
	case Data:
		return append(dst, x.Bytes()...), nil
	case json.RawMessage:
		p := parser{buf: x}
		out, err := p.canonValue(dst)
		if err == nil {
			err = p.finish()
		}
		return out, err
	case map[string]any:
		keys, err := writtenKeys(x)
		if err != nil {
			return dst, err
		}
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendQuoted(dst, k)
			dst = append(dst, ':')
			var err error
			if dst, err = appendGo(dst, x[k], depth+1); err != nil {
				return dst, fmt.Errorf("%s: %w", k, err)
			}
		}
		return append(dst, '}'), nil
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendGo(dst, e, depth+1); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	}
	return appendReflect(dst, v, depth)
}

// writtenKeys returns m's keys in the order the line writes them: by code
// point once each byte that is not UTF-8 is written U+FFFD. Two keys that
// the replacement makes one are refused: every reader of the line would
// keep only one of their values.
func writtenKeys(m map[string]any) ([]string, error) {
	keys := make([]string, 0, len(m))
	valid := true
	for k := range m {
		keys = append(keys, k)
		valid = valid && utf8.ValidString(k)
	}
	if valid {
		slices.Sort(keys)
		return keys, nil
	}
	written := make(map[string]string, len(keys))
	for _, k := range keys {
		written[k] = writtenText(k)
	}
	slices.SortFunc(keys, func(a, b string) int { return strings.Compare(written[a], written[b]) })
	for i := 1; i < len(keys); i++ {
		if written[keys[i-1]] == written[keys[i]] {
			return nil, fmt.Errorf("keys %q and %q are one key once each byte that is not UTF-8 is written U+FFFD",
				keys[i-1], keys[i])
		}
	}
	return keys, nil
}

// writtenText is s as a line writes it: each byte that is not UTF-8 is
// U+FFFD.
func writtenText(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// appendReflect handles typed slices and string-keyed maps without going
// through encoding/json, so their floats keep Python spelling too.
func appendReflect(dst []byte, v any, depth int) ([]byte, error) {
	switch v.(type) {
	case json.Marshaler, encoding.TextMarshaler:
		// A value that says how it is written (net.IP, uuid.UUID) is
		// written so, not as the bytes or numbers it is made of.
		return appendEncoded(dst, v)
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		if rv.Kind() == reflect.Slice && rv.IsNil() {
			return append(dst, "null"...), nil
		}
		if rv.Kind() == reflect.Slice && rv.Type().Elem().Kind() == reflect.Uint8 {
			// The text the bytes hold, as the reference's pydantic model
			// writes bytes: base64 would hide a credential in them from
			// the collector's redaction. Bytes that are not UTF-8 hold no
			// text; pydantic refuses them too, and U+FFFD for each bad
			// byte would keep none of the value.
			if !utf8.Valid(rv.Bytes()) {
				return dst, errors.New("a []byte that is not UTF-8 has no text to write; pass it as a string of hex or base64")
			}
			return appendQuoted(dst, string(rv.Bytes())), nil
		}
		dst = append(dst, '[')
		for i := 0; i < rv.Len(); i++ {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendGo(dst, rv.Index(i).Interface(), depth+1); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			break
		}
		if rv.IsNil() {
			return append(dst, "null"...), nil
		}
		m := make(map[string]any, rv.Len())
		for it := rv.MapRange(); it.Next(); {
			m[it.Key().String()] = it.Value().Interface()
		}
		return appendGo(dst, m, depth)
	case reflect.Pointer:
		if rv.IsNil() {
			return append(dst, "null"...), nil
		}
		return appendGo(dst, rv.Elem().Interface(), depth+1)
	}
	return appendEncoded(dst, v)
}

// appendEncoded writes v as encoding/json does, in canonical form.
func appendEncoded(dst []byte, v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return dst, fmt.Errorf("encode %T: %w", v, err)
	}
	p := parser{buf: raw}
	return p.canonValue(dst)
}

func appendFiniteFloat(dst []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return dst, fmt.Errorf("%v has no JSON spelling", f)
	}
	return appendPyFloat(dst, f), nil
}
