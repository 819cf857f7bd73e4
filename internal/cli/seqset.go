package cli

import (
	"github.com/google/uuid"
)

// seqIndex remembers, per seq of one session, the first event that used it,
// so a later line with the same seq can be told apart: an exact copy (an
// at-least-once resend) or a real reuse of the seq.
//
// Cost: one map entry per event, an int64 key and a 40-byte seqEntry. With
// Go's map growth that is about 50-120 bytes per event (≈75-115 measured at
// 10^5-10^6 events; BenchmarkVerifyRetained), so a million-event session
// takes ≈100 MB. Lines are not kept: a 64-bit hash stands in for the bytes.
type seqIndex struct {
	m map[int64]seqEntry
}

// seqEntry is the first event seen with a seq.
type seqEntry struct {
	// hash is a maphash of the line's bytes under the run's seed. Two
	// different lines with the same session, seq and event_id collide with
	// probability 2^-64, and the seed is random per run, so a file cannot be
	// crafted to collide.
	hash    uint64
	eventID uuid.UUID
	at      location
}

// add records e under seq unless the seq is taken; it returns the entry
// already there and whether there was one.
func (s *seqIndex) add(seq int64, e seqEntry) (seqEntry, bool) {
	if first, ok := s.m[seq]; ok {
		return first, true
	}
	if s.m == nil {
		s.m = map[int64]seqEntry{}
	}
	s.m[seq] = e
	return seqEntry{}, false
}
