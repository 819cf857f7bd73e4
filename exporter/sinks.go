package sandboxauditexporter // import "github.com/sandboxaudit/sandboxaudit/exporter"

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/httpsink"
	"github.com/sandboxaudit/sandboxaudit/internal/payloadpolicy"
	"github.com/sandboxaudit/sandboxaudit/internal/plural"
	"github.com/sandboxaudit/sandboxaudit/internal/redact"
)

// maxPooledBuf keeps one unusually large batch from pinning its buffer
// for the life of the process.
const maxPooledBuf = 4 << 20

// bufPool recycles a sink's encode buffers. Pushes can run concurrently
// (several upstream callers without a queue, or sending_queue
// num_consumers > 1), so the one-buffer-per-sink reuse goes through a free
// list rather than a single field.
type bufPool struct{ l freeList[[]byte] }

func (b *bufPool) get() *[]byte {
	if v, ok := b.l.get(); ok {
		return v
	}
	buf := make([]byte, 0, 64<<10)
	return &buf
}

func (b *bufPool) put(buf *[]byte) {
	if cap(*buf) > maxPooledBuf {
		return
	}
	*buf = (*buf)[:0]
	b.l.put(buf, cap(*buf))
}

// appendEvent appends ev's canonical line under the sink's policy, the
// redacted copy's when the policy redacts (the one m holds, if any); cuts
// counts the cuts.
func appendEvent(dst []byte, pc *payloadpolicy.Table, ev *auditevent.Event, cuts *redact.Counts, m *measured) []byte {
	return m.appendLine(dst, pc, pc.Get(ev.Op), ev, cuts, nil)
}

// appendEvents encodes a batch under one sink's policy, looked up again
// only where the op changes: a span's two events, and often a run of spans,
// share one. A span's second line copies the fields it shares with the
// first (auditevent.SpanLines).
func appendEvents(dst []byte, pc *payloadpolicy.Table, events []auditevent.Event, cuts *redact.Counts, m *measured) []byte {
	var p payloadpolicy.Policy
	var sl auditevent.SpanLines
	for i := range events {
		if i == 0 || events[i].Op != events[i-1].Op {
			p = pc.Get(events[i].Op)
		}
		dst = m.appendLine(dst, pc, p, &events[i], cuts, &sl)
	}
	return dst
}

// fileTarget is the file sink with its policy and buffers.
type fileTarget struct {
	sink      *filesink.Sink
	templated bool
	policy    *payloadpolicy.Table
	bufs      bufPool
	ids       *sinkIDs // event ids written, so a resent batch is written once; nil without an HTTP sink
}

func newFileTarget(sink *filesink.Sink, path string, pc *payloadpolicy.Table) *fileTarget {
	return &fileTarget{sink: sink, templated: strings.Contains(path, "{"), policy: pc}
}

// write appends the batch: one WriteBatch for a plain path, one per
// destination file (session) for a templated path, lines of a session in
// batch order. A failed file does not stop the others.
func (f *fileTarget) write(ctx context.Context, events []auditevent.Event, t *telemetry, m *measured) error {
	if len(events) == 0 {
		return nil
	}
	bp := f.bufs.get()
	defer f.bufs.put(bp)
	buf := (*bp)[:0]
	var cuts redact.Counts
	defer t.redacted(ctx, &cuts)

	if !f.templated {
		buf = appendEvents(buf, f.policy, events, &cuts, m)
		*bp = buf
		return f.writeLines(ctx, events, buf, t)
	}

	groups := groupBySession(events)
	ends := make([]int, len(groups.sessions))
	for g := range groups.sessions {
		for _, i := range groups.members(g) {
			buf = appendEvent(buf, f.policy, &events[i], &cuts, m)
		}
		ends[g] = len(buf)
	}
	*bp = buf
	var errs []error
	start := 0
	for g, sid := range groups.sessions {
		n := len(groups.members(g))
		if err := f.sink.WriteBatch(ctx, sid.String(), buf[start:ends[g]]); err != nil {
			t.dropped(ctx, fileDropReason(err), n)
			errs = append(errs, fmt.Errorf("file: session %s: %s not written: %w", sid, plural.Count(n, "event"), err))
		} else {
			t.written(ctx, sinkFile, n)
			f.ids.written(events, groups.members(g))
		}
		start = ends[g]
	}
	return errors.Join(errs...)
}

