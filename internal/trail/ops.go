package trail

import (
	"context"
	"encoding/binary"
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
// start (their record), nothing else.
type pairer struct {
	inflight map[opKey]int64
	early    map[opKey][]byte
	// alone names the operations with a finish passed on at its own seq
	// (no start met it); the grouper leaves out a copy of a finish it
	// already passed for them.
	alone map[opKey]map[uint64]struct{}
	sink  func([]byte) error
}

func newPairer(sink func([]byte) error) *pairer {
	return &pairer{inflight: map[opKey]int64{}, early: map[opKey][]byte{}, alone: map[opKey]map[uint64]struct{}{}, sink: sink}
}

// sinkAlone passes on a finish no start met, at its own seq.
func (p *pairer) sinkAlone(k opKey, f []byte) error {
	if p.alone[k] == nil {
		p.alone[k] = map[uint64]struct{}{}
	}
	return p.sink(f)
}

func setOpSeq(r []byte, seq int64) { binary.BigEndian.PutUint64(r[16:24], sortable(seq)) }

func (p *pairer) add(res *result, r []byte) error {
	k := opKey{res.session, binary.BigEndian.Uint64(r[24:32])}
	if res.phase == 0 {
		if f, ok := p.early[k]; ok {
			delete(p.early, k)
			setOpSeq(f, res.seq)
			if err := p.sink(f); err != nil {
				return err
			}
		} else {
			p.inflight[k] = res.seq
		}
		return p.sink(r)
	}
	if seq, ok := p.inflight[k]; ok {
		delete(p.inflight, k)
		setOpSeq(r, seq)
		return p.sink(r)
	}
	if old, ok := p.early[k]; ok {
		// A second finish before any start: the first stays alone.
		if err := p.sinkAlone(k, old); err != nil {
			return err
		}
	}
	p.early[k] = append([]byte(nil), r...)
	return nil
}

// flush passes on the finishes whose start never came, at their own seq.
func (p *pairer) flush() error {
	for k, f := range p.early {
		delete(p.early, k)
		if err := p.sinkAlone(k, f); err != nil {
			return err
		}
	}
	return nil
}

// ReadOps reads the sources (file paths, "-" for Options.Stdin; see
// Expand) and calls fn with each operation that passes the filter, in
// session and seq order. The Op is valid only during the call.
func ReadOps(ctx context.Context, sources []string, opts Options, fn func(*Op) error) (Stats, error) {
	runBytes := opts.RunBytes
	if runBytes <= 0 {
		runBytes = DefaultRunBytes
	}
	st := Stats{Sources: len(sources)}
	srt := newSorter(runBytes, opts.TempDir)
	defer srt.close()
	p := newPairer(srt.add)
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
	// start, the hashes of its finishes passed so far: a finish that
	// copies one of them (at-least-once delivery wrote it again after its
	// operation was complete) sorts apart from it and is left out here.
	alone map[opKey]map[uint64]struct{}
	key   [groupKeyLen]byte
	have  bool
	op    Op
	r     rec
	evs   [2]Event  // the Op's events: valid only during fn
	lines [2][]byte // their lines
}

func (g *grouper) add(b []byte) error {
	if g.repeatedFinish(b) {
		g.st.Duplicates++
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
			g.st.Duplicates++ // the same line again: at-least-once delivery
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
	g.op.Session, g.op.SpanID, g.op.TraceID, g.op.Op = r.session, r.spanID, r.traceID, r.op
	return nil
}

// repeatedFinish reports whether record b is a finish of an operation
// in g.alone that copies a finish already passed, and notes it if not.
func (g *grouper) repeatedFinish(b []byte) bool {
	if len(g.alone) == 0 || len(b) < keyLen+bodyFixed || b[32] != 1 {
		return false
	}
	seen, ok := g.alone[opKey{[16]byte(b[:16]), binary.BigEndian.Uint64(b[24:32])}]
	if !ok {
		return false
	}
	h := binary.BigEndian.Uint64(b[keyLen+17:])
	if _, dup := seen[h]; dup {
		return true
	}
	seen[h] = struct{}{}
	return false
}

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
	if !f.Since.IsZero() && first.TSMicros < f.Since.UnixMicro() {
		return false
	}
	if !f.Until.IsZero() && first.TSMicros >= f.Until.UnixMicro() {
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
	if want == got {
		return true
	}
	if len(want) != len(got) || !isHex(want) {
		return false
	}
	for i := range len(want) {
		if lowerASCII(want[i]) != lowerASCII(got[i]) {
			return false
		}
	}
	return true
}

func isHex(s string) bool {
	for i := range len(s) {
		c := lowerASCII(s[i])
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
