package trail

import (
	"bufio"
	"bytes"
	"cmp"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
)

// sorter is an external merge sort of records: records gather in an arena
// until it holds runBytes, then are sorted and spilled to a temporary file
// (unlinked at once, so nothing is left behind); the runs are merged at the
// end. A full arena is sorted and written by a goroutine while the next
// one fills, so memory is two arenas plus one read buffer per run.
type sorter struct {
	runBytes int
	tmpDir   string
	arena    []byte
	spans    []span
	runs     []*os.File
	// spilling is the run being written, nil when none is.
	spilling chan spilled
}

// spilled is a finished spill: its buffers, to fill again, and its error.
type spilled struct {
	arena []byte
	spans []span
	err   error
}

// span is a record in the arena with its key's first 24 bytes (session and
// opSeq) as integers, which settle almost every comparison without
// touching the arena.
type span struct {
	k0, k1, k2 uint64
	off, end   uint32
}

func (x span) cmp(y span, a []byte) int {
	switch {
	case x.k0 != y.k0:
		return cmp.Compare(x.k0, y.k0)
	case x.k1 != y.k1:
		return cmp.Compare(x.k1, y.k1)
	case x.k2 != y.k2:
		return cmp.Compare(x.k2, y.k2)
	}
	return bytes.Compare(a[x.off+24:x.off+keyLen], a[y.off+24:y.off+keyLen])
}

const runReadBuf = 64 << 10

func newSorter(runBytes int, tmpDir string) *sorter {
	return &sorter{runBytes: runBytes, tmpDir: tmpDir}
}

// add takes one encoded record.
func (s *sorter) add(r []byte) error {
	if len(s.arena)+len(r) > s.runBytes && len(s.spans) > 0 {
		if err := s.spill(); err != nil {
			return err
		}
	}
	if s.arena == nil {
		// Start small: most trails never fill the budget.
		s.arena = make([]byte, 0, min(s.runBytes, 1<<20))
	}
	off := len(s.arena)
	s.arena = append(s.arena, r...)
	s.spans = append(s.spans, span{
		k0: binary.BigEndian.Uint64(r[0:]), k1: binary.BigEndian.Uint64(r[8:]), k2: binary.BigEndian.Uint64(r[16:]),
		off: uint32(off), end: uint32(len(s.arena)),
	})
	return nil
}

func (s *sorter) sortArena() {
	a := s.arena
	slices.SortFunc(s.spans, func(x, y span) int { return x.cmp(y, a) })
}

// spill starts writing the arena, sorted, as one run, and gives the
// arena of the run written before (if any) back to add.
func (s *sorter) spill() error {
	done, err := s.wait()
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(s.tmpDir, "sandboxaudit-sort-*")
	if err != nil {
		return fmt.Errorf("temporary file for sorting: %w", err)
	}
	_ = os.Remove(f.Name()) // the open file stays readable; nothing to clean up later
	s.runs = append(s.runs, f)
	ch := make(chan spilled, 1)
	s.spilling = ch
	go func(arena []byte, spans []span) {
		ch <- spilled{arena: arena[:0], spans: spans[:0], err: writeRun(f, arena, spans)}
	}(s.arena, s.spans)
	s.arena, s.spans = done.arena, done.spans
	return nil
}

// wait waits for the run being written, if any.
func (s *sorter) wait() (spilled, error) {
	if s.spilling == nil {
		return spilled{}, nil
	}
	done := <-s.spilling
	s.spilling = nil
	return done, done.err
}

// writeRun sorts one arena's records and writes them to f, then rewinds f.
func writeRun(f *os.File, arena []byte, spans []span) error {
	slices.SortFunc(spans, func(x, y span) int { return x.cmp(y, arena) })
	w := bufio.NewWriterSize(f, 256<<10)
	var pre [binary.MaxVarintLen64]byte
	for _, sp := range spans {
		rec := arena[sp.off:sp.end]
		n := binary.PutUvarint(pre[:], uint64(len(rec)))
		_, _ = w.Write(pre[:n])
		_, _ = w.Write(rec)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("temporary file for sorting: %w", err)
	}
	_, err := f.Seek(0, io.SeekStart)
	return err
}

// each calls fn with every record in key order. The slice is valid only
// during the call.
func (s *sorter) each(fn func([]byte) error) error {
	defer s.close()
	if len(s.runs) == 0 {
		s.sortArena()
		for _, sp := range s.spans {
			if err := fn(s.arena[sp.off:sp.end]); err != nil {
				return err
			}
		}
		return nil
	}
	if len(s.spans) > 0 {
		if err := s.spill(); err != nil {
			return err
		}
	}
	if _, err := s.wait(); err != nil {
		return err
	}
	s.arena, s.spans = nil, nil
	h := make(runHeap, 0, len(s.runs))
	for _, f := range s.runs {
		r := &run{r: bufio.NewReaderSize(f, runReadBuf)}
		ok, err := r.next()
		if err != nil {
			return err
		}
		if ok {
			h = append(h, r)
		}
	}
	heap.Init(&h)
	for len(h) > 0 {
		r := h[0]
		if err := fn(r.cur); err != nil {
			return err
		}
		ok, err := r.next()
		if err != nil {
			return err
		}
		if ok {
			heap.Fix(&h, 0)
		} else {
			heap.Pop(&h)
		}
	}
	return nil
}

func (s *sorter) close() {
	_, _ = s.wait() // a run still being written is dropped with the rest
	for _, f := range s.runs {
		_ = f.Close()
	}
	s.runs = nil
}

// run reads one spilled run back.
type run struct {
	r   *bufio.Reader
	cur []byte
}

func (r *run) next() (bool, error) {
	n, err := binary.ReadUvarint(r.r)
	if errors.Is(err, io.EOF) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("temporary sort file: %w", err)
	}
	if cap(r.cur) < int(n) {
		r.cur = make([]byte, n)
	}
	r.cur = r.cur[:n]
	if _, err := io.ReadFull(r.r, r.cur); err != nil {
		return false, fmt.Errorf("temporary sort file: %w", err)
	}
	return true, nil
}

type runHeap []*run

func (h runHeap) Len() int           { return len(h) }
func (h runHeap) Less(i, j int) bool { return bytes.Compare(h[i].cur[:keyLen], h[j].cur[:keyLen]) < 0 }
func (h runHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *runHeap) Push(x any)        { *h = append(*h, x.(*run)) }
func (h *runHeap) Pop() any {
	old := *h
	r := old[len(old)-1]
	*h = old[:len(old)-1]
	return r
}
