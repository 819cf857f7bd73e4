package filesink

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/testutil/immutable"
)

// makeUnremovable makes files impossible to remove, as really as this user
// can: their directory read-only for a user other than root, each file
// made immutable for root (who may write any directory), and failing that
// m's unlink failing for them as a read-only directory's does. It returns
// what undoes it; the test's cleanup undoes it too.
func makeUnremovable(t *testing.T, m *maintainer, files ...string) func() {
	t.Helper()
	if os.Geteuid() != 0 {
		dir := filepath.Dir(files[0])
		require.NoError(t, os.Chmod(dir, 0o500))
		var once sync.Once
		undo := func() { once.Do(func() { require.NoError(t, os.Chmod(dir, 0o700)) }) }
		t.Cleanup(undo)
		return undo
	}
	var undos []func()
	for _, f := range files {
		undo, ok := immutable.Set(t, f)
		if !ok {
			break
		}
		undos = append(undos, undo)
	}
	if len(undos) == len(files) {
		t.Log("running as root: the segments are made immutable")
		return func() {
			for _, undo := range undos {
				undo()
			}
		}
	}
	require.Empty(t, undos, "some files made immutable, not all")
	t.Log("running as root without the right to make a file immutable: removal fails through the unlink hook")
	stuck := map[string]bool{}
	for _, f := range files {
		stuck[f] = true
	}
	m.unlink = func(p string) error {
		if stuck[p] {
			return &os.PathError{Op: "remove", Path: p, Err: syscall.EACCES}
		}
		return os.Remove(p)
	}
	return func() { m.unlink = nil }
}

// stuckEvents records a Rotation's hooks for a stopped retention.
type stuckEvents struct {
	rotationEvents
	still    []string
	stuck    []RetentionStuck
	resumed  []StoppedRetention
	clock    time.Time
	rotation *Rotation
}

