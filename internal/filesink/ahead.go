package filesink

import (
	"sync"
	"time"
)

// AheadGrace is how far past both the clock and the log's newest own
// segment a segment's name may be dated and still be taken for one of the
// log's own. Rotation names a segment after the clock, or after the newest
// segment when the clock went back, so a name dated further ahead was put
// there by someone else: naming and retention pass over it.
const AheadGrace = 24 * time.Hour

// AheadOfLog reports whether seg is dated more than AheadGrace past both
// now and newest, the time of the log's newest own segment (zero when
// unknown).
func AheadOfLog(seg Segment, now, newest time.Time) bool {
	if newest.After(now) {
		now = newest
	}
	return seg.Time.After(now.Add(AheadGrace))
}

// ownMarks remembers, per path, the time of the log's newest own segment:
// the newest this sink named, or that Rotation.Holds says the log records.
// Holds is asked only off the writers' path (by the maintainer), never
// under the writers' flock, since the sealer takes that flock while it
// holds its own lock.
type ownMarks struct {
	mu     sync.Mutex
	newest map[string]time.Time
	warned map[string]bool // foreign segments OnIgnored was told of
	// named is, per path, the segment the sink's last rotation made;
	// stale marks the paths a maintenance listing found a segment
	// sorting after it in (a file put there, named as a segment): the
	// next rotation lists the directory rather than naming after named.
	named map[string]Segment
	stale map[string]bool
}

func newOwnMarks() *ownMarks {
	return &ownMarks{newest: map[string]time.Time{}, warned: map[string]bool{},
		named: map[string]Segment{}, stale: map[string]bool{}}
}

// made records seg, the segment a rotation of path made.
func (o *ownMarks) made(path string, seg Segment) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.named[path] = seg
}

// listed takes a listing of path's segments (segs, foreign marking those
// dated ahead): one that would be named after, sorting after the segment
// the sink made last, makes the next rotation list again.
func (o *ownMarks) listed(path string, segs []Segment, foreign []bool) {
	i := newestOwn(foreign)
	if i < 0 {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if named, ok := o.named[path]; ok && CompareSegments(segs[i], named) > 0 {
		o.stale[path] = true
	}
}

// takeStale reports whether a listing found a segment of path after the
// one the sink made last since the last call, and forgets it.
func (o *ownMarks) takeStale(path string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	stale := o.stale[path]
	delete(o.stale, path)
	return stale
}

func (o *ownMarks) get(path string) time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.newest[path]
}

func (o *ownMarks) raise(path string, t time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if t.After(o.newest[path]) {
		o.newest[path] = t
	}
}

// forget drops path's mark: the sink no longer holds its file open, and
// a {session_id} path's sessions come and go by the million. A path
// opened again is looked after as at a start.
func (o *ownMarks) forget(path string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.newest, path)
	delete(o.named, path)
	delete(o.stale, path)
}

// firstWarning reports whether seg is reported for the first time.
func (o *ownMarks) firstWarning(seg Segment) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.warned[seg.Plain] {
		return false
	}
	o.warned[seg.Plain] = true
	return true
}

// foreignAhead marks the segments dated ahead of the log (AheadOfLog):
// they are not the log's own.
func foreignAhead(segs []Segment, now, newest time.Time) []bool {
	out := make([]bool, len(segs))
	for i, seg := range segs {
		out[i] = AheadOfLog(seg, now, newest)
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
func (r *Rotation) noteForeign(marks *ownMarks, path string, segs []Segment, foreign []bool) {
	if r.OnIgnored == nil {
		return
	}
	for i, seg := range segs {
		if foreign[i] && marks.firstWarning(seg) {
			r.OnIgnored(path, seg)
		}
	}
}
