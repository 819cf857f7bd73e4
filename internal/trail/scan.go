package trail

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"runtime"
	"strings"
	"sync"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	jsonl "github.com/sandboxaudit/sandboxaudit/internal/lines"
	"github.com/sandboxaudit/sandboxaudit/internal/tornjoin"
	"github.com/sandboxaudit/sandboxaudit/internal/zstdread"
)

// A chunk is a run of lines of one source, decoded by a worker while the
// next chunks are read; the consumer takes chunks in reading order.
type chunk struct {
	src  int
	buf  []byte   // the lines, each with its newline
	ends []int    // end of each line in buf
	nums []int64  // line numbers
	res  []result // one for each line, two for a line holding two events (addJoined)
	out  []byte   // the encoded records
	done chan struct{}
	err  error
	// damaged, when set, says why the source's compressed stream ends
	// after this chunk's lines, at line damagedAt.
	damaged   string
	damagedAt int64
	// openEnd: the chunk's last line is its source's last, without its
	// newline, and the source may be being appended to.
	openEnd bool
}

// result is what a worker found in one line, or one of its two events.
type result struct {
	num       int64  // the line's number
	bad       string // why the line is not an event; "" when it is
	torn      bool   // an incomplete last line (chunk.openEnd) left out
	joined    int    // the piece's length before the event line read (tornjoin.Find); 0: none
	pieceKind Piece  // with joined: what the piece is; an event, it is the result before this one
	piece     bool   // that result: its line is counted, and reported, with the next
	skip      bool   // left out by the filter
	session   [16]byte
	spanID    string // views of the chunk's line: copy to keep
	traceID   string
	phase     byte
	seq       int64
	ts        int64
	tsText    string
	ok        bool
	rec       span // the encoded record in out, key's opSeq still unset
}

const (
	chunkLines = 2048
	chunkBytes = 1 << 20
)

// scanner reads sources in order, decoding in parallel.
type scanner struct {
	opts    Options
	names   []string
	grep    [][]byte // grepForms
	grepCmd [][]byte // grepShown: the forms to find in a command or path as the table shows it
	seed    maphash.Seed
	free    chan *chunk // chunks to reuse, with their buffers grown
	workers int
	// sumsOnly skips what only the sort needs (the record, the command):
	// ReadSessions.
	sumsOnly bool
	// span and trace are the Filter's ids, in both their forms.
	span, trace idForms
	// The read loop's buffers, reset for each source in turn: a trail of
	// many small files would otherwise allocate 1.25 MB for each.
	br *bufio.Reader
	lr *jsonl.Reader
}

func newScanner(names []string, opts Options) *scanner {
	w := opts.Workers
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
	}
	return &scanner{opts: opts, names: names, grep: grepForms(opts.Filter.Grep), grepCmd: grepShown(opts.Filter.Grep),
		span: newIDForms(opts.Filter.SpanID), trace: newIDForms(opts.Filter.TraceID), seed: maphash.MakeSeed(), workers: w,
		free: make(chan *chunk, 4*w+2)}
}

// each runs the scan and calls fn with every result that is well formed
// and not skipped by the line filters, in reading order. It counts the lines
// and the bad lines into st and reports each bad line to Options.Bad, so
// every reader accounts for input the same way.
func (s *scanner) each(ctx context.Context, st *Stats, fn func(c *chunk, res *result) error) error {
	return s.run(ctx, func(c *chunk) error {
		for i := range c.res {
			res := &c.res[i]
			if !res.piece {
				st.Lines++
			}
			if res.torn {
				st.Incomplete++
				if s.opts.Incomplete != nil {
					s.opts.Incomplete(s.names[c.src], res.num)
				}
				continue
			}
			if res.bad != "" {
				s.bad(st, c.src, res.num, res.bad)
				continue
			}
			if res.joined > 0 {
				st.Joined++
				if s.opts.Joined != nil {
					s.opts.Joined(s.names[c.src], res.num, res.joined, res.pieceKind)
				}
			}
			if res.skip {
				continue
			}
			if err := fn(c, res); err != nil {
				return err
			}
		}
		if c.damaged != "" {
			s.damaged(st, c.src, c.damagedAt, c.damaged)
		}
		return nil
	})
}

// bad counts a line that is not an event into st and reports it to
// Options.Bad.
func (s *scanner) bad(st *Stats, src int, line int64, reason string) {
	st.Bad++
	if s.opts.Bad != nil {
		s.opts.Bad(s.names[src], line, reason)
	}
}

// damaged counts a compressed source's damage as a bad line and reports
// it to Options.Damaged, or to Options.Bad without it.
func (s *scanner) damaged(st *Stats, src int, line int64, reason string) {
	if s.opts.Damaged == nil {
		s.bad(st, src, line, reason)
		return
	}
	st.Bad++
	s.opts.Damaged(s.names[src], line, reason)
}

