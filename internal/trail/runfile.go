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

// run reads one spilled run back, a block at a time, or the sorted arena
// kept in memory (arena and spans set); cur is a view of the block or the
// arena, valid until the next call of next.
type run struct {
	r     *bufio.Reader
	comp  []byte
	block []byte
	pos   int
	cur   []byte
	arena []byte
	spans []span
}

func newRun(r io.Reader) *run { return &run{r: bufio.NewReaderSize(r, 32<<10)} }

func (r *run) next() (bool, error) {
	if r.r == nil {
		if len(r.spans) == 0 {
			return false, nil
		}
		sp := r.spans[0]
		r.cur, r.spans = r.arena[sp.off:sp.end], r.spans[1:]
		return true, nil
	}
	if r.pos >= len(r.block) {
		ok, err := r.readBlock()
		if !ok || err != nil {
			return false, err
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

// readBlock reads and decompresses the next block; false at the end.
func (r *run) readBlock() (bool, error) {
	n, err := binary.ReadUvarint(r.r)
	if errors.Is(err, io.EOF) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("temporary sort file: %w", err)
	}
	if n > uint64(s2.MaxEncodedLen(maxRecordBytes+binary.MaxVarintLen64)) {
		return false, errCorruptRun
	}
	if uint64(cap(r.comp)) < n {
		r.comp = make([]byte, n)
	}
	r.comp = r.comp[:n]
	if _, err := io.ReadFull(r.r, r.comp); err != nil {
		return false, fmt.Errorf("temporary sort file: %w", err)
	}
	size, err := s2.DecodedLen(r.comp)
	if err != nil {
		return false, errCorruptRun
	}
	if cap(r.block) < size {
		r.block = make([]byte, size)
	}
	if r.block, err = s2.Decode(r.block[:cap(r.block)], r.comp); err != nil || len(r.block) == 0 {
		return false, errCorruptRun
	}
	r.pos = 0
	return true, nil
}
