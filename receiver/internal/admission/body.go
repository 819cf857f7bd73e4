package admission // import "github.com/sandboxaudit/sandboxaudit/receiver/internal/admission"

import (
	"errors"
	"io"
	"net/http"
	"net/netip"
)

// Body is a request body: b is all of it, contiguous. held is the budget it
// reserved, given back by Done once the request is answered (decoded data
// lives until then, so the reservation covers it too). The caller owns it,
// on its stack: a body of one buffer (any single event) then costs no
// allocation besides the pooled buffer.
type Body struct {
	b       []byte
	first   *[]byte   // pooled; b aliases it when it is the only buffer
	more    []*[]byte // pooled buffers after the first; b is then a copy of them all
	held    int64     // reserved now
	buffers int64     // reserved for the body's buffers, the floor of held
	window  int64     // reserved for a zstd decoder's windows while reading, part of held
	ring    int64     // the largest of those windows
	c       *Controller
	pool    *Budget    // the budget of the body's size class
	addr    netip.Addr // the client's, which the reservation is counted to
	small   bool       // in the small class while no larger than SmallBodyBytes
}

// Bytes is the whole body, valid until Recycle.
func (rb *Body) Bytes() []byte { return rb.b }

// Limit is the most any request may take, max_inflight_bytes. A small
// body needing more than its own budget takes all of that (Settle).
func (rb *Body) Limit() int64 { return rb.c.large.Limit() }

// Recycle returns the buffers to the pool; Bytes must no longer be
// referenced. The reservation stays until Done.
func (rb *Body) Recycle() {
	if rb.first != nil {
		rb.c.buffers.put(rb.first)
	}
	for _, c := range rb.more {
		rb.c.buffers.put(c)
	}
	rb.first, rb.more, rb.b = nil, nil, nil
}

// Done gives the reservation back.
func (rb *Body) Done() {
	rb.pool.Release(rb.addr, rb.held)
	rb.held, rb.buffers, rb.window, rb.ring = 0, 0, 0, 0
}

// Settle makes the reservation need, the bytes of the canonical lines a
// request's events decode to (what the pipeline's copies are made of, up
// to six times the body when the events are full of escapes), and never
// less than what its body's buffers took: a bound taken before decoding
// (EscapeBound) is given back down to the exact size once decoded. A
// request that needs more than the whole budget takes all of it, so it runs
// alone. ErrOverBudget when the budget cannot cover it now.
func (rb *Body) Settle(need int64) error {
	need = min(max(need, rb.buffers), rb.pool.Limit())
	switch {
	case need < rb.held:
		rb.pool.Release(rb.addr, rb.held-need)
	case need > rb.held:
		if !rb.pool.Reserve(rb.addr, need-rb.held) {
			return ErrOverBudget
		}
	}
	rb.held = need
	return nil
}

// fail recycles and releases after an error.
func (rb *Body) fail(err error) error {
	rb.Recycle()
	rb.Done()
	return err
}

// buffer returns a pooled buffer: the first unreserved (see FirstBuffer),
// the others reserved first; ErrOverBudget past the budget.
func (rb *Body) buffer() (*[]byte, error) {
	if rb.first == nil {
		rb.first = rb.c.buffers.get(0)
		return rb.first, nil
	}
	n := 1 + len(rb.more)
	if err := rb.hold(int64(bufferSize(n))); err != nil {
		return nil, err
	}
	c := rb.c.buffers.get(n)
	rb.more = append(rb.more, c)
	return c, nil
}

// hold reserves n more bytes for the request.
func (rb *Body) hold(n int64) error {
	if !rb.pool.Reserve(rb.addr, n) {
		return ErrOverBudget
	}
	rb.held += n
	rb.buffers += n
	return nil
}

// holdWindow reserves a zstd frame's window of n bytes, if larger than
// any before: the decoder reuses its window for a frame that fits it, and
// allocates a new one for a frame that does not. The one it drops is
// garbage, not free, so each stays reserved: a body of frames whose
// windows grow step by step cannot make hundreds of megabytes of them.
func (rb *Body) holdWindow(n int64) error {
	if n <= rb.ring {
		return nil
	}
	if !rb.pool.Reserve(rb.addr, n) {
		return ErrOverBudget
	}
	rb.held += n
	rb.window += n
	rb.ring = n
	return nil
}