// run calls fn with every chunk, decoded, in reading order; fn must not
// keep the chunk after it returns.
func (s *scanner) run(ctx context.Context, fn func(*chunk) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	work := make(chan *chunk, s.workers)
	order := make(chan *chunk, 2*s.workers)
	var wg sync.WaitGroup
	for range s.workers {
		wg.Go(func() {
			var e decoded
			var r rec
			for c := range work {
				s.decodeChunk(c, &e, &r)
				close(c.done)
			}
		})
	}
	readErr := make(chan error, 1)
	go func() {
		readErr <- s.read(ctx, work, order)
		close(work)
		close(order)
	}()
	var err error
	for c := range order {
		<-c.done
		if err == nil {
			err = fn(c)
		}
		if err != nil {
			cancel()
		}
		s.recycle(c)
	}
	wg.Wait()
	return errors.Join(err, <-readErr)
}

// read splits the sources into chunks.
func (s *scanner) read(ctx context.Context, work, order chan<- *chunk) error {
	for src, name := range s.names {
		if err := s.readSource(ctx, src, name, work, order); err != nil {
			return err
		}
	}
	return nil
}

// readSource splits one source into chunks, in reading order.
func (s *scanner) readSource(ctx context.Context, src int, name string, work, order chan<- *chunk) error {
	live := appendedTo(name)
	rc, err := s.openSource(src, name, live)
	if err != nil {
		return err
	}
	defer func() { _ = rc.Close() }() // read-only
	return s.fillChunks(ctx, src, name, live, s.lineReader(rc), work, order)
}

// openSource opens a source through the scanner's read buffer, with the
// tap, the byte count and the bound the options ask for.
func (s *scanner) openSource(src int, name string, live bool) (io.ReadCloser, error) {
	if s.br == nil {
		s.br = bufio.NewReaderSize(nil, 256<<10)
	}
	var tap io.Writer
	if s.opts.Tap != nil {
		tap = s.opts.Tap(name)
	}
	ext := extent{limit: -1}
	if s.opts.readBytes != nil {
		ext.count = &s.opts.readBytes[src]
	}
	if s.opts.bounds != nil && name != StdinName && live {
		ext.limit = s.opts.bounds[src]
	}
	return open(name, s.opts.Stdin, s.br, tap, ext)
}

// lineReader points the scanner's line reader, made once, at r.
func (s *scanner) lineReader(r io.Reader) *jsonl.Reader {
	if s.lr == nil {
		// Larger than open's buffer, so that most reads go past it to
		// the file instead of being copied through it.
		s.lr = jsonl.NewReader(r, 1<<20, maxLineBytes)
	} else {
		s.lr.Reset(r)
	}
	return s.lr
}

// fillChunks gathers the source's lines into chunks and sends each when
// full. The loop stays whole in one function: it runs once a line.
func (s *scanner) fillChunks(ctx context.Context, src int, name string, live bool, lr *jsonl.Reader, work, order chan<- *chunk) error {
	c := s.newChunk(src)
	var last int64
	for {
		ln, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if zstdread.IsDamaged(err) && ctx.Err() == nil {
			// Reported like a bad line: the lines before the damage and
			// the other sources are still read.
			c.damaged = err.Error()
			c.damagedAt = last + 1
			return s.send(ctx, c, work, order)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		last = int64(ln.Num)
		c.openEnd = !ln.Newline && !ln.TooLong && live
		if ln.TooLong {
			c.buf = append(c.buf, '\n') // an empty line, reported as too long below
			c.ends = append(c.ends, -len(c.buf))
		} else {
			c.buf = append(c.buf, ln.Bytes()...)
			c.ends = append(c.ends, len(c.buf))
		}
		c.nums = append(c.nums, int64(ln.Num))
		if len(c.ends) >= chunkLines || len(c.buf) >= chunkBytes {
			if err := s.send(ctx, c, work, order); err != nil {
				return err
			}
			c = s.newChunk(src)
		}
	}
	if len(c.ends) > 0 {
		return s.send(ctx, c, work, order)
	}
	s.recycle(c)
	return nil
}

// send takes c's place in the reading order, unless ctx ends first, then
// hands c to the workers.
func (s *scanner) send(ctx context.Context, c *chunk, work, order chan<- *chunk) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case order <- c:
	}
	work <- c
	return nil
}

// appendedTo reports whether a writer may be appending to the source: an
// active file or standard input, not a closed segment.
func appendedTo(name string) bool {
	if name == StdinName {
		return true
	}
	// Nor a .zst file that is no segment: the sink appends plain text only.
	return !filesink.IsSegment(name) && !strings.HasSuffix(name, filesink.ZstdSuffix)
}

func (s *scanner) recycle(c *chunk) {
	select {
	case s.free <- c:
	default:
	}
}

