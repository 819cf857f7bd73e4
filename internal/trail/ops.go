package trail

import (
	"context"
	"encoding/binary"
	"strings"
)

// opKey names an operation as the sort groups it: its session and its
// span id's hash (the record's spanHash), a fixed size key that needs no
// copy of the span id.
type opKey struct {
	session  [16]byte
	spanHash uint64
}

// pairer gives each finish its start's seq as it streams by, so that the
// sort puts the two side by side. It holds the operations in flight (a
// start waiting for its finish: a seq) and the finishes read before their
// start (their record) up to a budget; over it, those finishes move to a
// sort of their own (orphans), which pairs them at the end with the starts
// read after them. The operations in flight are bounded too: over
// inflightMax they move to orphans as marked starts, and the finishes of
// those operations follow them there.
type pairer struct {
	inflight    map[opKey]int64
	inflightMax int
	early       map[opKey][]byte
	// earlyBytes are the records early holds; over earlyMax they move to
	// orphans.
	earlyBytes, earlyMax int
	// alone names the operations with a finish passed on at its own seq
	// (no start met it) that a copy of may also be passed paired: the
	// grouper leaves out a copy of a finish it already passed for them.
	alone map[opKey]map[uint64]uint64
	// paired has the keys of the finishes passed paired, evicted those of
	// the finishes moved to orphans: filters, so a trail of finishes
	// alone holds no entry per finish.
	paired, evicted keyFilter
	// moved has the keys of the starts moved from inflight to orphans.
	moved        keyFilter
	orphans      *sorter // nil until early or inflight first passes its budget
	newSorter    func() *sorter
	marker       []byte
	sink         func([]byte) error
	peak         int // the most finishes early held
	peakInflight int // the most operations inflight held
}

// inflightBytes is about what an entry of inflight takes, map included.
const inflightBytes = 64

func newPairer(sink func([]byte) error, budget int, newSorter func() *sorter) *pairer {
	return &pairer{inflight: map[opKey]int64{}, early: map[opKey][]byte{}, alone: map[opKey]map[uint64]uint64{},
		sink: sink, earlyMax: budget, inflightMax: max(1, budget/inflightBytes), newSorter: newSorter}
}

// sinkAlone passes on a finish no start met, at its own seq; copied tells
// that a copy of it may be passed paired.
func (p *pairer) sinkAlone(k opKey, f []byte, copied bool) error {
	if copied || p.paired.has(k) {
		if _, ok := p.alone[k]; !ok {
			p.alone[k] = nil // its hashes, once the grouper passes one
		}
	}
	return p.sink(f)
}

func setOpSeq(r []byte, seq int64) { binary.BigEndian.PutUint64(r[16:24], sortable(seq)) }

// ownSeq puts a record's own seq in its opSeq.
func ownSeq(r []byte) { copy(r[16:24], r[33:41]) }

func keyOf(r []byte) opKey { return opKey{[16]byte(r[:16]), binary.BigEndian.Uint64(r[24:32])} }

func (p *pairer) add(res *result, r []byte) error {
	k := keyOf(r)
	if res.phase == 0 {
		if f, ok := p.early[k]; ok {
			p.dropEarly(k, f)
			setOpSeq(f, res.seq)
			p.paired.add(k)
			if err := p.sink(f); err != nil {
				return err
			}
		} else {
			p.inflight[k] = res.seq
			p.peakInflight = max(p.peakInflight, len(p.inflight))
			if err := p.markStart(k, r); err != nil {
				return err
			}
			if len(p.inflight) > p.inflightMax {
				if err := p.moveInflight(); err != nil {
					return err
				}
			}
		}
		return p.sink(r)
	}
	if seq, ok := p.inflight[k]; ok {
		delete(p.inflight, k)
		setOpSeq(r, seq)
		p.paired.add(k)
		return p.sink(r)
	}
	if p.moved.has(k) {
		return p.evictFinish(k, r)
	}
	if old, ok := p.early[k]; ok {
		// A second finish before any start: the first stays alone.
		p.dropEarly(k, old)
		if err := p.sinkAlone(k, old, true); err != nil {
			return err
		}
	}
	p.early[k] = append([]byte(nil), r...)
	p.earlyBytes += len(r)
	p.peak = max(p.peak, len(p.early))
	if p.earlyBytes > p.earlyMax {
		return p.evict()
	}
	return nil
}

// close releases the orphans' runs.
func (p *pairer) close() {
	if p.orphans != nil {
		p.orphans.close()
	}
}

func (p *pairer) dropEarly(k opKey, f []byte) {
	delete(p.early, k)
	p.earlyBytes -= len(f)
}

// evict moves the finishes early holds to orphans, sorted by session and
// span (opSeq zero): the starts read after them are marked there too.
func (p *pairer) evict() error {
	if p.orphans == nil {
		p.orphans = p.newSorter()
	}
	for k, f := range p.early {
		p.dropEarly(k, f)
		setOpSeq(f, 0)
		p.evicted.add(k)
		if err := p.orphans.add(f); err != nil {
			return err
		}
	}
	return nil
}

