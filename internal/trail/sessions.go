package trail

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/google/uuid"
)

// Session sums up one session.
type Session struct {
	ID       uuid.UUID
	TraceID  string // the first trace id its events carry; "" when none does
	First    int64  // earliest event time, Unix microseconds
	Last     int64  // latest event time
	FirstTS  string // as written in the line
	LastTS   string
	Ops      int64 // operations (a start, or a finish whose start is missing)
	Failures int64 // finished with ok false
	Open     int64 // started and never finished
	Events   int64
}

// pairKey names an operation: its session and span id.
type pairKey struct {
	session [16]byte
	spanID  string
}

// ReadSessions reads the sources and sums up each session, ordered by its
// first event. Memory is one entry per session plus the operations in
// flight; the sort is not needed.
func ReadSessions(ctx context.Context, sources []string, opts Options) ([]Session, Stats, error) {
	st := Stats{Sources: len(sources)}
	sums := map[[16]byte]*Session{}
	inflight := map[pairKey]struct{}{}
	finished := map[pairKey]struct{}{} // finishes read before their start
	sc := newScanner(sources, opts)
	sc.sumsOnly = true
	err := sc.each(ctx, &st, func(_ *chunk, res *result) error {
		s := sums[res.session]
		if s == nil {
			s = &Session{ID: res.session, First: res.ts, Last: res.ts}
			s.FirstTS = strings.Clone(res.tsText)
			s.LastTS = s.FirstTS
			sums[res.session] = s
		}
		s.note(res)
		countOp(s, res, inflight, finished)
		return nil
	})
	if err != nil {
		return nil, st, err
	}
	for k := range inflight {
		sums[k.session].Open++
	}
	out := make([]Session, 0, len(sums))
	for _, s := range sums {
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b Session) int {
		return cmp.Or(cmp.Compare(a.First, b.First), strings.Compare(a.ID.String(), b.ID.String()))
	})
	return out, st, nil
}

func (s *Session) note(res *result) {
	s.Events++
	if res.ts < s.First {
		s.First, s.FirstTS = res.ts, strings.Clone(res.tsText)
	}
	if res.ts > s.Last {
		s.Last, s.LastTS = res.ts, strings.Clone(res.tsText)
	}
	if s.TraceID == "" && res.traceID != "" {
		s.TraceID = strings.Clone(res.traceID)
	}
	if res.phase == 1 && !res.ok {
		s.Failures++
	}
}

// countOp counts an operation once, at its first event, and tracks the
// starts still waiting for their finish.
func countOp(s *Session, res *result, inflight, finished map[pairKey]struct{}) {
	k := pairKey{res.session, res.spanID}
	if res.phase == 0 {
		if _, ok := finished[k]; ok {
			delete(finished, k)
			return
		}
		if _, ok := inflight[k]; ok {
			return // a repeated start
		}
		k.spanID = strings.Clone(k.spanID)
		inflight[k] = struct{}{}
		s.Ops++
		return
	}
	if _, ok := inflight[k]; ok {
		delete(inflight, k)
		return
	}
	k.spanID = strings.Clone(k.spanID)
	finished[k] = struct{}{}
	s.Ops++
}