// writeLines writes the encoded lines of events to a plain (untemplated)
// path in one WriteBatch.
func (f *fileTarget) writeLines(ctx context.Context, events []auditevent.Event, lines []byte, t *telemetry) error {
	if err := f.sink.WriteBatch(ctx, events[0].SessionID.String(), lines); err != nil {
		t.dropped(ctx, fileDropReason(err), len(events))
		return fmt.Errorf("file: %s not written: %w", plural.Count(len(events), "event"), err)
	}
	t.written(ctx, sinkFile, len(events))
	f.ids.written(events, nil)
	return nil
}

// fileDropReason is the events_dropped reason of a failed file write.
func fileDropReason(err error) string {
	if errors.Is(err, filesink.ErrSymlink) {
		return reasonFileSymlink
	}
	return reasonFileError
}

// sessionGroups is a batch's event indexes grouped by session, sessions in
// order of first appearance and events in batch order within a session.
type sessionGroups struct {
	sessions []uuid.UUID
	order    []int // event indexes, grouped
	starts   []int // starts[g]..starts[g+1] is group g within order
}

func (s *sessionGroups) members(g int) []int {
	return s.order[s.starts[g]:s.starts[g+1]]
}

// groupBySession is a counting sort on first-appearance rank: O(n).
func groupBySession(events []auditevent.Event) sessionGroups {
	var s sessionGroups
	rank := make(map[uuid.UUID]int, 4)
	ranks := make([]int, len(events))
	var counts []int
	for i := range events {
		sid := events[i].SessionID
		r, ok := rank[sid]
		if !ok {
			r = len(s.sessions)
			rank[sid] = r
			s.sessions = append(s.sessions, sid)
			counts = append(counts, 0)
		}
		counts[r]++
		ranks[i] = r
	}
	s.starts = make([]int, len(counts)+1)
	for g, c := range counts {
		s.starts[g+1] = s.starts[g] + c
	}
	next := append([]int(nil), s.starts[:len(counts)]...)
	s.order = make([]int, len(events))
	for i, r := range ranks {
		s.order[next[r]] = i
		next[r]++
	}
	return s
}

// httpTarget is the HTTP sink with its policy and buffers.
type httpTarget struct {
	sink   *httpsink.Sink
	policy *payloadpolicy.Table
	tel    *telemetry
	bufs   bufPool
	ids    *sinkIDs // event ids taken, so a resent batch is sent once; nil without a file sink
}

func newHTTPTarget(sink *httpsink.Sink, pc *payloadpolicy.Table, tel *telemetry) *httpTarget {
	return &httpTarget{sink: sink, policy: pc, tel: tel}
}

// write hands the whole batch to the HTTP sink in one call; the sink
// splits it into requests, retries, spools and counts.
func (h *httpTarget) write(ctx context.Context, events []auditevent.Event, m *measured) error {
	if len(events) == 0 {
		return nil
	}
	bp := h.bufs.get()
	defer h.bufs.put(bp)
	var cuts redact.Counts
	*bp = appendEvents((*bp)[:0], h.policy, events, &cuts, m)
	h.tel.redacted(ctx, &cuts)
	return h.sendLines(ctx, events, *bp)
}

// sendLines hands events, encoded as lines, to the HTTP sink.
func (h *httpTarget) sendLines(ctx context.Context, events []auditevent.Event, lines []byte) error {
	if err := h.sink.Send(ctx, lines, len(events)); err != nil {
		return fmt.Errorf("http sink: %w", err)
	}
	h.ids.written(events, nil)
	return nil
}
