package trail

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/s2"
)

// A spilled run is a sequence of blocks, each a uvarint length and that
// many bytes of S2-compressed records, each record a uvarint length and
// its bytes. Audit lines compress several times over, and writing fresh
// file data costs far more than compressing it: a run holds a fifth of
// what it would uncompressed.
const runBlock = 32 << 10 // records per block, before compression; a longer record is a block alone

// maxRecordBytes bounds a record: the longest line and the fields beside it.
const maxRecordBytes = maxLineBytes + 64<<10

// runWriter writes a run's records in blocks.
type runWriter struct {
	w     *bufio.Writer
	block []byte
	comp  []byte
}

func newRunWriter(w io.Writer) *runWriter {
	return &runWriter{w: bufio.NewWriterSize(w, 128<<10), block: make([]byte, 0, runBlock+binary.MaxVarintLen64)}
}

// add appends one record, writing the block first when the record would
// overflow it.
func (rw *runWriter) add(rec []byte) error {
	if len(rw.block) > 0 && len(rw.block)+binary.MaxVarintLen64+len(rec) > runBlock {
		if err := rw.writeBlock(); err != nil {
			return err
		}
	}
	rw.block = binary.AppendUvarint(rw.block, uint64(len(rec)))
	rw.block = append(rw.block, rec...)
	return nil
}

func (rw *runWriter) writeBlock() error {
	rw.comp = s2.Encode(rw.comp[:cap(rw.comp)], rw.block)
	rw.block = rw.block[:0]
	var pre [binary.MaxVarintLen64]byte
	_, _ = rw.w.Write(pre[:binary.PutUvarint(pre[:], uint64(len(rw.comp)))])
	_, err := rw.w.Write(rw.comp)
	if err != nil {
		return fmt.Errorf("temporary file for sorting: %w", err)
	}
	return nil
}

func (rw *runWriter) flush() error {
	if len(rw.block) > 0 {
		if err := rw.writeBlock(); err != nil {
			return err
		}
	}
	if err := rw.w.Flush(); err != nil {
		return fmt.Errorf("temporary file for sorting: %w", err)
	}
	return nil
}

// run reads one spilled run back, or the sorted arena kept in memory
// (arena and spans set); cur is a view of a block or of the arena, valid
// until the next call of next. A spilled run's blocks are read and
// decompressed ahead by a goroutine of its own (see prefetch), so that the
// merge, which is otherwise one core's work, does not do it too.
type run struct {
	blocks <-chan readBlock // decompressed blocks in order; nil for the arena
	free   chan<- []byte    // blocks the merge is done with
	ended  bool
	block  []byte
	pos    int
	cur    []byte
	arena  []byte
	spans  []span
}

// readBlock is one block read ahead, or the end (b nil) with its error.
type readBlock struct {
	b   []byte
	err error
}

// runBuffers is how many blocks a run holds: the one being merged and the
// one read ahead.
const runBuffers = 2

// newRun starts reading r ahead; the reading stops at its end, on an
// error, or when stop closes, and then calls done.
func newRun(r io.Reader, stop <-chan struct{}, done func()) *run {
	blocks := make(chan readBlock, 1)
	free := make(chan []byte, runBuffers)
	for range runBuffers {
		free <- nil
	}
	go prefetch(bufio.NewReaderSize(r, 32<<10), blocks, free, stop, done)
	return &run{blocks: blocks, free: free}
}

func prefetch(br *bufio.Reader, blocks chan<- readBlock, free <-chan []byte, stop <-chan struct{}, done func()) {
	defer done()
	var comp []byte
	for {
		var buf []byte
		select {
		case buf = <-free:
		case <-stop:
			return
		}
		b, ok, err := readRunBlock(br, &comp, buf)
		if !ok || err != nil {
			b = nil
		}
		select {
		case blocks <- readBlock{b: b, err: err}:
		case <-stop:
			return
		}
		if b == nil {
			return
		}
	}
}

func (r *run) next() (bool, error) {
	if r.blocks == nil {
		if len(r.spans) == 0 {
			return false, nil
		}
		sp := r.spans[0]
		r.cur, r.spans = r.arena[sp.off:sp.end], r.spans[1:]
		return true, nil
	}
	if r.pos >= len(r.block) {
		if r.ended {
			return false, nil
		}
		if r.block != nil {
			r.free <- r.block[:0] // never blocks: free has room for every buffer
		}
		rb := <-r.blocks
		r.block, r.pos = rb.b, 0
		if rb.b == nil {
			r.ended = true
			return false, rb.err
		}
	}
	n, k := binary.Uvarint(r.block[r.pos:])
	if k <= 0 || uint64(len(r.block)-r.pos-k) < n {
		return false, errCorruptRun
	}
	r.cur = r.block[r.pos+k : r.pos+k+int(n)]
	r.pos += k + int(n)
	return true, nil
}

// readRunBlock reads and decompresses the next block into buf, with comp
// as room for the compressed bytes; false at the end.
func readRunBlock(br *bufio.Reader, comp *[]byte, buf []byte) ([]byte, bool, error) {
	n, err := binary.ReadUvarint(br)
	if errors.Is(err, io.EOF) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("temporary sort file: %w", err)
	}
	if n > uint64(s2.MaxEncodedLen(maxRecordBytes+binary.MaxVarintLen64)) {
		return nil, false, errCorruptRun
	}
	if uint64(cap(*comp)) < n {
		*comp = make([]byte, n)
	}
	c := (*comp)[:n]
	if _, err := io.ReadFull(br, c); err != nil {
		return nil, false, fmt.Errorf("temporary sort file: %w", err)
	}
	size, err := s2.DecodedLen(c)
	if err != nil {
		return nil, false, errCorruptRun
	}
	if cap(buf) < size {
		buf = make([]byte, size)
	}
	if buf, err = s2.Decode(buf[:cap(buf)], c); err != nil || len(buf) == 0 {
		return nil, false, errCorruptRun
	}
	return buf, true, nil
}
