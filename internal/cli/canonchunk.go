package cli

import (
	"fmt"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/lines"
)

// A chunk is cut after this many lines or input bytes, whichever comes
// first: large enough that passing it between goroutines costs little,
// small enough that the chunks in flight stay a few MiB. A single line
// longer than the byte bound makes a chunk of its own.
const (
	chunkMaxLines = 1024
	chunkMaxBytes = 512 << 10
	// chunkKeepBytes: a chunk whose buffers grew past this (a huge line)
	// is not reused, so one outlier does not stay in memory.
	chunkKeepBytes = 4 << 20
)

// canonChunk is a run of consecutive input lines and, once done is
// closed, their canonical lines and problems.
type canonChunk struct {
	in    []byte // the lines' text, back to back
	lines []chunkLine

	out  []byte // canonical lines
	errs []byte // problem reports for stderr, one per line
	bad  int
	done chan struct{}
}

type chunkLine struct {
	num     int
	end     int // the line is in[previous end:end]
	tooLong bool
}

func (c *canonChunk) full() bool {
	return len(c.lines) >= chunkMaxLines || len(c.in) >= chunkMaxBytes
}

// add copies a line in: the reader reuses its buffer.
func (c *canonChunk) add(ln lines.Line) {
	if !ln.TooLong {
		c.in = append(c.in, ln.Text...)
	}
	c.lines = append(c.lines, chunkLine{num: ln.Num, end: len(c.in), tooLong: ln.TooLong})
}

// canonicalize decodes and encodes every line of the chunk; ev is the
// worker's scratch event.
func (c *canonChunk) canonicalize(ev *auditevent.Event) {
	start := 0
	for _, l := range c.lines {
		text := c.in[start:l.end]
		start = l.end
		if l.tooLong {
			c.bad++
			c.errs = fmt.Appendf(c.errs, "line %d: longer than %d bytes\n", l.num, maxLineBytes)
			continue
		}
		if err := (auditevent.DecodeOptions{}).DecodeInto(text, ev); err != nil {
			c.bad++
			c.errs = fmt.Appendf(c.errs, "line %d: %v\n", l.num, err)
			continue
		}
		c.out = auditevent.AppendLine(c.out, ev)
	}
}

// chunkPool recycles chunks; its capacity bounds how many it keeps.
type chunkPool struct{ free chan *canonChunk }

func newChunkPool(size int) *chunkPool {
	return &chunkPool{free: make(chan *canonChunk, size)}
}

func (p *chunkPool) get() *canonChunk {
	select {
	case c := <-p.free:
		c.done = make(chan struct{})
		return c
	default:
		return &canonChunk{done: make(chan struct{})}
	}
}

func (p *chunkPool) put(c *canonChunk) {
	if cap(c.in)+cap(c.out) > chunkKeepBytes {
		return
	}
	c.in, c.lines, c.out, c.errs, c.bad = c.in[:0], c.lines[:0], c.out[:0], c.errs[:0], 0
	select {
	case p.free <- c:
	default:
	}
}
