package filesink

import (
	"errors"
	"os"
	"time"
)

// stuckReminder is the least time between two reports of retention that
// stays stopped: visible while the disk may fill, without flooding the log.
const stuckReminder = time.Hour

// StoppedRetention is a path whose retention stopped at a segment it did
// not remove (the removal failed, or BeforeRemove refused it): no newer
// segment goes while that one stays.
type StoppedRetention struct {
	Path string
	// Segment is the segment its latest round stopped at.
	Segment string
	// Err is the failure that stopped its latest round.
	Err error
	// Since is when its first stopped round was.
	Since time.Time
	// Rounds is how many of its rounds stopped since then.
	Rounds int
	// Due is how many segments its latest round would have removed, the
	// one it stopped at included; all stay.
	Due int
}

// RetentionStuck sums up the paths whose retention stays stopped.
type RetentionStuck struct {
	// Paths is how many paths' retention is stopped.
	Paths int
	// Due is how many segments their latest rounds would have removed.
	Due int
	// Rounds is how many of their rounds stopped since the last report
	// without a word (OnStillStopped).
	Rounds int
	// Longest is the path stopped the longest.
	Longest StoppedRetention
}

// stopped is what the maintainer keeps of the paths whose retention
// stopped, until each runs through a round again or its segments are gone:
// at most one entry per such path. Only the loop uses it.
type stopped struct {
	paths map[string]*StoppedRetention
	// rounds counts the stopped rounds OnError was not told of, since the
	// last reminder.
	rounds int
	// remindAt is when the next reminder may come.
	remindAt time.Time
}

// retentionStopped records that path's retention round stopped at seg on
// err, with due segments it would have removed, at now. A failure OnError
// was told of in an earlier round is told to OnStillStopped instead
// (counted, not logged again), unless the path had run through since:
// then OnError is told anew.
func (m *maintainer) retentionStopped(path string, seg Segment, err error, due int, now time.Time) {
	var re reportedError
	told := !errors.As(err, &re) || !re.earlier
	st := m.stopped.paths[path]
	if st == nil {
		if !told {
			m.rot.fail(path, err)
			told = true
		}
		if m.stopped.paths == nil {
			m.stopped.paths = map[string]*StoppedRetention{}
		}
		if len(m.stopped.paths) == 0 { // OnError was just told
			m.stopped.rounds, m.stopped.remindAt = 0, now.Add(stuckReminder)
		}
		st = &StoppedRetention{Path: path, Since: now}
		m.stopped.paths[path] = st
	}
	st.Segment, st.Err, st.Due = seg.Path, err, due
	st.Rounds++
	if told {
		return
	}
	m.stopped.rounds++
	if m.rot.OnStillStopped != nil {
		m.rot.OnStillStopped(path)
	}
}

// retentionRan forgets path's stopped retention, telling
// OnRetentionResumed, and the failed removals of its files gone since.
func (m *maintainer) retentionRan(path string) {
	m.forgetGone(path)
	st := m.stopped.paths[path]
	if st == nil {
		return
	}
	delete(m.stopped.paths, path)
	if m.rot.OnRetentionResumed != nil {
		m.rot.OnRetentionResumed(*st)
	}
}

// forgetGone drops the failed removals of path's files that are gone (put
// away by hand): no round would try them again to forget them.
func (m *maintainer) forgetGone(path string) {
	for p := range m.unremoved[path] {
		if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
			m.forgetUnremoved(path, p)
		}
	}
}

// remind tells OnRetentionStuck of the paths whose retention stays
// stopped, once stuckReminder has passed since the last report and a
// round stopped since without a word.
func (m *maintainer) remind(now time.Time) {
	s := &m.stopped
	if len(s.paths) == 0 || s.rounds == 0 || now.Before(s.remindAt) {
		return
	}
	sum := RetentionStuck{Paths: len(s.paths), Rounds: s.rounds}
	for _, st := range s.paths {
		sum.Due += st.Due
		l := sum.Longest
		if l.Path == "" || st.Since.Before(l.Since) || st.Since.Equal(l.Since) && st.Path < l.Path {
			sum.Longest = *st
		}
	}
	s.rounds, s.remindAt = 0, now.Add(stuckReminder)
	if m.rot.OnRetentionStuck != nil {
		m.rot.OnRetentionStuck(sum)
	}
}
