package trail

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/sandboxaudit/sandboxaudit/internal/seqset"
)

// Session sums up one session.
type Session struct {
	ID uuid.UUID
	// TraceID is the trace id of its first operation in ReadOps' order
	// that names one ("" when none does), or its first MaxTraceIDChars
	// characters when LongTrace is set.
	TraceID   string
	LongTrace *LongTraceID
	First     int64  // earliest event time, Unix microseconds
	Last      int64  // latest event time
	FirstTS   string // as written in the line
	LastTS    string
	Ops       int64 // operations (a start, or a finish whose start is missing)
	Failures  int64 // finished with ok false
	Open      int64 // started and never finished
	Events    int64
	// Missing counts the seqs from 1 to the highest read that no line
	// read carries: lost lines, or lines in files not read.
	Missing int64
	// MissingRanges are the first MaxMissingRanges ranges of them.
	MissingRanges []seqset.Range
}

// MaxMissingRanges bounds the ranges of missing seqs a Session keeps;
// the rest are counted in Missing.
const MaxMissingRanges = 5

// pairKey names an operation: its session and span id.
type pairKey struct {
	session [16]byte
	spanID  string
}

// ReadSessions reads the sources and sums up each session, ordered by its
// first event. Memory is one entry per session, with its seqs as ranges,
// plus the operations in flight; the sort is not needed. A session that
// uses a seq twice (a copy at-least-once delivery wrote, or another event
// reusing the seq) cannot be summed on the fly without keeping every
// line's hash: the sources are then read again as ReadOps reads them,
// which leaves exact copies out, so the sums are show's. So are they when
// more operations wait for their other event than maxWaiting allows (a
// trail of finishes alone, or of starts alone), which ReadOps pairs within
// its budget. Standard input
// is kept in a temporary file (deleted at once) for that second read.
// A live file is read the second time only as far as the first read
// went, so both passes see the same lines.
func ReadSessions(ctx context.Context, sources []string, opts Options) ([]Session, Stats, error) {
	return readSessions(ctx, sources, opts, nil)
}

// sessionSeams are a test's hooks into readSessions: held is told the
// most operations the first pass held waiting for their other event; between runs
// after the first pass when a second one follows.
type sessionSeams struct {
	held    *int
	between func()
}

// readSessions is ReadSessions, with a test's seams (nil: none).
func readSessions(ctx context.Context, sources []string, opts Options, seams *sessionSeams) ([]Session, Stats, error) {
	var held *int
	if seams != nil {
		held = seams.held
	}
	var again *keptInput
	if slices.Contains(sources, StdinName) && opts.Stdin != nil {
		again = &keptInput{}
		if again.f, again.err = os.CreateTemp(opts.TempDir, "sandboxaudit-stdin-*"); again.err == nil {
			_ = os.Remove(again.f.Name())
			defer func() { _ = again.f.Close() }()
		}
		opts.Stdin = io.TeeReader(opts.Stdin, again)
	}
	read := make([]int64, len(sources))
	opts.readBytes = read
	list, st, repeated, err := sumSessions(ctx, sources, opts, held)
	if err != nil || !repeated {
		return list, st, err
	}
	opts.readBytes, opts.bounds = nil, read
	if seams != nil && seams.between != nil {
		seams.between()
	}
	if again != nil {
		if again.err == nil {
			_, again.err = again.f.Seek(0, io.SeekStart)
		}
		if again.err != nil {
			return nil, st, fmt.Errorf("standard input repeats a seq and cannot be read again from its temporary file: %w", again.err)
		}
		opts.Stdin = again.f
	}
	return sessionsFromOps(ctx, sources, opts, st)
}

// keptInput keeps a copy of standard input in a temporary file. Failing
// to keep it (a full disk) does not fail the first read, which rarely
// needs the copy: err says why it is missing.
type keptInput struct {
	f   *os.File
	err error
}

func (k *keptInput) Write(p []byte) (int, error) {
	if k.err == nil {
		_, k.err = k.f.Write(p)
	}
	return len(p), nil
}