// moveInflight moves the operations in flight to orphans as marked
// starts (the start itself is sunk already), where their finishes meet
// them at the end.
func (p *pairer) moveInflight() error {
	if p.orphans == nil {
		p.orphans = p.newSorter()
	}
	var m [keyLen]byte
	for k, seq := range p.inflight {
		copy(m[:16], k.session[:])
		setOpSeq(m[:], 0)
		binary.BigEndian.PutUint64(m[24:32], k.spanHash)
		binary.BigEndian.PutUint64(m[33:41], sortable(seq))
		p.moved.add(k)
		if err := p.orphans.add(m[:]); err != nil {
			return err
		}
	}
	clear(p.inflight)
	return nil
}

// evictFinish moves a finish whose start may be among those moved to
// orphans there, with a finish of its operation that early holds.
func (p *pairer) evictFinish(k opKey, r []byte) error {
	if old, ok := p.early[k]; ok {
		p.dropEarly(k, old)
		setOpSeq(old, 0)
		if err := p.orphans.add(old); err != nil {
			return err
		}
	}
	setOpSeq(r, 0)
	p.evicted.add(k)
	return p.orphans.add(r)
}

// markStart copies a start no early finish met into orphans when a
// finish of its operation may be there.
func (p *pairer) markStart(k opKey, r []byte) error {
	if p.orphans == nil || !p.evicted.has(k) {
		return nil
	}
	p.marker = append(p.marker[:0], r...)
	setOpSeq(p.marker, 0)
	return p.orphans.add(p.marker)
}

// flush passes on the finishes whose start never came, at their own seq,
// and those in orphans, paired with a start marked after them if any.
func (p *pairer) flush() error {
	if p.orphans == nil {
		for k, f := range p.early {
			p.dropEarly(k, f)
			if err := p.sinkAlone(k, f, false); err != nil {
				return err
			}
		}
		return nil
	}
	if err := p.evict(); err != nil {
		return err
	}
	var (
		cur      opKey
		have     bool
		startSeq int64 // of the group's first start marked, -1: none yet
		used     bool  // a finish of the group took it
	)
	return p.orphans.each(func(rec []byte) error {
		b := append(p.marker[:0], rec...) // the sort's buffer is not ours to change
		p.marker = b
		k := keyOf(b)
		if !have || k != cur {
			cur, have, startSeq, used = k, true, -1, false
		}
		if b[32] == 0 { // a start marked: sunk already
			if startSeq < 0 {
				startSeq = int64(binary.BigEndian.Uint64(b[33:]) ^ 1<<63)
			}
			return nil
		}
		if startSeq >= 0 && !used {
			used = true
			setOpSeq(b, startSeq)
			p.paired.add(k)
			return p.sink(b)
		}
		ownSeq(b)
		return p.sinkAlone(k, b, used)
	})
}

// ReadOps reads the sources (file paths, "-" for Options.Stdin; see
// Expand) and calls fn with each operation that passes the filter, in
// session and seq order. The Op is valid only during the call.
func ReadOps(ctx context.Context, sources []string, opts Options, fn func(*Op) error) (Stats, error) {
	return readOps(ctx, sources, opts, fn, nil)
}

// readOps is ReadOps; seen, when set, is given the pairer (a test reads
// what it held).
func readOps(ctx context.Context, sources []string, opts Options, fn func(*Op) error, seen func(*pairer)) (Stats, error) {
	runBytes := opts.RunBytes
	if runBytes <= 0 {
		runBytes = DefaultRunBytes
	}
	st := Stats{Sources: len(sources)}
	srt := newSorter(runBytes, opts.TempDir)
	defer srt.close()
	p := newPairer(srt.add, runBytes/4, func() *sorter { return newSorter(runBytes/2, opts.TempDir) })
	defer p.close()
	if seen != nil {
		seen(p)
	}
	sc := newScanner(sources, opts)
	err := sc.each(ctx, &st, func(c *chunk, res *result) error {
		return p.add(res, c.out[res.rec.off:res.rec.end])
	})
	if err == nil {
		err = p.flush()
	}
	if err != nil {
		return st, err
	}
	g := grouper{filter: &opts.Filter, fn: fn, st: &st, alone: p.alone}
	if err := srt.each(g.add); err != nil {
		return st, err
	}
	return st, g.end()
}

// grouper turns the sorted records into operations: the records of one
// operation share session, opSeq and span.
type grouper struct {
	filter *Filter
	fn     func(*Op) error
	st     *Stats
	// alone holds, for each operation with a finish left without its
	// start, the hashes of its finishes passed so far, each with where it
	// was read (orderOf): a finish that copies one of them (at-least-once
	// delivery wrote it again after its operation was complete) sorts
	// apart from it and is left out here.
	alone map[opKey]map[uint64]uint64
	key   [groupKeyLen]byte
	have  bool
	op    Op
	r     rec
	evs   [2]Event  // the Op's events: valid only during fn
	lines [2][]byte // their lines
}