func (s *scanner) newChunk(src int) *chunk {
	var c *chunk
	select {
	case c = <-s.free:
	default:
		c = &chunk{}
	}
	c.src, c.err, c.damaged, c.damagedAt, c.openEnd = src, nil, "", 0, false
	c.buf, c.ends, c.nums, c.res, c.out = c.buf[:0], c.ends[:0], c.nums[:0], c.res[:0], c.out[:0]
	c.done = make(chan struct{})
	return c
}

// decodeChunk decodes, filters and encodes every line of c.
func (s *scanner) decodeChunk(c *chunk, e *decoded, r *rec) {
	start := 0
	keep := s.opts.KeepLines && !s.sumsOnly
	for i, end := range c.ends {
		res := result{num: c.nums[i]}
		if end < 0 { // too long
			start = -end
			res.bad = fmt.Sprintf("line longer than %d bytes", maxLineBytes)
			c.res = append(c.res, res)
			continue
		}
		line := c.buf[start:end]
		start = end
		if len(line) == 0 || line[0] == '\n' {
			res.bad = "blank line"
			c.res = append(c.res, res)
			continue
		}
		err := decodeLine(line, r, e, keep, s.grep, s.seed)
		if err == nil {
			s.addEvent(c, res, e, r)
			continue
		}
		if j, ok := tornjoin.Find(bytes.TrimSuffix(line, []byte("\n"))); ok {
			s.addJoined(c, res, line, &j, e, r)
			continue
		}
		res.bad = badReason(err)
		if c.openEnd && i == len(c.ends)-1 {
			res.bad, res.torn = "", true
		}
		c.res = append(c.res, res)
	}
}

// addJoined adds the events of a line that is a piece followed by a whole
// event line (tornjoin.Find), each read from the event Find decoded: the
// piece's first when the piece is an event that lost only its newline,
// then the whole line's, which reports the piece.
func (s *scanner) addJoined(c *chunk, res result, line []byte, j *tornjoin.Join, e *decoded, r *rec) {
	keep := s.opts.KeepLines && !s.sumsOnly
	if j.PieceEvent != nil {
		decodedLine(line[:j.Piece], j.PieceEvent, r, keep, s.grep, s.seed)
		first := res
		first.piece = true
		s.addEvent(c, first, e, r)
	}
	decodedLine(line[j.Piece:], &j.Event, r, keep, s.grep, s.seed)
	res.joined, res.pieceKind = j.Piece, pieceKind(j, bytes.TrimSuffix(line, []byte("\n")))
	s.addEvent(c, res, e, r)
}

// pieceKind is what the piece of the joined line text (without its
// newline) is.
func pieceKind(j *tornjoin.Join, text []byte) Piece {
	switch {
	case j.Repeats(text):
		return PieceRepeated
	case j.PieceEvent != nil:
		return PieceEvent
	}
	return PieceTorn
}

// addEvent filters and encodes the event read into r as res.
func (s *scanner) addEvent(c *chunk, res result, e *decoded, r *rec) {
	f := &s.opts.Filter
	res.session, res.spanID, res.traceID, res.phase = r.session, r.spanID, r.traceID, r.phase
	res.seq, res.ts, res.tsText, res.ok = r.ev.Seq, r.ev.TSMicros, r.ev.TS, r.ev.OK
	// An operation's two lines share its span id and op, but may name
	// different traces: the trace is matched per operation (keeps).
	r.ev.traceMatch = f.TraceID != "" && s.trace.match(r.traceID)
	if (f.Session != nil && *f.Session != r.session) || (f.SpanID != "" && !s.span.match(r.spanID)) ||
		(f.Op != "" && f.Op != r.op) {
		res.skip = true
		c.res = append(c.res, res)
		return
	}
	if s.sumsOnly {
		c.res = append(c.res, res)
		return
	}
	// A command is written as a JSON list ("rm","-rf") and shown joined
	// (rm -rf): --grep finds it either way, in the whole command, not the
	// one cut to maxWhat.
	findWhat := len(s.grepCmd) > 0 && !r.ev.match
	if !s.opts.SkipWhat || findWhat { // decodeLine left r.what empty
		e.what = appendWholeWhat(e.what[:0], r.data, r.dataField)
		r.ev.match = r.ev.match || (findWhat && holdsAny(e.what, s.grepCmd))
		if !s.opts.SkipWhat {
			e.what = cutWhat(e.what)
			r.what = view(e.what)
		}
	}
	r.spanHash = hashSpan(s.seed, r.spanID)
	r.order = orderOf(c.src, res.num)
	r.opSeq = r.ev.Seq
	off := len(c.out)
	c.out = appendRec(c.out, r)
	res.rec = span{off: uint32(off), end: uint32(len(c.out))}
	c.res = append(c.res, res)
}
