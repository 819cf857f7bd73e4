package sandboxauditreceiver // import "github.com/sandboxaudit/sandboxaudit/receiver"

import (
	"math/bits"
	"sync"
)

// Request bodies are read into pooled chunks, one at a time as data
// arrives, so what a request holds is what it actually sent rounded up to
// a chunk, whatever its Content-Length claims; a body refused part-way
// (over the budget, or a compressed body inflating past
// max_request_body_size) gives its chunks back to the pool for the next
// request instead of leaving garbage.
//
// The first chunk is firstChunk bytes and is reserved only once it is
// filled (or the body ended): a connection that sends its headers and
// then nothing holds no budget, so idle connections cannot lock other
// clients out, and holds a buffer no larger than net/http's own per
// connection. Any single event of the usual size fits in it. Each later
// chunk is reserved before data is read into it, and chunks double up to
// maxChunk, so a client that stalls just past a chunk's end holds at most
// three times what it sent (it was nine with one chunk size after the
// first), while a large body still takes few chunks.
const (
	firstChunk = 4 << 10
	maxChunk   = 32 << 10
	chunkSizes = 4 // firstChunk, 8, 16 and 32 KiB
)

// chunkSize is the size of a body's chunk after n others.
func chunkSize(n int) int {
	return firstChunk << min(n, chunkSizes-1)
}

// chunkPools holds free chunks, one pool per size.
type chunkPools [chunkSizes]sync.Pool

// get returns a chunk of chunkSize(n) bytes, empty.
func (p *chunkPools) get(n int) *[]byte {
	class := min(n, chunkSizes-1)
	if c, _ := p[class].Get().(*[]byte); c != nil {
		return c
	}
	b := make([]byte, 0, chunkSize(class))
	return &b
}

// put returns a chunk to the pool of its size.
func (p *chunkPools) put(c *[]byte) {
	*c = (*c)[:0]
	class := bits.TrailingZeros(uint(cap(*c) / firstChunk))
	p[class].Put(c)
}
