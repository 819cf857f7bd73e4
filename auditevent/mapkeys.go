package auditevent

import "strconv"

// MapKeys returns d with every member name, at any depth, replaced by f's
// result where f reports a change, and whether anything changed. f is
// called once per name, in text order. The result is canonical: sorted
// again. A changed name that another member of the same object has, or
// gets first, is followed by " #2", " #3" and so on, so no member is lost.
func (d Data) MapKeys(f func(key string) (string, bool)) (Data, bool) {
	if d.IsEmpty() {
		return d, false
	}
	k := keyMapper{stringMapper: stringMapper{canon: d.canon}}
	n := 0
	k.walk(0, func(key string) {
		if name, changed := f(key); changed {
			k.names = append(k.names, renamed{n, name})
		}
		n++
	})
	if len(k.names) == 0 {
		return d, false
	}
	out, _ := k.emit(nil, 0)
	nd, err := canonicalizeData(out)
	if err != nil { // text built from canonical text always reads
		return d, false
	}
	return nd, true
}

// renamed is the new name of the member name at index at, in text order.
type renamed struct {
	at   int
	name string
}

// keyMapper walks canonical text for its member names, then writes the text
// again with the names it found changed.
type keyMapper struct {
	stringMapper
	names []renamed // the changed names, in text order; nil until one
	next  int       // the index of the next name emit writes
	done  int       // names[:done] are written
}

// walk hands each member name of the value at i to visit and returns the
// index after the value.
func (k *keyMapper) walk(i int, visit func(string)) int {
	switch k.canon[i] {
	case '{':
		i++
		for k.canon[i] != '}' {
			end, key := k.str(i)
			visit(key)
			i = k.walk(end+1, visit)
			if k.canon[i] == ',' {
				i++
			}
		}
		return i + 1
	case '[':
		i++
		for k.canon[i] != ']' {
			i = k.walk(i, visit)
			if k.canon[i] == ',' {
				i++
			}
		}
		return i + 1
	case '"':
		end, _ := k.str(i)
		return end
	}
	for i < len(k.canon) && k.canon[i] != ',' && k.canon[i] != ']' && k.canon[i] != '}' {
		i++
	}
	return i
}

// keyedValue is one member of an object as emit writes it.
type keyedValue struct {
	name    string
	changed bool
	value   []byte
}

// emit appends the value at i with the changed names to dst and returns
// the index after it; the text of an object keeps its members' order
// (canonicalizeData sorts them).
func (k *keyMapper) emit(dst []byte, i int) ([]byte, int) {
	switch k.canon[i] {
	case '{':
		var ms []keyedValue
		i++
		for k.canon[i] != '}' {
			end, key := k.str(i)
			m := keyedValue{name: key}
			if k.done < len(k.names) && k.names[k.done].at == k.next {
				m.name, m.changed = k.names[k.done].name, true
				k.done++
			}
			k.next++
			m.value, i = k.emit(nil, end+1)
			ms = append(ms, m)
			if k.canon[i] == ',' {
				i++
			}
		}
		return appendMembers(dst, ms), i + 1
	case '[':
		dst = append(dst, '[')
		i++
		for n := 0; k.canon[i] != ']'; n++ {
			if n > 0 {
				dst = append(dst, ',')
			}
			dst, i = k.emit(dst, i)
			if k.canon[i] == ',' {
				i++
			}
		}
		return append(dst, ']'), i + 1
	}
	end := k.walk(i, func(string) {})
	return append(dst, k.canon[i:end]...), end
}

// appendMembers writes an object of ms, a changed name that another
// member has (an unchanged one, or a changed one before it) numbered.
func appendMembers(dst []byte, ms []keyedValue) []byte {
	taken := make(map[string]bool, len(ms))
	for _, m := range ms {
		if !m.changed {
			taken[m.name] = true
		}
	}
	dst = append(dst, '{')
	for j, m := range ms {
		name := m.name
		if m.changed {
			name = FreeName(taken, m.name)
		}
		if j > 0 {
			dst = append(dst, ',')
		}
		dst = appendQuoted(dst, name)
		dst = append(dst, ':')
		dst = append(dst, m.value...)
	}
	return append(dst, '}')
}

// FreeName returns name, or name followed by " #2", " #3" and so on, the
// first that taken does not hold, and adds it to taken: how a changed name
// is kept from another member's (MapKeys, and a map body cut alike).
func FreeName(taken map[string]bool, name string) string {
	free := name
	for n := 2; taken[free]; n++ {
		free = name + " #" + strconv.Itoa(n)
	}
	taken[free] = true
	return free
}
