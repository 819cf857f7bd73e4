// Package seqset keeps the set of seqs a session has used, in memory that
// grows with the gaps between them rather than with their count.
package seqset

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/sandboxaudit/sandboxaudit/internal/plural"
)

// Set is the set of seqs one session has used. A writer hands seqs out
// in order, so they collapse into one range or a few whatever the file's
// length: memory grows with the gaps not yet filled, not with the events.
// Seqs that do not extend the last range wait in a small map and are merged
// into the ranges in bulk, so out-of-order input costs O(log n) per seq
// rather than a slice insert.
type Set struct {
	ranges []seqRange // sorted, disjoint
	loose  map[int64]struct{}
}

// seqRange is lo..hi inclusive.
type seqRange struct{ lo, hi int64 }

// looseSlack is how many out-of-order seqs wait beyond the ranges' count
// before a merge; merging costs a sort of the waiting seqs and one pass over
// the ranges.
const looseSlack = 1024

// Add inserts seq and reports whether the session had used it already.
func (s *Set) Add(seq int64) (taken bool) {
	if s.has(seq) {
		return true
	}
	n := len(s.ranges)
	switch {
	case n == 0:
		s.ranges = append(s.ranges, seqRange{seq, seq})
	case s.ranges[n-1].hi < seq && seq-1 == s.ranges[n-1].hi:
		// The usual case: the next seq (the first test keeps seq-1 from
		// wrapping around at the smallest int64).
		s.ranges[n-1].hi = seq
	default:
		if s.loose == nil {
			s.loose = map[int64]struct{}{}
		}
		s.loose[seq] = struct{}{}
		if len(s.loose) > looseSlack+len(s.ranges) {
			s.merge()
		}
	}
	return false
}

func (s *Set) has(seq int64) bool {
	if _, ok := s.loose[seq]; ok {
		return true
	}
	_, found := slices.BinarySearchFunc(s.ranges, seq, func(r seqRange, t int64) int {
		switch {
		case r.hi < t:
			return -1
		case r.lo > t:
			return 1
		}
		return 0
	})
	return found
}

// merge folds the waiting seqs into the ranges, joining neighbours.
func (s *Set) merge() {
	loose := slices.Sorted(maps.Keys(s.loose))
	out := make([]seqRange, 0, len(s.ranges)+len(loose))
	push := func(r seqRange) {
		if m := len(out); m > 0 && (r.lo <= out[m-1].hi || r.lo-1 == out[m-1].hi) {
			out[m-1].hi = max(out[m-1].hi, r.hi)
			return
		}
		out = append(out, r)
	}
	i := 0
	for _, r := range s.ranges {
		for ; i < len(loose) && loose[i] < r.lo; i++ {
			push(seqRange{loose[i], loose[i]})
		}
		push(r)
	}
	for ; i < len(loose); i++ {
		push(seqRange{loose[i], loose[i]})
	}
	s.ranges = append([]seqRange(nil), out...) // drop the spare capacity
	s.loose = nil
}

// Range is the seqs Lo..Hi, both included.
type Range struct{ Lo, Hi int64 }

// Len is how many seqs r holds, stopping at the largest int64.
func (r Range) Len() int64 {
	d := uint64(r.Hi) - uint64(r.Lo) // Hi >= Lo: no wrap
	if d >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(d) + 1
}

// Lowest is the set's lowest seq; false when it is empty.
func (s *Set) Lowest() (int64, bool) {
	if len(s.loose) > 0 {
		s.merge()
	}
	if len(s.ranges) == 0 {
		return 0, false
	}
	return s.ranges[0].lo, true
}

// Gaps reports the seqs the set lacks from 1 (or its lowest seq, when
// lower: seqs start at 1) up to its highest: how many, and the first limit
// ranges of them. The count is exact however many ranges there are, and
// saturates at the largest int64; only limit ranges are kept, so a
// session with many holes adds no memory beyond the set's own.
func (s *Set) Gaps(limit int) (missing int64, first []Range) {
	if len(s.loose) > 0 {
		s.merge()
	}
	if len(s.ranges) == 0 {
		return 0, nil
	}
	note := func(lo, hi int64) {
		if lo > hi {
			return
		}
		r := Range{lo, hi}
		missing = AddSaturating(missing, r.Len())
		if len(first) < limit {
			first = append(first, r)
		}
	}
	if lo := s.ranges[0].lo; lo > 1 {
		note(1, lo-1)
	}
	for i := 1; i < len(s.ranges); i++ {
		note(s.ranges[i-1].hi+1, s.ranges[i].lo-1)
	}
	return missing, first
}

// AddSaturating adds two counts of seqs (not negative), stopping at the
// largest int64.
func AddSaturating(a, b int64) int64 {
	if b > math.MaxInt64-a {
		return math.MaxInt64
	}
	return a + b
}

// Name names missing seqs from Gaps with their noun: "seq 4",
// "seqs 4–6, 9".
func Name(missing int64, ranges []Range) string {
	return plural.Pick(missing, "seq ", "seqs ") + Describe(missing, ranges)
}

// Describe names missing seqs from Gaps: "4", "4–6, 9",
// "2, 4, 6, 8, 10 and 99994 more (99999 in all)".
func Describe(missing int64, ranges []Range) string {
	parts := make([]string, 0, len(ranges))
	var named int64
	for _, r := range ranges {
		named = AddSaturating(named, r.Len())
		if r.Lo == r.Hi {
			parts = append(parts, fmt.Sprint(r.Lo))
		} else {
			parts = append(parts, fmt.Sprintf("%d–%d", r.Lo, r.Hi))
		}
	}
	text := strings.Join(parts, ", ")
	if missing > named {
		text += fmt.Sprintf(" and %d more (%d in all)", missing-named, missing)
	}
	return text
}