func (g *grouper) add(b []byte) error {
	if at, ok := g.repeatedFinish(b); ok {
		g.duplicate(at, orderAt(b))
		return nil
	}
	if g.have && string(b[:len(g.key)]) != string(g.key[:]) {
		if err := g.emit(); err != nil {
			return err
		}
	}
	if !g.have {
		copy(g.key[:], b)
		g.have = true
		g.op = Op{}
	}
	if !decodeRec(b, &g.r) {
		return errCorruptRun
	}
	r := &g.r
	slot := &g.op.Start
	if r.phase == 1 {
		slot = &g.op.Finish
	}
	if *slot != nil {
		if (*slot).hash == r.ev.hash {
			// The same line again: at-least-once delivery.
			g.duplicate(r.order, orderOf((*slot).Source, (*slot).LineNum))
			return nil
		}
		// Another event in the same place (a reused seq or span id): an
		// operation of its own, so that no line is left out.
		if err := g.emit(); err != nil {
			return err
		}
		g.have = true
		g.op = Op{}
		slot = &g.op.Start
		if r.phase == 1 {
			slot = &g.op.Finish
		}
	}
	ev := &g.evs[r.phase]
	*ev = r.ev
	if ev.Line != nil {
		// The record's buffer moves on before the operation is complete.
		g.lines[r.phase] = append(g.lines[r.phase][:0], ev.Line...)
		ev.Line = g.lines[r.phase]
	}
	*slot = ev
	if g.op.What == "" || r.phase == 0 {
		g.op.What = r.what
	}
	// The start's trace is the operation's, the first its lines carry:
	// sessions sums a session's first trace from the lines as read.
	if g.op.TraceID == "" || r.phase == 0 && r.traceID != "" {
		g.op.TraceID = r.traceID
	}
	g.op.Session, g.op.SpanID, g.op.Op = r.session, r.spanID, r.op
	return nil
}

// duplicate counts a copy of an event left out; at and first are where
// the copy and the event it repeats were read (orderOf).
func (g *grouper) duplicate(at, first uint64) {
	g.st.Duplicates++
	if at == first {
		g.st.InLine++
	}
}

// repeatedFinish reports whether record b is a finish of an operation
// in g.alone that copies a finish already passed, with where that finish
// was read (orderOf), and notes b if not.
func (g *grouper) repeatedFinish(b []byte) (uint64, bool) {
	if len(g.alone) == 0 || len(b) < keyLen+bodyFixed || b[32] != 1 {
		return 0, false
	}
	k := keyOf(b)
	seen, ok := g.alone[k]
	if !ok {
		return 0, false
	}
	if seen == nil {
		seen = map[uint64]uint64{}
		g.alone[k] = seen
	}
	h := binary.BigEndian.Uint64(b[keyLen+17:])
	if at, dup := seen[h]; dup {
		return at, true
	}
	seen[h] = orderAt(b)
	return 0, false
}

// orderAt is record b's order, where its line was read (orderOf).
func orderAt(b []byte) uint64 { return binary.BigEndian.Uint64(b[keyLen-8:]) }

func (g *grouper) end() error {
	if !g.have {
		return nil
	}
	return g.emit()
}

func (g *grouper) emit() error {
	g.have = false
	op := &g.op
	if !g.filter.keeps(op) {
		return nil
	}
	g.st.Ops++
	if op.Open() {
		g.st.Open++
	}
	if op.Failed() {
		g.st.Failed++
	}
	return g.fn(op)
}

// keeps applies the filters that need both events of an operation.
func (f *Filter) keeps(op *Op) bool {
	if f.Failed && !op.Failed() {
		return false
	}
	first := op.First()
	if f.Since != nil && first.TSMicros < f.Since.UnixMicro() {
		return false
	}
	if f.Until != nil && first.TSMicros >= f.Until.UnixMicro() {
		return false
	}
	if f.Grep != "" && (op.Start == nil || !op.Start.match) && (op.Finish == nil || !op.Finish.match) {
		return false
	}
	if f.TraceID != "" && (op.Start == nil || !op.Start.traceMatch) && (op.Finish == nil || !op.Finish.traceMatch) {
		return false
	}
	return true
}

// idMatches reports whether a trace or span id read from a line is the one
// asked for: OTel ids are hex, the same whatever the case of its letters;
// an id that is not hex (a span id of the Python SDK's own) is matched as
// written.
func idMatches(want, got string) bool {
	return want == got || len(want) == len(got) && isHex(want) && strings.EqualFold(want, got)
}

func isHex(s string) bool {
	for i := range len(s) {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') && (c < 'A' || c > 'F') {
			return false
		}
	}
	return true
}
