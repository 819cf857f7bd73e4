package cli

import (
	"bufio"
	"errors"
	"io"
)

// maxLineBytes bounds one line held in memory. Exec output is capped by the
// payload policy, so a real event is far smaller; the bound only protects the
// tool from a file that is not JSONL at all.
const maxLineBytes = 64 << 20

// lineReader yields lines one at a time with bounded memory. Unlike
// bufio.Scanner it survives an over-long line: the line is skipped, reported
// as too long, and reading continues with the next one.
type lineReader struct {
	r   *bufio.Reader
	max int
	buf []byte
	n   int // number of the line last returned, from 1
}

func newLineReader(r io.Reader, maxBytes int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), max: maxBytes}
}

// line is one line of input.
type line struct {
	num int
	// text excludes the newline; it is only valid until the next call.
	text []byte
	// newline is false for a last line that ends at EOF without '\n'.
	newline bool
	// tooLong is set (and text is nil) when the line exceeded the bound.
	tooLong bool
}

// next returns the next line, or io.EOF after the last one.
func (lr *lineReader) next() (line, error) {
	lr.buf = lr.buf[:0]
	tooLong := false
	for {
		chunk, err := lr.r.ReadSlice('\n')
		if !tooLong {
			if len(lr.buf)+len(chunk) > lr.max+1 { // +1: the newline itself
				tooLong = true
				lr.buf = lr.buf[:0]
			} else {
				lr.buf = append(lr.buf, chunk...)
			}
		}
		switch {
		case err == nil:
			lr.n++
			return lr.result(tooLong, true), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if len(lr.buf) == 0 && !tooLong {
				return line{}, io.EOF
			}
			lr.n++
			return lr.result(tooLong, false), nil
		default:
			return line{}, err
		}
	}
}

func (lr *lineReader) result(tooLong, newline bool) line {
	if tooLong {
		return line{num: lr.n, tooLong: true, newline: newline}
	}
	text := lr.buf
	if newline {
		text = text[:len(text)-1]
	}
	return line{num: lr.n, text: text, newline: newline}
}
