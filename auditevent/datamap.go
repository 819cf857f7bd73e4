package auditevent

import "unsafe"

// StringSite is where a string value sits in a data object: what a
// rewrite of the value may need to know besides the value itself.
type StringSite struct {
	// Keys are the member names from the top-level object down to the
	// value; array elements add none. Valid during the call only.
	Keys []string
	// Prev is the previous element of the array the value is in, when that
	// element is a string (HasPrev).
	Prev    string
	HasPrev bool
}

// MapStrings returns d with every string value (member names excepted)
// replaced by f's result where f reports a change, and whether anything
// changed. Values are visited in text order. Member names stay, so the
// result keeps d's key order and is canonical without a re-sort.
func (d Data) MapStrings(f func(site *StringSite, s string) (string, bool)) (Data, bool) {
	if d.IsEmpty() {
		return d, false
	}
	m := stringMapper{canon: d.canon, f: f}
	m.site.Keys = m.keys[:0]
	m.value(0)
	if m.out == nil {
		return d, false
	}
	m.out = append(m.out, d.canon[m.last:]...)
	return newData(m.out), true
}

// stringMapper walks canonical text, which is strict enough to read without
// a full parser: no whitespace, and every string well formed.
type stringMapper struct {
	canon []byte
	f     func(*StringSite, string) (string, bool)
	site  StringSite
	keys  [8]string // Keys' first backing array: most data nests less
	out   []byte    // nil until the first change
	last  int       // canon[:last] is in out
}

// value walks the value at i and returns the index after it, and the
// string when the value is one (as it was, before f).
func (m *stringMapper) value(i int) (int, string, bool) {
	switch m.canon[i] {
	case '{':
		return m.object(i), "", false
	case '[':
		return m.array(i), "", false
	case '"':
		end, s := m.str(i)
		m.replace(i, end, s)
		return end, s, true
	}
	for i < len(m.canon) && m.canon[i] != ',' && m.canon[i] != ']' && m.canon[i] != '}' {
		i++
	}
	return i, "", false
}

func (m *stringMapper) object(i int) int {
	i++ // '{'
	for m.canon[i] != '}' {
		end, key := m.str(i)
		m.site.Keys = append(m.site.Keys, key)
		m.site.HasPrev = false
		i, _, _ = m.value(end + 1) // past ':'
		m.site.Keys = m.site.Keys[:len(m.site.Keys)-1]
		if m.canon[i] == ',' {
			i++
		}
	}
	return i + 1
}

func (m *stringMapper) array(i int) int {
	i++ // '['
	var prev string
	hasPrev := false
	for m.canon[i] != ']' {
		m.site.Prev, m.site.HasPrev = prev, hasPrev
		i, prev, hasPrev = m.value(i)
		if m.canon[i] == ',' {
			i++
		}
	}
	m.site.HasPrev = false
	return i + 1
}

// str decodes the string at i and returns the index after its closing
// quote. A string without escapes is a view of canon, which never changes.
func (m *stringMapper) str(i int) (int, string) {
	if end := plainEnd(m.canon, i+1); end < len(m.canon) && m.canon[end] == '"' {
		if end == i+1 {
			return end + 1, ""
		}
		return end + 1, unsafe.String(&m.canon[i+1], end-i-1)
	}
	p := parser{buf: m.canon, pos: i}
	b, err := p.readString()
	if err != nil { // canonical text always reads; keep the value as it is
		return p.pos, ""
	}
	if len(b) == 0 {
		return p.pos, ""
	}
	return p.pos, unsafe.String(&b[0], len(b))
}

// replace hands the string value canon[start:end] to f and splices in a
// changed result, quoted canonically.
func (m *stringMapper) replace(start, end int, s string) {
	r, changed := m.f(&m.site, s)
	if !changed {
		return
	}
	if m.out == nil {
		m.out = make([]byte, 0, len(m.canon)+len(r)-len(s)+16)
	}
	m.out = append(m.out, m.canon[m.last:start]...)
	m.out = appendQuoted(m.out, r)
	m.last = end
}
