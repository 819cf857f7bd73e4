package webview

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/google/uuid"

	"github.com/sandboxaudit/sandboxaudit/internal/seqset"
	"github.com/sandboxaudit/sandboxaudit/internal/trail"
)

// blockOps is how many operations of a session share one offset in the
// index: a page seeks to its block and skips at most this many.
const blockOps = 256

// opRecord is one operation as the spool keeps it (one JSON line).
type opRecord struct {
	SpanID  string       `json:"s"`
	TraceID string       `json:"t,omitempty"`
	Op      string       `json:"o"`
	What    string       `json:"w,omitempty"`
	Start   *trail.Event `json:"a,omitempty"`
	Finish  *trail.Event `json:"b,omitempty"`
}

// sessionIndex sums up a session and says where its operations are in the
// spool.
type sessionIndex struct {
	trail.Session
	blocks []int64 // spool offset of operations 0, blockOps, 2*blockOps, …
	// MoreTraces: some operation is in a trace other than TraceID, the
	// session's first.
	MoreTraces bool
	// Span of time its operations cover, for the timeline's axis.
	end int64
	// seqs are its seqs while ReadOps gives its operations (together);
	// then only Missing and MissingRanges are kept, so memory stays one
	// entry per session.
	seqs *seqset.Set
}

// index is the trail, sorted once at start into a spool file of
// operations (unlinked, so nothing is left behind) with an offset per
// block of each session's operations: memory is one entry per session
// and per block, not per line.
type index struct {
	spool    *os.File
	sessions []*sessionIndex
	byID     map[uuid.UUID]*sessionIndex
	stats    trail.Stats
	sources  []string
}

func buildIndex(ctx context.Context, sources []string, opts trail.Options) (*index, error) {
	f, err := os.CreateTemp(opts.TempDir, "sandboxaudit-serve-*")
	if err != nil {
		return nil, fmt.Errorf("temporary file for the view: %w", err)
	}
	_ = os.Remove(f.Name())
	ix := &index{spool: f, byID: map[uuid.UUID]*sessionIndex{}, sources: sources}
	cw := &countingWriter{w: bufio.NewWriterSize(f, 256<<10)}
	enc := json.NewEncoder(cw)
	var cur *sessionIndex
	opts.KeepLines = true
	st, err := trail.ReadOps(ctx, sources, opts, func(o *trail.Op) error {
		id := uuid.UUID(o.Session)
		if cur == nil || cur.ID != id {
			cur.gaps()
			cur = &sessionIndex{Session: trail.Session{ID: id}, seqs: &seqset.Set{}}
			ix.sessions = append(ix.sessions, cur)
			ix.byID[id] = cur
		}
		if cur.Ops%blockOps == 0 {
			cur.blocks = append(cur.blocks, cw.n)
		}
		cur.add(o)
		return enc.Encode(opRecord{SpanID: o.SpanID, TraceID: o.TraceID, Op: o.Op, What: o.What, Start: o.Start, Finish: o.Finish})
	})
	cur.gaps()
	if err == nil {
		err = cw.w.Flush()
	}
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	ix.stats = st
	return ix, nil
}

// add counts an operation into the session's sums.
func (s *sessionIndex) add(o *trail.Op) {
	s.AddOp(o)
	if o.TraceID != "" && !s.InFirstTrace(o.TraceID) {
		s.MoreTraces = true
	}
	if end := endOf(o); s.Ops == 1 || end > s.end { // AddOp counted o: 1 is the first
		s.end = end
	}
	o.AddSeqs(s.seqs)
}

// gaps counts the session's missing seqs as sessions does, once its
// operations are all read, and drops its seqs.
func (s *sessionIndex) gaps() {
	if s == nil || s.seqs == nil {
		return
	}
	s.SetMissing(s.seqs)
	s.seqs = nil
}

// endOf is when an operation ended: its finish, else its start.
func endOf(o *trail.Op) int64 {
	if o.Finish != nil {
		return o.Finish.TSMicros
	}
	return o.Start.TSMicros
}

// listedRecord is an opRecord read without its lines, ids and exit
// codes, for a page that lists operations and shows none of them: what it
// holds does not grow with them (the receiver takes an id of megabytes).
type listedRecord struct {
	SpanID  skipped      `json:"s"`
	TraceID skipped      `json:"t,omitempty"`
	Op      string       `json:"o"`
	What    string       `json:"w,omitempty"`
	Start   *listedEvent `json:"a,omitempty"`
	Finish  *listedEvent `json:"b,omitempty"`
}

// listedEvent is a trail.Event whose line and exit code are skipped, not
// decoded.
type listedEvent struct {
	trail.Event
	Line skipped
	Exit skipped
}

type skipped struct{}

func (*skipped) UnmarshalJSON([]byte) error { return nil }

func (l *listedRecord) record() opRecord {
	rec := opRecord{Op: l.Op, What: l.What}
	if l.Start != nil {
		rec.Start = &l.Start.Event
	}
	if l.Finish != nil {
		rec.Finish = &l.Finish.Event
	}
	return rec
}

// ops reads limit operations of s from the offset-th on, with their lines
// or without them (and then without their ids and exit codes too); the
// operations before offset in its block are skipped the same way.
func (ix *index) ops(s *sessionIndex, offset, limit int, withLines bool) ([]opRecord, error) {
	if offset < 0 || int64(offset) >= s.Ops || limit <= 0 {
		return nil, nil
	}
	block := offset / blockOps
	r := bufio.NewReaderSize(io.NewSectionReader(ix.spool, s.blocks[block], 1<<62), 64<<10)
	dec := json.NewDecoder(r)
	var out []opRecord
	for i := block * blockOps; i < offset+limit && int64(i) < s.Ops; i++ {
		// The operations skipped to reach offset need no line.
		rec, err := decodeRecord(dec, withLines && i >= offset)
		if err != nil {
			return nil, fmt.Errorf("view spool: %w", err)
		}
		if i >= offset {
			out = append(out, rec)
		}
	}
	return out, nil
}

// decodeRecord reads the spool's next operation, with its lines only when
// withLines.
func decodeRecord(dec *json.Decoder, withLines bool) (opRecord, error) {
	if withLines {
		var rec opRecord
		err := dec.Decode(&rec)
		return rec, err
	}
	var l listedRecord
	err := dec.Decode(&l)
	return l.record(), err
}

func (ix *index) Close() error { return ix.spool.Close() }

type countingWriter struct {
	w *bufio.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
