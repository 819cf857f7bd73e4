package admission // import "github.com/sandboxaudit/sandboxaudit/receiver/internal/admission"

import (
	"math/bits"
	"sync"
)

// Request bodies are read into pooled buffers, one at a time as data
// arrives, so what a request holds is what it actually sent rounded up to
// a buffer, whatever its Content-Length claims; a body refused part-way
// (over the budget, or a compressed body inflating past the body limit)
// gives its buffers back to the pool for the next request.
//
// The first buffer is FirstBuffer bytes and is reserved only once it is
// filled (or the body ended): a connection that sends its headers and then
// nothing holds no budget, so idle connections cannot lock other clients
// out, and holds a buffer no larger than net/http's own per connection.
// Any single event of the usual size fits in it. Each later buffer is
// reserved before data is read into it, and buffers double up to
// MaxBuffer, so a client that stalls just past a buffer's end holds at
// most three times what it sent, while a large body still takes few
// buffers.
const (
	FirstBuffer = 4 << 10
	MaxBuffer   = 32 << 10
	bufferSizes = 4 // FirstBuffer, 8, 16 and 32 KiB
)

// bufferSize is the size of a body's buffer after n others.
func bufferSize(n int) int {
	return FirstBuffer << min(n, bufferSizes-1)
}

// bufferPools holds free buffers, one pool per size.
type bufferPools [bufferSizes]sync.Pool

// get returns a buffer of bufferSize(n) bytes, empty.
func (p *bufferPools) get(n int) *[]byte {
	class := min(n, bufferSizes-1)
	if c, _ := p[class].Get().(*[]byte); c != nil {
		return c
	}
	b := make([]byte, 0, bufferSize(class))
	return &b
}

// put returns a buffer to the pool of its size.
func (p *bufferPools) put(c *[]byte) {
	*c = (*c)[:0]
	class := bits.TrailingZeros(uint(cap(*c) / FirstBuffer))
	p[class].Put(c)
}