// sumSessions is ReadSessions' one pass; again reports a seq used twice in
// a session, or more operations waiting for their other event than
// maxWaiting allows, whose sums are then left to the second pass.
func sumSessions(ctx context.Context, sources []string, opts Options, held *int) ([]Session, Stats, bool, error) {
	st := Stats{Sources: len(sources)}
	sums := map[[16]byte]*sessionSum{}
	again := false
	w := newWaiting()
	limit := maxWaiting(opts.RunBytes)
	sc := newScanner(sources, opts)
	sc.sumsOnly = true
	err := sc.each(ctx, &st, func(_ *chunk, res *result) error {
		if again {
			return nil // the lines are counted; the sums are the second pass's
		}
		sum := sums[res.session]
		if sum == nil {
			sum = &sessionSum{Session: Session{ID: res.session}}
			sums[res.session] = sum
		}
		if sum.seqs.Add(res.seq) {
			again = true
		}
		sum.note(res)
		w.count(sum, res)
		waiting := w.size()
		if held != nil {
			*held = max(*held, waiting)
		}
		if waiting > limit {
			// A trail of finishes alone, or of starts alone: ReadOps pairs
			// them within a budget.
			again = true
			w = newWaiting()
		}
		return nil
	})
	if err != nil || again {
		return nil, st, again, err
	}
	for k := range w.inflight {
		sums[k.session].Open++
	}
	for k, f := range w.finished {
		sums[k.session].offerCut(f.seq, f.trace) // a finish alone is an operation at its seq
	}
	out := make([]Session, 0, len(sums))
	for _, s := range sums {
		s.Missing, s.MissingRanges = s.seqs.Gaps(MaxMissingRanges)
		out = append(out, s.Session)
	}
	sortSessions(out)
	return out, st, false, nil
}

// sessionSum is a session's sums as the first pass makes them, with the
// seqs it has used.
type sessionSum struct {
	Session
	seqs seqset.Set
	// traceSeq is the seq of the operation TraceID is of: an operation's
	// seq is its start's, or its finish's when it has no start, the order
	// ReadOps gives them in.
	traceSeq int64
}

// offerTrace makes trace the session's when its operation at seq comes
// before the one whose trace it has: the session's trace is its first
// operation's that names one, whatever the order of the lines.
func (s *sessionSum) offerTrace(seq int64, trace string) {
	if s.precedes(seq, trace) {
		s.setTraceID(trace)
		s.traceSeq = seq
	}
}

// offerCut is offerTrace with a trace id cut already.
func (s *sessionSum) offerCut(seq int64, trace cutTrace) {
	if s.precedes(seq, trace.id) {
		s.TraceID, s.LongTrace, s.traceSeq = trace.id, trace.long, seq
	}
}

// precedes reports whether the operation at seq, of that trace, names
// the session's trace before the one it has.
func (s *sessionSum) precedes(seq int64, trace string) bool {
	return trace != "" && (s.TraceID == "" || seq < s.traceSeq)
}

// maxWaiting bounds the operations the first pass holds waiting for their
// other event (about 64 bytes each): an eighth of the sort's budget.
func maxWaiting(runBytes int) int {
	if runBytes <= 0 {
		runBytes = DefaultRunBytes
	}
	return runBytes / 8 / 64
}

// sessionsFromOps sums up the sessions from ReadOps' operations. The
// lines were counted, and bad ones reported, by the first pass (first).
func sessionsFromOps(ctx context.Context, sources []string, opts Options, first Stats) ([]Session, Stats, error) {
	opts.Bad, opts.Damaged, opts.Incomplete, opts.Joined = nil, nil, nil, nil
	opts.KeepLines, opts.SkipWhat, opts.Filter = false, true, Filter{}
	var out []Session
	var seqs seqset.Set // the current session's: ReadOps gives a session's operations together
	gaps := func() {
		if n := len(out); n > 0 {
			out[n-1].SetMissing(&seqs)
		}
		seqs = seqset.Set{}
	}
	st, err := ReadOps(ctx, sources, opts, func(o *Op) error {
		if n := len(out); n == 0 || out[n-1].ID != uuid.UUID(o.Session) {
			gaps()
			out = append(out, Session{ID: o.Session})
		}
		out[len(out)-1].AddOp(o)
		o.AddSeqs(&seqs)
		return nil
	})
	if err != nil {
		return nil, first, err
	}
	gaps()
	st.Lines, st.Bad, st.Incomplete, st.Joined = first.Lines, first.Bad, first.Incomplete, first.Joined
	sortSessions(out)
	return out, st, nil
}

// AddSeqs adds the seqs of the operation's events to set.
func (o *Op) AddSeqs(set *seqset.Set) {
	for _, e := range [2]*Event{o.Start, o.Finish} {
		if e != nil {
			set.Add(e.Seq)
		}
	}
}