// twoSegmentsOneBackup is a path with two closed segments, retention
// keeping one (its clock a minute past the newer), and a maintainer of it
// that reports to the events.
func twoSegmentsOneBackup(t *testing.T) (string, []Segment, *stuckEvents, *maintainer) {
	t.Helper()
	path, segs := retainDir(t, 2, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	ev := newStuckEvents(&Rotation{MaxBackups: 1}, segs[1].Time.Add(time.Minute))
	return path, segs, ev, &maintainer{rot: ev.rotation, marks: newOwnMarks()}
}

func newStuckEvents(r *Rotation, now time.Time) *stuckEvents {
	e := &stuckEvents{clock: now}
	e.rotation = e.hook(r)
	r.now = func() time.Time { return e.clock }
	r.OnStillStopped = func(path string) { e.still = append(e.still, path) }
	r.OnRetentionStuck = func(s RetentionStuck) { e.stuck = append(e.stuck, s) }
	r.OnRetentionResumed = func(s StoppedRetention) { e.resumed = append(e.resumed, s) }
	return e
}

// TestAStuckRetentionStaysVisible: a segment that cannot be removed stops
// retention for its path every round. The failure is reported (OnError)
// once; each later round it stops again is counted (OnStillStopped), an
// hour after the report a reminder says how many rounds stopped since and
// how many segments stay that should have gone, at most once an hour; the
// path is looked at again meanwhile, and once the segment can go the
// round that removes it says retention runs again and forgets the path.
func TestAStuckRetentionStaysVisible(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	path, segs := retainDir(t, 3, t0)
	start := segs[2].Time.Add(time.Minute)
	ev := newStuckEvents(&Rotation{MaxBackups: 1}, start)
	var again time.Duration
	m := &maintainer{rot: ev.rotation, marks: newOwnMarks(), ctx: context.Background(),
		after: func(d time.Duration, _ func()) func() bool {
			again = d // looked at again by the test's rounds
			return func() bool { return true }
		}}
	removable := makeUnremovable(t, m, segs[0].Plain)

	round := func() time.Duration {
		again = 0
		require.True(t, m.round([]string{path}))
		ev.clock = ev.clock.Add(20 * time.Minute)
		return again
	}
	require.Positive(t, round(), "a stopped retention is looked at again")
	require.Len(t, ev.errors(), 1)
	require.ErrorContains(t, ev.errors()[0], segs[0].Plain)
	for range 2 {
		require.Positive(t, round())
	}
	require.Len(t, ev.still, 2, "each round stopped again is counted")
	require.Empty(t, ev.stuck, "no reminder within the hour of the report")

	round() // an hour after the report
	require.Len(t, ev.stuck, 1)
	s := ev.stuck[0]
	require.Equal(t, 1, s.Paths)
	require.Equal(t, 2, s.Due, "both segments beyond max_backups stay")
	require.Equal(t, 3, s.Rounds, "the rounds stopped since the report")
	require.Equal(t, path, s.Longest.Path)
	require.Equal(t, segs[0].Path, s.Longest.Segment)
	require.Equal(t, start, s.Longest.Since)
	require.Equal(t, 4, s.Longest.Rounds)
	require.ErrorContains(t, s.Longest.Err, segs[0].Plain)

	for range 2 {
		round()
	}
	require.Len(t, ev.stuck, 1, "at most one reminder an hour")
	round()
	require.Len(t, ev.stuck, 2)
	require.Equal(t, 3, ev.stuck[1].Rounds, "counted since the last reminder")
	require.Len(t, ev.errors(), 1, "the failure itself is not logged again")
	require.Empty(t, ev.resumed)
	require.FileExists(t, segs[1].Plain, "no newer segment goes while an older stays")

	removable()
	require.Zero(t, round(), "nothing to look at again")
	require.NoFileExists(t, segs[0].Plain)
	require.NoFileExists(t, segs[1].Plain)
	require.Len(t, ev.removed, 2)
	require.Len(t, ev.resumed, 1)
	require.Equal(t, path, ev.resumed[0].Path)
	require.Equal(t, 7, ev.resumed[0].Rounds)
	require.Equal(t, start, ev.resumed[0].Since)
	require.Empty(t, m.stopped.paths, "a path that runs through is forgotten")
	require.Empty(t, m.unremoved)
	require.Empty(t, m.retry)

	round()
	require.Len(t, ev.resumed, 1)
	require.Len(t, ev.stuck, 2)
	require.Len(t, ev.still, 6, "the six rounds after the report, each counted once")
}

// TestStuckRetentionOfManyPathsIsOneReminder: a templated path's files sit
// side by side, in thousands; when none of their old segments can be
// removed, each path's failure is reported once, and then one reminder an
// hour sums them up rather than a line per path. Once they can go, each
// path is forgotten, its look again too.
func TestStuckRetentionOfManyPathsIsOneReminder(t *testing.T) {
	const n = 40
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	var paths, oldest []string
	for i := range n {
		path := filepath.Join(dir, fmt.Sprintf("session-%02d.jsonl", i))
		for seq := int64(1); seq <= 2; seq++ {
			seg := namerFor(path).name(t0.Add(time.Duration(seq)*time.Hour), seq)
			require.NoError(t, os.WriteFile(seg, numberedLines(1, 1), 0o600))
			if seq == 1 {
				oldest = append(oldest, seg)
			}
		}
		paths = append(paths, path)
	}
	ev := newStuckEvents(&Rotation{MaxBackups: 1}, t0.Add(3*time.Hour))
	m := &maintainer{rot: ev.rotation, marks: newOwnMarks(), ctx: context.Background(),
		after: func(time.Duration, func()) func() bool {
			return func() bool { return true } // looked at again by the test's rounds
		}}
	removable := makeUnremovable(t, m, oldest...)

	for range 7 { // two hours
		require.True(t, m.round(paths))
		ev.clock = ev.clock.Add(20 * time.Minute)
	}
	require.Len(t, ev.errors(), n, "each path's failure is reported once")
	require.Len(t, ev.still, 6*n)
	require.Len(t, ev.stuck, 2, "one reminder an hour for all the paths")
	for _, s := range ev.stuck {
		require.Equal(t, n, s.Paths)
		require.Equal(t, n, s.Due)
		require.Equal(t, 3*n, s.Rounds)
		require.Equal(t, paths[0], s.Longest.Path, "the longest stopped, the first by name among equals")
	}
	require.Len(t, m.later, n)

	removable()
	require.True(t, m.round(paths))
	require.Len(t, ev.removed, n)
	require.Len(t, ev.resumed, n)
	require.Empty(t, m.stopped.paths)
	require.Empty(t, m.unremoved)
	require.Empty(t, m.retry)
	require.Empty(t, m.later, "no look again is left for a path that runs through")
}

// TestARetentionStoppedAgainAfterRunningIsReportedAnew: a path whose
// retention ran through (its unremovable segment no longer due: a newer
// one was put away by hand) and then stops at the same segment again, the
// same failure on the same file, has it reported again, not counted
// without a word.
func TestARetentionStoppedAgainAfterRunningIsReportedAnew(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	path, segs := retainDir(t, 2, t0)
	ev := newStuckEvents(&Rotation{MaxBackups: 1}, segs[1].Time.Add(time.Minute))
	m := &maintainer{rot: ev.rotation, marks: newOwnMarks(), ctx: context.Background(),
		after: func(time.Duration, func()) func() bool { return func() bool { return true } }}
	round := func() { require.True(t, m.round([]string{path})) }
	removable := makeUnremovable(t, m, segs[0].Plain)
	round()
	round()
	require.Len(t, ev.errors(), 1)
	require.Len(t, ev.still, 1)

	removable()
	require.NoError(t, os.Remove(segs[1].Plain))
	removable = makeUnremovable(t, m, segs[0].Plain)
	round()
	require.Len(t, ev.resumed, 1, "one segment is within max_backups: retention runs through")
	require.Empty(t, m.stopped.paths)

	removable()
	require.NoError(t, os.WriteFile(segs[1].Plain, numberedLines(2, 2), 0o600))
	makeUnremovable(t, m, segs[0].Plain)
	round()
	require.Len(t, ev.errors(), 2, "a stop after running through is reported")
	require.Len(t, ev.still, 1)

	ev.clock = ev.clock.Add(time.Hour)
	round()
	require.Len(t, ev.stuck, 1)
	require.Equal(t, 1, ev.stuck[0].Rounds, "the rounds of the earlier stop are not counted again")
}

// TestARefusedRemovalIsReportedEachRoundAndLookedAtAgain: a removal
// BeforeRemove refuses (integrity has not sealed the segment yet) is
// reported each round, as the refusal may change, and looked at again at
// doubling waits, as a failed removal is: a finished file sees no
// rotation. A path that then runs through is told as one that runs again.
func TestARefusedRemovalIsReportedEachRoundAndLookedAtAgain(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	path, segs := retainDir(t, 2, t0)
	ev := newStuckEvents(&Rotation{MaxBackups: 1}, segs[1].Time.Add(time.Minute))
	refusal := errors.New("not sealed into the log yet")
	ev.rotation.BeforeRemove = func(string, Segment) error { return refusal }
	m := &maintainer{rot: ev.rotation, marks: newOwnMarks()}
	var waits []time.Duration
	for range 2 {
		waits = append(waits, m.maintain(context.Background(), path, newListings(nil)))
	}
	require.Equal(t, []time.Duration{compressRetryMin, 2 * compressRetryMin}, waits,
		"looked at again, a finished file seeing no rotation, at doubling waits")
	require.Len(t, ev.errors(), 2)
	require.ErrorIs(t, ev.errors()[1], refusal)
	require.Empty(t, ev.still)
	require.Len(t, m.stopped.paths, 1)

	ev.rotation.BeforeRemove = nil
	m.maintain(context.Background(), path, newListings(nil))
	require.Len(t, ev.removed, 1)
	require.Len(t, ev.resumed, 1)
	require.Equal(t, 2, ev.resumed[0].Rounds, "the rounds it stopped in")
}

// TestAStoppedPathWhoseDirectoryIsGoneIsForgotten: the state kept for a
// stopped retention goes with the path's directory.
func TestAStoppedPathWhoseDirectoryIsGoneIsForgotten(t *testing.T) {
	path, segs, ev, m := twoSegmentsOneBackup(t)
	removable := makeUnremovable(t, m, segs[0].Plain)
	require.Positive(t, m.maintain(context.Background(), path, newListings(nil)))
	require.Len(t, m.stopped.paths, 1)
	require.Len(t, m.unremoved, 1)
	require.Len(t, m.retry, 1)

	removable()
	require.NoError(t, os.RemoveAll(filepath.Dir(path)))
	m.maintain(context.Background(), path, newListings(nil))
	require.Empty(t, ev.removed)
	require.Len(t, ev.resumed, 1)
	require.Empty(t, m.stopped.paths)
	require.Empty(t, m.unremoved)
	require.Empty(t, m.retry, "its retry wait goes too")
}

// TestAStoppedPathIsLookedAtAgainAfterAFailedListing: a listing of the
// directory that fails (too many open files) is reported, and the path
// whose retention stopped is still looked at again: its next round stops
// again and is counted, rather than the path left unwatched until a
// rotation that may never come.
func TestAStoppedPathIsLookedAtAgainAfterAFailedListing(t *testing.T) {
	path, segs, ev, m := twoSegmentsOneBackup(t)
	makeUnremovable(t, m, segs[0].Plain)
	first := m.maintain(context.Background(), path, newListings(nil))
	require.Positive(t, first)

	failing := func(string) ([]os.DirEntry, error) { return nil, syscall.EMFILE }
	again := m.maintain(context.Background(), path, newListings(failing))
	require.Len(t, ev.errors(), 2)
	require.ErrorIs(t, ev.errors()[1], syscall.EMFILE)
	require.Greater(t, again, first, "looked at again, the wait doubled")

	m.maintain(context.Background(), path, newListings(nil))
	require.Len(t, ev.still, 1, "the round after stops again, counted")
	require.Len(t, m.stopped.paths, 1)
}

// TestAFailedRemovalNamesTheFileOnce: the error of a segment file that
// cannot be removed, logged and repeated in the hourly summary, names the
// step and the file once, then the cause.
func TestAFailedRemovalNamesTheFileOnce(t *testing.T) {
	path, segs, ev, m := twoSegmentsOneBackup(t)
	makeUnremovable(t, m, segs[0].Plain)
	m.maintain(context.Background(), path, newListings(nil))
	require.Len(t, ev.errors(), 1)
	err := ev.errors()[0]
	require.Equal(t, 1, strings.Count(err.Error(), segs[0].Plain), err.Error())
	require.True(t, strings.HasPrefix(err.Error(), "retention: remove "+segs[0].Plain+": "), err.Error())
	require.ErrorIs(t, err, fs.ErrPermission)
}
