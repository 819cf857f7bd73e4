package filesink

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
)

// retainDir lays out an active file with n closed segments, closed an hour
// apart from t0 (the first at t0+1h), and returns the segments oldest
// first.
func retainDir(t *testing.T, n int, t0 time.Time) (string, []Segment) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "events.jsonl")
	require.NoError(t, os.WriteFile(path, numberedLines(0, 0), 0o600))
	for i := 1; i <= n; i++ {
		require.NoError(t, os.WriteFile(namerFor(path).name(t0.Add(time.Duration(i)*time.Hour), int64(i)), numberedLines(i, i), 0o600))
	}
	segs, err := Segments(path)
	require.NoError(t, err)
	require.Len(t, segs, n)
	return path, segs
}

// keepTorn puts a kept torn line of file, cut at at, and returns its path.
func keepTorn(t *testing.T, file string, at time.Time) string {
	t.Helper()
	p := fmt.Sprintf("%s%s%d", file, fsutil.TornSuffix, at.UnixNano())
	require.NoError(t, os.WriteFile(p, []byte(`{"torn`), 0o600))
	return p
}

// countingReadDir is os.ReadDir, counted.
func countingReadDir(n *int) func(string) ([]os.DirEntry, error) {
	return func(dir string) ([]os.DirEntry, error) { *n++; return os.ReadDir(dir) }
}

// TestRetentionListsTornLinesOncePerPass: a pass that removes several
// segments lists the directory for their kept torn lines once, and still
// removes each removed segment's own and the active file's cut before it,
// leaving the rest.
func TestRetentionListsTornLinesOncePerPass(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	path, segs := retainDir(t, 4, t0)
	var gone, stays []string
	for i, seg := range segs {
		p := keepTorn(t, seg.Plain, seg.Time.Add(-time.Minute))
		if i < 3 {
			gone = append(gone, p)
		} else {
			stays = append(stays, p)
		}
	}
	gone = append(gone,
		keepTorn(t, path, t0.Add(30*time.Minute)),
		keepTorn(t, path, segs[2].Time.Add(-time.Second)))
	stays = append(stays,
		keepTorn(t, path, segs[2].Time.Add(time.Second)),
		keepTorn(t, path, segs[3].Time.Add(time.Hour)))
	// A session's audit file named like one (whole lines) is not one.
	audit := fmt.Sprintf("%s%s%d", path, fsutil.TornSuffix, t0.UnixNano())
	require.NoError(t, os.WriteFile(audit, numberedLines(9, 9), 0o600))
	stays = append(stays, audit)

	var ev rotationEvents
	r := ev.hook(&Rotation{MaxBackups: 1})
	r.now = func() time.Time { return segs[3].Time.Add(2 * time.Hour) }
	listed := 0
	m := &maintainer{rot: r, marks: newOwnMarks(), readDir: countingReadDir(&listed)}
	m.retain(path)

	require.Empty(t, ev.errors())
	require.Len(t, ev.removed, 3)
	require.Equal(t, 1, listed, "one listing for the pass, not one per removed segment")
	for _, p := range gone {
		require.NoFileExists(t, p)
	}
	for _, p := range stays {
		require.FileExists(t, p)
	}
}

// TestRetentionFindsATornLineSealedDuringThePass: a segment the log did
// not record when the pass began may be sealed before its removal, the
// seal cutting its torn line off after the listing; that line goes with
// it too.
func TestRetentionFindsATornLineSealedDuringThePass(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	path, segs := retainDir(t, 4, t0)
	var ev rotationEvents
	r := ev.hook(&Rotation{MaxBackups: 1})
	r.now = func() time.Time { return segs[3].Time.Add(2 * time.Hour) }
	r.Holds = func(_ string, seg Segment) bool { return seg.Seq != 2 }
	var sealed string
	r.BeforeRemove = func(_ string, seg Segment) error {
		if seg.Seq == 2 {
			sealed = keepTorn(t, seg.Plain, seg.Time.Add(-time.Minute))
		}
		return nil
	}
	m := &maintainer{rot: r, marks: newOwnMarks()}
	m.retain(path)

	require.Empty(t, ev.errors())
	require.Len(t, ev.removed, 3)
	require.NotEmpty(t, sealed)
	require.NoFileExists(t, sealed)
}

// TestRetentionKeepsTornLinesWithTheirSegment: max_days does not apply to
// a kept torn line by its own date; it goes with the segment it was cut
// from. The active file's, cut after the newest segment closed, stay while
// the active file does, however old (docs/history.md).
func TestRetentionKeepsTornLinesWithTheirSegment(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	path, segs := retainDir(t, 2, t0)
	gone := keepTorn(t, path, segs[0].Time.Add(-time.Minute))
	ofSeg2 := keepTorn(t, path, segs[0].Time.Add(time.Minute))
	ofActive := keepTorn(t, path, segs[1].Time.Add(time.Minute))

	var ev rotationEvents
	r := ev.hook(&Rotation{MaxAge: 24 * time.Hour})
	r.now = func() time.Time { return segs[0].Time.Add(24*time.Hour + 30*time.Minute) }
	m := &maintainer{rot: r, marks: newOwnMarks()}
	m.retain(path)
	require.Empty(t, ev.errors())
	require.Equal(t, []string{filepath.Base(segs[0].Path) + ":" + RemovedMaxAge}, ev.removed)
	require.NoFileExists(t, gone)
	require.FileExists(t, ofSeg2, "older than max_days, but its segment is kept")
	require.FileExists(t, ofActive)

	r.now = func() time.Time { return segs[1].Time.Add(25 * time.Hour) }
	m.retain(path)
	require.Empty(t, ev.errors())
	require.Len(t, ev.removed, 2)
	require.NoFileExists(t, ofSeg2, "gone with its segment")
	require.FileExists(t, ofActive, "the active file is kept, and so is its torn line")
}

// BenchmarkRetentionPass is one retention pass removing 63 segments from a
// directory that also holds 10,000 other sessions' files (a {session_id}
// path): the kept torn lines are listed once per pass (listings/op).
func BenchmarkRetentionPass(b *testing.B) {
	dir := b.TempDir()
	for i := range 10_000 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("session-%05d.jsonl", i)), nil, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	path := filepath.Join(dir, "events.jsonl")
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	r := &Rotation{MaxBackups: 1, now: func() time.Time { return t0.Add(100 * time.Hour) }}
	listed := 0
	for b.Loop() {
		b.StopTimer()
		for i := 1; i <= 64; i++ {
			if err := os.WriteFile(namerFor(path).name(t0.Add(time.Duration(i)*time.Hour), int64(i)), nil, 0o600); err != nil {
				b.Fatal(err)
			}
		}
		m := &maintainer{rot: r, marks: newOwnMarks(), readDir: countingReadDir(&listed)}
		b.StartTimer()
		m.retain(path)
	}
	b.ReportMetric(float64(listed)/float64(b.N), "listings/op")
}

// retain applies retention to path's segments as a listing finds them now;
// the tests read what it did from the rotation's hooks.
func (m *maintainer) retain(path string) {
	l := newListings(m.readDir)
	if segs, err := l.segments(path); err == nil {
		_ = m.retainSegs(path, segs, l.tornOf(path))
	}
}
