package filesink

import "time"

// AheadGrace is how far past both the clock and the log's newest recorded
// segment a segment's name may be dated and still be taken for one of the
// log's own. Rotation names a segment after the clock, or after the newest
// segment when the clock went back, so a name dated further ahead was put
// there by someone else: naming and retention pass over it.
const AheadGrace = 24 * time.Hour

// AheadOfLog reports whether seg is dated more than AheadGrace past both
// now and newest, the time of the log's newest recorded segment (zero when
// there is no record).
func AheadOfLog(seg Segment, now, newest time.Time) bool {
	if newest.After(now) {
		now = newest
	}
	return seg.Time.After(now.Add(AheadGrace))
}

// foreignAhead marks the segments of path that are not the log's own:
// dated ahead of the log (AheadOfLog) and not held by it (Holds).
func (r *Rotation) foreignAhead(path string, segs []Segment) []bool {
	held := make([]bool, len(segs))
	var newest time.Time
	if r.Holds != nil {
		for i, seg := range segs {
			if held[i] = r.Holds(path, seg); held[i] && seg.Time.After(newest) {
				newest = seg.Time
			}
		}
	}
	now := r.clock()
	out := make([]bool, len(segs))
	for i, seg := range segs {
		out[i] = !held[i] && AheadOfLog(seg, now, newest)
	}
	return out
}

// newestOwn is the index of the newest segment not marked foreign, or -1.
func newestOwn(foreign []bool) int {
	for i := len(foreign) - 1; i >= 0; i-- {
		if !foreign[i] {
			return i
		}
	}
	return -1
}

// noteForeign tells OnIgnored of each foreign segment once per sink.
func (s *Sink) noteForeign(path string, segs []Segment, foreign []bool) {
	if s.rot.OnIgnored == nil {
		return
	}
	for i, seg := range segs {
		if !foreign[i] {
			continue
		}
		s.ignoredMu.Lock()
		seen := s.ignored[seg.Plain]
		if s.ignored == nil {
			s.ignored = map[string]bool{}
		}
		s.ignored[seg.Plain] = true
		s.ignoredMu.Unlock()
		if !seen {
			s.rot.OnIgnored(path, seg)
		}
	}
}
