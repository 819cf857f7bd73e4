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
	buf []byte // a line longer than r's buffer is assembled here
	n   int    // number of the line last returned, from 1
}

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
	lr.buf = lr.buf[:0]
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
	lr.buf = lr.buf[:0]
	if !tooLong {
		lr.buf = append(lr.buf, chunk...)
	}
	for {
		chunk, err = lr.r.ReadSlice('\n')
		size += int64(len(chunk))
		if !tooLong {
			if len(lr.buf)+len(chunk) > lr.max+1 {
				tooLong = true
				lr.buf = lr.buf[:0]
			} else {
				lr.buf = append(lr.buf, chunk...)
			}
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return lr.result(lr.buf, tooLong, size, err)
		}
	}
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