// Read reads the whole request body into rb. Each buffer after the first
// is reserved from the budget before data is read into it, the first once
// it is filled, and a zstd frame's window before the decoder reads the
// frame; past the budget it stops with ErrOverBudget (a 503 asking the
// client to retry). On success the caller must call rb.Done, and may
// Recycle as soon as nothing refers to the body's bytes; on error rb holds
// nothing.
func (c *Controller) Read(req *http.Request, rb *Body) error {
	err := c.read(req, rb)
	// The decoder is closed: its windows are given back with it.
	rb.pool.Release(rb.addr, rb.window)
	rb.held -= rb.window
	rb.window, rb.ring = 0, 0
	return err
}

func (c *Controller) read(req *http.Request, rb *Body) error {
	defer func() { _ = req.Body.Close() }() // read or refused: nothing more is wanted
	*rb = Body{c: c, pool: c.large, addr: ClientAddr(req)}
	watchZstd(req, rb.holdWindow, ZstdMaxWindow(c.settings.MaxBodyBytes))
	decoder := decoderBytes(req)
	if decoder > 0 {
		// Before the decoder reads: it allocates them with its first block.
		if err := rb.hold(decoder); err != nil {
			return rb.fail(err)
		}
	} else if c.small(req) {
		rb.pool, rb.small = c.smalls, true
	}
	if err := rb.readFrom(decodedReader(req)); err != nil {
		return rb.fail(err)
	}
	if c.settings.Snappy && req.Header.Get("Content-Encoding") == EncodingSnappy {
		return rb.inflateSnappy()
	}
	return nil
}

// readFrom reads all of r into rb's buffers, reserving each (see Read).
func (rb *Body) readFrom(r io.Reader) error {
	c := rb.c
	total := 0
	for {
		if rb.small && int64(total) > c.settings.SmallBodyBytes {
			// Only a body whose length was not what it said (a compressed
			// one, inflating) gets here: it goes on as a large body.
			if err := rb.promote(); err != nil {
				return err
			}
		}
		buf, err := rb.buffer()
		if err != nil {
			return err
		}
		n, err := fill(r, (*buf)[:cap(*buf)])
		*buf = (*buf)[:n]
		total += n
		if buf == rb.first {
			if herr := rb.hold(FirstBuffer); herr != nil {
				return herr
			}
		}
		if errors.Is(err, io.EOF) { // the end; io.ErrUnexpectedEOF (cut short) is another error
			break
		}
		if err != nil {
			return err
		}
		if int64(total) > c.settings.MaxBodyBytes {
			// confighttp's limit reader errs first; this is the backstop.
			return &http.MaxBytesError{Limit: c.settings.MaxBodyBytes}
		}
	}
	if len(rb.more) == 0 {
		rb.b = *rb.first
		return nil
	}
	// The copy takes the buffers' place in the reservation (which is at
	// least its size); the buffers go back to the pool at once.
	whole := make([]byte, 0, total)
	whole = append(whole, *rb.first...)
	for _, buf := range rb.more {
		whole = append(whole, *buf...)
	}
	rb.Recycle()
	rb.b = whole
	return nil
}

// promote moves the body's reservation to the large class.
func (rb *Body) promote() error {
	if !rb.c.large.Reserve(rb.addr, rb.held) {
		return ErrOverBudget
	}
	rb.pool.Release(rb.addr, rb.held)
	rb.pool, rb.small = rb.c.large, false
	return nil
}

// fill reads into b until b is full or r returns an error, and returns that
// error as is. Unlike io.ReadFull it does not turn an end part-way into
// io.ErrUnexpectedEOF: that error must keep meaning what the body reader
// says with it, a body cut short, which is refused rather than taken for
// the end of a short last buffer.
func fill(r io.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := r.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Addr is the client address the body is counted to.
func (rb *Body) Addr() netip.Addr { return rb.addr }
