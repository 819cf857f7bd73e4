package trail

import (
	"bytes"
	"cmp"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
)

// sorter is an external merge sort of records: records gather in an arena
// until it holds runBytes, then are sorted and spilled to a temporary file
// (unlinked at once, so nothing is left behind); the runs are merged at the
// end, the last arena from memory. A full arena is sorted and written by a
// goroutine while the next one fills; up to maxSpilling are written at once,
// so that a slow write does not hold up the reading. Memory is
// maxSpilling+1 arenas plus one read buffer per run.
type sorter struct {
	runBytes int
	tmpDir   string
	arena    []byte
	spans    []span
	// scratch serves the last arena's sort; each spill has its own.
	scratch *sortScratch
	runs    []*os.File
	// spilling are the runs being written, oldest first.
	spilling []chan spilled
}

// maxSpilling bounds the runs written at once.
const maxSpilling = 2

// spilled is a finished spill: its buffers, to fill again, and its error.
type spilled struct {
	arena   []byte
	spans   []span
	scratch *sortScratch
	err     error
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
	// The rest of the key: spanHash(8) phase(1) seq(8) order(8), compared
	// field by field (an operation's two records get this far).
	xa, ya := a[x.off+24:x.off+keyLen], a[y.off+24:y.off+keyLen]
	if c := cmp.Compare(binary.BigEndian.Uint64(xa), binary.BigEndian.Uint64(ya)); c != 0 {
		return c
	}
	if xa[8] != ya[8] {
		return cmp.Compare(xa[8], ya[8])
	}
	if c := cmp.Compare(binary.BigEndian.Uint64(xa[9:]), binary.BigEndian.Uint64(ya[9:])); c != 0 {
		return c
	}
	return cmp.Compare(binary.BigEndian.Uint64(xa[17:]), binary.BigEndian.Uint64(ya[17:]))
}

// sortScratch is the room sort reuses from one run to the next.
type sortScratch struct {
	spare    []span
	sessions []int32 // each span's session, as its index in keys
	keys     [][2]uint64
	index    map[[2]uint64]int32
	start    []int // each session's first place in spare, by rank
}

// sort sorts spans by key and returns them, in spans or in the scratch's
// spare room (the other is kept as the next spare). A run holds the lines
// of the sessions interleaved, each session's nearly in seq order: so the
// records are dealt out by session first (a counting sort over the run's
// sessions, in key order), after which each session's records need few
// moves, where one comparison sort of them all would compare them
// n log n times.
func (sc *sortScratch) sort(spans []span, arena []byte) []span {
	byKey := func(x, y span) int { return x.cmp(y, arena) }
	if len(spans) < 256 {
		slices.SortFunc(spans, byKey)
		return spans
	}
	if sc.index == nil {
		sc.index = map[[2]uint64]int32{}
	}
	clear(sc.index)
	sc.keys, sc.sessions = sc.keys[:0], sc.sessions[:0]
	for _, sp := range spans {
		k := [2]uint64{sp.k0, sp.k1}
		i, ok := sc.index[k]
		if !ok {
			i = int32(len(sc.keys))
			sc.index[k] = i
			sc.keys = append(sc.keys, k)
		}
		sc.sessions = append(sc.sessions, i)
	}
	order := make([]int32, len(sc.keys))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		ka, kb := sc.keys[a], sc.keys[b]
		return cmp.Or(cmp.Compare(ka[0], kb[0]), cmp.Compare(ka[1], kb[1]))
	})
	// start[i]: where the records of session i (by first sight) begin.
	sc.start = slices.Grow(sc.start[:0], len(sc.keys))[:len(sc.keys)]
	clear(sc.start)
	for _, i := range sc.sessions {
		sc.start[i]++
	}
	at := 0
	for _, i := range order {
		n := sc.start[i]
		sc.start[i] = at
		at += n
	}
	out := slices.Grow(sc.spare[:0], len(spans))[:len(spans)]
	for j, sp := range spans {
		i := sc.sessions[j]
		out[sc.start[i]] = sp
		sc.start[i]++
	}
	// start[i] now ends session i's records.
	from := 0
	for _, i := range order {
		if seg := out[from:sc.start[i]]; !sortNearly(seg, arena) {
			slices.SortFunc(seg, byKey)
		}
		from = sc.start[i]
	}
	sc.spare = spans
	return out
}

// sortNearly sorts s by insertion as long as that takes few moves: a
// session's records come nearly in order (a finish a few lines after the
// starts that follow it), which insertion sorts in about one comparison
// each. It reports false, s still a permutation, once the moves pass
// twice the records.
func sortNearly(s []span, a []byte) bool {
	budget := 2*len(s) + 16
	for i := 1; i < len(s); i++ {
		x, j := s[i], i
		for ; j > 0 && x.cmp(s[j-1], a) < 0; j-- {
			s[j] = s[j-1]
			budget--
		}
		s[j] = x
		if budget < 0 {
			return false
		}
	}
	return true
}

func newSorter(runBytes int, tmpDir string) *sorter {
	return &sorter{runBytes: runBytes, tmpDir: tmpDir, scratch: &sortScratch{}}
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
	s.spans = s.scratch.sort(s.spans, s.arena)
}

