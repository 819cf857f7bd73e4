package trail

// opKey finds an operation by its session and its span id's hash: a key of
// fixed size, which a map hashes faster than one holding a string.
type opKey struct {
	session [16]byte
	span    uint64
}

// opMap maps operations (session and span id) to values. The span id is
// kept beside its value and compared, so an operation whose span id hashes
// as another's in the map already goes to a second map, keyed by the id.
type opMap[V any] struct {
	byHash map[opKey]opEntry[V]
	byID   map[pairKey]V
}

type opEntry[V any] struct {
	spanID string
	v      V
}

func newOpMap[V any]() *opMap[V] {
	return &opMap[V]{byHash: map[opKey]opEntry[V]{}, byID: map[pairKey]V{}}
}

// get finds the value of the operation; h is the hash of spanID.
func (m *opMap[V]) get(session [16]byte, spanID string, h uint64) (V, bool) {
	if e, ok := m.byHash[opKey{session, h}]; ok && e.spanID == spanID {
		return e.v, true
	}
	if len(m.byID) == 0 {
		var zero V
		return zero, false
	}
	v, ok := m.byID[pairKey{session, spanID}]
	return v, ok
}

// put sets the operation's value, keeping its own copy of spanID.
func (m *opMap[V]) put(session [16]byte, spanID string, h uint64, v V) {
	k := opKey{session, h}
	e, taken := m.byHash[k]
	switch {
	case taken && e.spanID == spanID:
		m.byHash[k] = opEntry[V]{e.spanID, v}
	case taken:
		m.byID[pairKey{session, cloneString(spanID)}] = v
	default:
		if _, ok := m.byID[pairKey{session, spanID}]; ok {
			m.byID[pairKey{session, spanID}] = v
			return
		}
		m.byHash[k] = opEntry[V]{cloneString(spanID), v}
	}
}

// del removes the operation, if it is there.
func (m *opMap[V]) del(session [16]byte, spanID string, h uint64) {
	k := opKey{session, h}
	if e, ok := m.byHash[k]; ok && e.spanID == spanID {
		delete(m.byHash, k)
		return
	}
	delete(m.byID, pairKey{session, spanID})
}

// each calls fn with every operation and its value.
func (m *opMap[V]) each(fn func(session [16]byte, spanID string, v V)) {
	for k, e := range m.byHash {
		fn(k.session, e.spanID, e.v)
	}
	for k, v := range m.byID {
		fn(k.session, k.spanID, v)
	}
}

func (m *opMap[V]) clear() {
	clear(m.byHash)
	clear(m.byID)
}

// cloneString copies s, which may be a view of a buffer read into again.
func cloneString(s string) string { return string([]byte(s)) }
