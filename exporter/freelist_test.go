package sandboxauditexporter

import "testing"

func TestFreeListKeepsBuffersUpToItsByteBudget(t *testing.T) {
	var l freeList[[]byte]
	const size = 1 << 20
	n := freeBudget / size
	for range n + 3 { // more than fit: the extra three are dropped
		b := make([]byte, 0, size)
		l.put(&b, size)
	}
	if l.bytes != freeBudget || len(l.free) != n {
		t.Fatalf("kept %d buffers, %d bytes; want %d, %d", len(l.free), l.bytes, n, freeBudget)
	}
	for i := range n {
		b, ok := l.get()
		if !ok || cap(*b) != size {
			t.Fatalf("get %d: ok %v", i, ok)
		}
	}
	if _, ok := l.get(); ok || l.bytes != 0 {
		t.Fatalf("empty list: got a buffer or %d bytes left", l.bytes)
	}
	// Taken buffers free their share: one fits again.
	b := make([]byte, 0, size)
	l.put(&b, size)
	if got, ok := l.get(); !ok || got != &b {
		t.Fatal("a buffer put after the list emptied was not kept")
	}
}

func TestFreeListKeepsMoreThanFourBatchBuffers(t *testing.T) {
	// Eight concurrent pushes of 1,000 spans each return a buffer of
	// about a megabyte; all eight must be there for the next eight.
	var p bufPool
	bufs := make([]*[]byte, 8)
	for i := range bufs {
		bufs[i] = p.get()
		*bufs[i] = append(*bufs[i], make([]byte, 1<<20)...)
	}
	for _, b := range bufs {
		p.put(b)
	}
	for i := range bufs {
		b := p.get()
		if cap(*b) < 1<<20 || len(*b) != 0 {
			t.Fatalf("get %d: a fresh or unreset buffer (len %d, cap %d)", i, len(*b), cap(*b))
		}
	}
}
