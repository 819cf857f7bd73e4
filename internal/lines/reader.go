// Package lines reads newline-terminated lines from a stream with bounded
// memory. The operator CLI (canon, verify) and the spool's replay read
// JSONL through it.
package lines // import "github.com/sandboxaudit/sandboxaudit/internal/lines"

import (
	"bufio"
	"errors"
	"io"
	"math"
)

// Reader yields lines one at a time. Unlike bufio.Scanner it survives an
// over-long line: the line is skipped, reported as too long, and reading
// continues with the next one.
type Reader struct {
	r   *bufio.Reader
	max int
	// A line longer than r's buffer is assembled in buf, then, once
	// buf holds blockSize bytes, in more blocks of blockSize, copied
	// into one slice of the line's size at its end: a line past the
	// bound is held up to the bound and dropped, and a long line takes
	// about twice its size, not the several times doubling a slice and
	// copying it each time takes.
	buf    []byte
	blocks [][]byte
	n      int // number of the line last returned, from 1
}

// blockSize is the size of the blocks a long line is assembled in, and
// the most buf keeps between lines.
const blockSize = 1 << 20

// NewReader reads r with a buffer of bufSize bytes (bufio's default when
// bufSize <= 0). Lines longer than maxBytes, newline excluded, are
// reported as too long; maxBytes <= 0 means no bound.
func NewReader(r io.Reader, bufSize, maxBytes int) *Reader {
	// One below the largest int: the bound is compared with a line and
	// its newline, maxBytes+1, which must not wrap.
	if maxBytes <= 0 || maxBytes == math.MaxInt {
		maxBytes = math.MaxInt - 1
	}
	if bufSize <= 0 {
		return &Reader{r: bufio.NewReader(r), max: maxBytes}
	}
	return &Reader{r: bufio.NewReaderSize(r, bufSize), max: maxBytes}
}

// Reset makes lr read r from its first line, keeping its buffers: a tool
// reading many small files would otherwise allocate them for each.
func (lr *Reader) Reset(r io.Reader) {
	lr.r.Reset(r)
	lr.buf, lr.blocks = lr.buf[:0], nil
	lr.n = 0
}

// Line is one line of input.
type Line struct {
	Num int // from 1
	// Text excludes the newline; it is only valid until the next call.
	Text []byte
	// Newline is false for a last line that ends at EOF without '\n'.
	Newline bool
	// TooLong is set (and Text is nil) when the line exceeded the bound.
	TooLong bool
	// Size is how many bytes of input the line took, its newline
	// included: the distance to the next line, too long or not.
	Size int64
}

// Bytes is the line as it was read: Text and its newline, if it had one;
// nil for a line that was too long.
func (l Line) Bytes() []byte {
	if l.Newline && !l.TooLong {
		return l.Text[:len(l.Text)+1]
	}
	return l.Text
}

// Next returns the next line, or io.EOF after the last one.
func (lr *Reader) Next() (Line, error) {
	chunk, err := lr.r.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		// The whole line is in the reader's buffer: no copy.
		return lr.result(chunk, false, int64(len(chunk)), err)
	}
	size := int64(len(chunk))
	tooLong := len(chunk) > lr.max+1 // +1: the newline itself
	if lr.buf == nil {
		lr.buf = make([]byte, 0, blockSize) // the first long line's block, kept
	}
	lr.buf, lr.blocks = lr.buf[:0], nil
	held := 0
	for {
		if !tooLong {
			if held+len(chunk) > lr.max+1 {
				tooLong = true
				lr.buf, lr.blocks = lr.buf[:0], nil
			} else {
				lr.hold(chunk)
				held += len(chunk)
			}
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return lr.result(lr.assembled(held), tooLong, size, err)
		}
		chunk, err = lr.r.ReadSlice('\n')
		size += int64(len(chunk))
	}
}

// hold appends chunk to the line being assembled: to buf up to
// blockSize, then to blocks of blockSize.
func (lr *Reader) hold(chunk []byte) {
	for len(chunk) > 0 {
		last := &lr.buf
		if len(lr.blocks) > 0 {
			last = &lr.blocks[len(lr.blocks)-1]
		}
		room := blockSize - len(*last)
		if room <= 0 {
			lr.blocks = append(lr.blocks, make([]byte, 0, blockSize))
			continue
		}
		n := min(room, len(chunk))
		*last = append(*last, chunk[:n]...)
		chunk = chunk[n:]
	}
}

// assembled is the line held, held bytes, in one slice: buf when it
// fits there, else a slice of its size the blocks are copied into. buf
// stays the reader's for the next long line.
func (lr *Reader) assembled(held int) []byte {
	if len(lr.blocks) == 0 {
		return lr.buf
	}
	line := make([]byte, 0, held)
	line = append(line, lr.buf...)
	for _, b := range lr.blocks {
		line = append(line, b...)
	}
	lr.blocks = nil
	return line
}

// result makes the Line of raw (the line with its newline, if any; size
// bytes of input) once the read that ended it returned err.
func (lr *Reader) result(raw []byte, tooLong bool, size int64, err error) (Line, error) {
	switch {
	case err == nil:
	case errors.Is(err, io.EOF):
		if len(raw) == 0 && !tooLong {
			return Line{}, io.EOF
		}
	default:
		return Line{}, err
	}
	lr.n++
	newline := err == nil
	if tooLong || len(raw) > lr.max+1 {
		return Line{Num: lr.n, TooLong: true, Newline: newline, Size: size}, nil
	}
	if newline {
		raw = raw[:len(raw)-1]
	}
	return Line{Num: lr.n, Text: raw, Newline: newline, Size: size}, nil
}