// spill starts writing the arena, sorted, as one run, and gives the
// arena of the run written before (if any) back to add.
func (s *sorter) spill() error {
	var done spilled
	if len(s.spilling) == maxSpilling {
		var err error
		if done, err = s.waitOldest(); err != nil {
			return err
		}
	}
	f, err := os.CreateTemp(s.tmpDir, "sandboxaudit-sort-*")
	if err != nil {
		return fmt.Errorf("temporary file for sorting: %w", err)
	}
	_ = os.Remove(f.Name()) // the open file stays readable; nothing to clean up later
	s.runs = append(s.runs, f)
	ch := make(chan spilled, 1)
	s.spilling = append(s.spilling, ch)
	scratch := done.scratch
	if scratch == nil {
		scratch = &sortScratch{}
	}
	go func(arena []byte, spans []span) {
		spans = scratch.sort(spans, arena)
		ch <- spilled{arena: arena[:0], spans: spans[:0], scratch: scratch, err: writeRun(f, arena, spans)}
	}(s.arena, s.spans)
	n := len(s.spans)
	s.arena, s.spans = done.arena, done.spans
	if s.arena == nil {
		// The trail fills more than one arena: the next ones are made
		// full size at once rather than grown.
		s.arena, s.spans = make([]byte, 0, s.runBytes), make([]span, 0, n+n/8)
	}
	return nil
}

// waitOldest waits for the oldest run being written.
func (s *sorter) waitOldest() (spilled, error) {
	done := <-s.spilling[0]
	s.spilling = s.spilling[1:]
	return done, done.err
}

// wait waits for every run being written.
func (s *sorter) wait() error {
	var errs []error
	for len(s.spilling) > 0 {
		if _, err := s.waitOldest(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// writeRun writes one arena's records, sorted, to f, then rewinds f.
func writeRun(f *os.File, arena []byte, spans []span) error {
	w := newRunWriter(f)
	for _, sp := range spans {
		if err := w.add(arena[sp.off:sp.end]); err != nil {
			return err
		}
	}
	if err := w.flush(); err != nil {
		return err
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
	if err := s.wait(); err != nil {
		return err
	}
	h := make(runHeap, 0, len(s.runs)+1)
	if len(s.spans) > 0 {
		// The last arena is merged from memory: writing it only to read it
		// back would cost a run's compression for nothing.
		s.sortArena()
		r := &run{arena: s.arena, spans: s.spans}
		if ok, _ := r.next(); ok {
			h = append(h, r)
		}
	}
	stop := make(chan struct{})
	var reading sync.WaitGroup
	defer func() {
		close(stop)
		reading.Wait() // before close shuts the files
	}()
	for _, f := range s.runs {
		reading.Add(1)
		r := newRun(f, stop, reading.Done)
		ok, err := r.next()
		if err != nil {
			return err
		}
		if ok {
			h = append(h, r)
		}
	}
	return mergeRuns(h, fn)
}

// A mergeBatch carries merged records from the merging goroutine to the
// caller's: records, each a uvarint length and its bytes.
type mergeBatch struct{ b []byte }

const mergeBatchBytes = 256 << 10

// mergeRuns merges the runs on a goroutine of its own (reading, S2
// decoding, the heap) while fn takes the records on the caller's, so that
// the two halves of the last phase run on two cores. Three batches are in
// use at most.
func mergeRuns(h runHeap, fn func([]byte) error) error {
	full := make(chan *mergeBatch, 1)
	free := make(chan *mergeBatch, 3)
	for range 3 {
		free <- &mergeBatch{b: make([]byte, 0, mergeBatchBytes)}
	}
	stop := make(chan struct{})
	merged := make(chan error, 1)
	go func() {
		defer close(full)
		merged <- mergeInto(h, full, free, stop)
	}()
	var err error
	for mb := range full {
		for b := mb.b; err == nil && len(b) > 0; {
			rec, rest, ok := cutBytes(b)
			if !ok {
				err = errCorruptRun
				break
			}
			err = fn(rec)
			b = rest
		}
		mb.b = mb.b[:0]
		free <- mb
		if err != nil {
			close(stop)
			for mb := range full {
				free <- mb
			}
			break
		}
	}
	return errors.Join(err, <-merged)
}

// mergeInto fills batches from the heap of runs, in key order, until the
// runs end or stop closes.
func mergeInto(h runHeap, full chan<- *mergeBatch, free <-chan *mergeBatch, stop <-chan struct{}) error {
	heap.Init(&h)
	var mb *mergeBatch
	select {
	case mb = <-free:
	case <-stop:
		return nil
	}
	for len(h) > 0 {
		r := h[0]
		if len(mb.b) > 0 && len(mb.b)+binary.MaxVarintLen64+len(r.cur) > cap(mb.b) {
			select {
			case full <- mb:
			case <-stop:
				return nil
			}
			select {
			case mb = <-free:
			case <-stop:
				return nil
			}
		}
		mb.b = binary.AppendUvarint(mb.b, uint64(len(r.cur)))
		mb.b = append(mb.b, r.cur...)
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
	if len(mb.b) > 0 {
		select {
		case full <- mb:
		case <-stop:
		}
	}
	return nil
}

func (s *sorter) close() {
	_ = s.wait() // a run still being written is dropped with the rest
	for _, f := range s.runs {
		_ = f.Close()
	}
	s.runs = nil
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
