package filesink

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A collector that restarts more often than the interval must still
// rotate: the segment's age counts from the file's creation, not the open.
func TestIntervalCountsFromTheSegmentsBirthAcrossARestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	clock := &fakeClock{t: time.Date(2026, 12, 6, 6, 0, 0, 0, time.UTC)}
	born := clock.now()
	var ev rotationEvents
	newSink := func() *Sink {
		r := ev.hook(&Rotation{Interval: time.Hour})
		r.now, r.idlePoll = clock.now, 2*time.Millisecond
		r.birth = func(*os.File) (time.Time, bool) { return born, true }
		s, err := New(Options{Path: path, Rotation: r})
		require.NoError(t, err)
		return s
	}
	ctx := context.Background()
	for i := range 3 { // three restarts, each 25 minutes after the last
		s := newSink()
		require.NoError(t, s.WriteBatch(ctx, testSession, numberedLines(2*i, 2*i+1)))
		require.NoError(t, s.Close())
		clock.add(25 * time.Minute)
	}
	// 75 minutes after the segment began: the next start rotates it.
	s := newSink()
	require.NoError(t, s.WriteBatch(ctx, testSession, numberedLines(6, 7)))
	require.NoError(t, s.Close())
	require.Empty(t, ev.errors())
	segs, parts := readTrail(t, path)
	require.Len(t, segs, 1, "the segment older than the interval was not rotated")
	require.Equal(t, string(numberedLines(0, 5)), string(parts[0]))
	require.Equal(t, string(numberedLines(6, 7)), string(parts[1]))
}

func TestSegmentBeganIsNowForAnEmptyFileOrAFutureBirth(t *testing.T) {
	now := time.Date(2026, 12, 6, 6, 0, 0, 0, time.UTC)
	r := &Rotation{Interval: time.Hour, now: func() time.Time { return now }}
	r.birth = func(*os.File) (time.Time, bool) { return now.Add(-2 * time.Hour), true }
	require.Equal(t, now, r.segmentBegan(nil, 0))
	require.Equal(t, now.Add(-2*time.Hour), r.segmentBegan(nil, 10))
	r.birth = func(*os.File) (time.Time, bool) { return now.Add(time.Hour), true }
	require.Equal(t, now, r.segmentBegan(nil, 10), "a birth after now (a clock step) counts as now")
	r.birth = func(*os.File) (time.Time, bool) { return time.Time{}, false }
	require.Equal(t, now, r.segmentBegan(nil, 10), "no birth time recorded")
}

// fileBirth reads the real file system's creation time.
func TestFileBirthReadsTheFileSystem(t *testing.T) {
	before := time.Now().Add(-time.Second) // file systems round
	_, b := bornFile(t)
	require.False(t, b.Before(before), "birth %v before the file was made (%v)", b, before)
	require.False(t, b.After(time.Now().Add(time.Second)), "birth %v in the future", b)
}

// A test clock changes the clock only: the creation time still comes from
// the file system unless a test gives its own.
func TestSegmentBeganReadsTheFileSystemUnderATestClock(t *testing.T) {
	f, born := bornFile(t)
	later := born.Add(3 * time.Hour)
	r := &Rotation{Interval: time.Hour, now: func() time.Time { return later }}
	require.Equal(t, born, r.segmentBegan(f, 10))
}

// bornFile makes a file and reads its creation time from the file system,
// skipping the test where none is recorded.
func bornFile(t *testing.T) (*os.File, time.Time) {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.Close() })
	born, ok := fileBirth(f)
	if !ok {
		t.Skip("this file system records no creation time")
	}
	return f, born
}