// SetMissing counts the session's missing seqs from every seq it holds,
// with the first MaxMissingRanges ranges, as sessions and serve show them.
func (s *Session) SetMissing(seqs *seqset.Set) {
	s.Missing, s.MissingRanges = seqs.Gaps(MaxMissingRanges)
}

// AddOp counts an operation into the session's sums.
func (s *Session) AddOp(o *Op) {
	for _, e := range [2]*Event{o.Start, o.Finish} {
		if e != nil {
			s.noteEvent(e.TSMicros, e.TS)
		}
	}
	s.Ops++
	if o.Failed() {
		s.Failures++
	}
	if o.Open() {
		s.Open++
	}
	if s.TraceID == "" {
		s.setTraceID(o.TraceID)
	}
}

func sortSessions(list []Session) {
	slices.SortFunc(list, func(a, b Session) int {
		return cmp.Or(cmp.Compare(a.First, b.First), strings.Compare(a.ID.String(), b.ID.String()))
	})
}

// noteEvent counts an event at ts (text: as written) into the session's
// events and its first and last times.
func (s *Session) noteEvent(ts int64, text string) {
	first, last := s.Events == 0 || ts < s.First, s.Events == 0 || ts > s.Last
	if first || last {
		text = strings.Clone(text)
	}
	if first {
		s.First, s.FirstTS = ts, text
	}
	if last {
		s.Last, s.LastTS = ts, text
	}
	s.Events++
}

func (s *Session) note(res *result) {
	s.noteEvent(res.ts, res.tsText)
	if res.phase == 1 && !res.ok {
		s.Failures++
	}
}

// waiting holds the operations of the first pass waiting for their other
// event, with what their trace needs of the event read.
type waiting struct {
	inflight map[pairKey]startWaiting
	finished map[pairKey]finishWaiting // finishes read before their start
	// traceBytes are the trace ids finished holds, counted in its size.
	traceBytes int
}

// startWaiting is a start read: its seq, and whether it names a trace
// (if not, its finish's is the operation's).
type startWaiting struct {
	seq    int64
	traced bool
}

// finishWaiting is a finish read before its start: its seq, and its
// trace, the operation's if its start names none.
type finishWaiting struct {
	seq   int64
	trace cutTrace
}

func newWaiting() *waiting {
	return &waiting{inflight: map[pairKey]startWaiting{}, finished: map[pairKey]finishWaiting{}}
}

// size is the operations waiting, a trace id held counted as one more
// operation per 64 bytes (what maxWaiting allows an operation).
func (w *waiting) size() int {
	return len(w.inflight) + len(w.finished) + w.traceBytes/64
}

// count counts an operation once, at its first event, tracks the starts
// still waiting for their finish and the finishes waiting for their
// start, and offers the session the operation's trace once it is known.
func (w *waiting) count(s *sessionSum, res *result) {
	k := pairKey{res.session, res.spanID}
	if res.phase == 0 {
		w.countStart(s, k, res)
		return
	}
	if st, ok := w.inflight[k]; ok {
		delete(w.inflight, k)
		if !st.traced {
			s.offerTrace(st.seq, res.traceID)
		}
		return
	}
	if old, ok := w.finished[k]; ok {
		// A second finish before any start: the first stays alone.
		w.dropFinished(k, old)
		s.offerCut(old.seq, old.trace)
	}
	s.Ops++
	k.spanID = strings.Clone(k.spanID)
	f := finishWaiting{seq: res.seq, trace: cutTraceID(res.traceID)}
	w.traceBytes += len(f.trace.id)
	w.finished[k] = f
}

func (w *waiting) countStart(s *sessionSum, k pairKey, res *result) {
	s.offerTrace(res.seq, res.traceID)
	if f, ok := w.finished[k]; ok {
		w.dropFinished(k, f)
		if res.traceID == "" {
			s.offerCut(res.seq, f.trace)
		}
		return
	}
	if _, repeated := w.inflight[k]; repeated {
		// A second start waits for the finish in place of the first,
		// which stays open, as ReadOps pairs them.
		s.Open++
	}
	s.Ops++
	// A string key assigned again is stored again: a copy.
	k.spanID = strings.Clone(k.spanID)
	w.inflight[k] = startWaiting{seq: res.seq, traced: res.traceID != ""}
}

func (w *waiting) dropFinished(k pairKey, f finishWaiting) {
	delete(w.finished, k)
	w.traceBytes -= len(f.trace.id)
}
