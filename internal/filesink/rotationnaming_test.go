package filesink

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
)

// listCounter counts a rotation's listings of the directory.
type listCounter struct {
	mu sync.Mutex
	n  int
}

func (c *listCounter) readDir(dir string) ([]os.DirEntry, error) {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	return os.ReadDir(dir)
}

func (c *listCounter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// requireSeqs checks that path's segments are numbered 1..n in order,
// each number once.
func requireSeqs(t *testing.T, path string, n int) []Segment {
	t.Helper()
	segs, err := Segments(path)
	require.NoError(t, err)
	require.Len(t, segs, n)
	for i, seg := range segs {
		require.Equal(t, int64(i+1), seg.Seq, "%s", filepath.Base(seg.Path))
	}
	return segs
}

// TestRotationNamesTheNextSegmentWithoutListing: under the writers' flock
// a rotation names its segment after the one it made last, without
// listing the directory (a {session_id} path's directory holds thousands
// of files); once another process rotated the file, it lists again, so
// no sequence number is made twice.
func TestRotationNamesTheNextSegmentWithoutListing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	var lists listCounter
	var ev rotationEvents
	r := ev.hook(&Rotation{MaxBytes: 1, readDir: lists.readDir})
	release := holdListings(r) // see TestRotationGoesOnWhileAnotherHoldsTheDirectoryLock
	defer release()
	s, err := New(Options{Path: path, Rotation: r})
	require.NoError(t, err)
	ctx := context.Background()
	for i := range 6 {
		require.NoError(t, s.WriteBatch(ctx, testSession, numberedLines(i, i)))
	}
	require.Equal(t, 1, lists.count(), "the first rotation lists; the next four name after it")

	// Another process rotates the file, as a second rotating writer would.
	last := requireSeqs(t, path, 5)[4]
	require.NoError(t, os.Rename(path, namerFor(path).name(last.Time.Add(time.Second), last.Seq+1)))
	require.NoError(t, os.WriteFile(path, numberedLines(6, 6), 0o600))
	for i := 7; i < 9; i++ {
		require.NoError(t, s.WriteBatch(ctx, testSession, numberedLines(i, i)))
	}
	release()
	require.NoError(t, s.Close())
	require.Equal(t, 2, lists.count(), "listed again after another process rotated")
	requireSeqs(t, path, 8)
	require.Empty(t, ev.errors())
}

// TestARotationBetweenAnotherOnesRenameAndOpen: a second sink on the path
// (another collector) rotates a file a writer made at the path right
// after this sink's rename, before this sink opened the new file. The
// directory's lock keeps it out until then, so this sink's next rotation
// knows of its segment (it lists), and no number is made twice.
func TestARotationBetweenAnotherOnesRenameAndOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	other, err := New(Options{Path: path, Rotation: &Rotation{MaxBytes: 1}})
	require.NoError(t, err)
	ctx := context.Background()
	var once sync.Once
	otherErr := make(chan error, 1)
	var ev rotationEvents
	r := ev.hook(&Rotation{MaxBytes: 1})
	// A minute a batch: this sink's names are never the other's.
	clock := &fakeClock{t: time.Now()}
	clock.drive(r)
	r.renamed = func(string) {
		once.Do(func() {
			// A Python writer's line in the new file, then the other
			// sink's batch, which rotates it first.
			require.NoError(t, os.WriteFile(path, numberedLines(100, 100), 0o600))
			done := make(chan struct{})
			go func() {
				defer close(done)
				otherErr <- other.WriteBatch(ctx, testSession, numberedLines(101, 101))
			}()
			select {
			case <-done: // it got in: the rotation's lock let it
			case <-time.After(300 * time.Millisecond): // held off
			}
		})
	}
	s, err := New(Options{Path: path, Rotation: r})
	require.NoError(t, err)
	for i := range 5 {
		require.NoError(t, s.WriteBatch(ctx, testSession, numberedLines(i, i)))
		clock.add(time.Minute)
	}
	require.NoError(t, s.Close())
	require.NoError(t, <-otherErr)
	require.NoError(t, other.Close())
	requireSeqs(t, path, 5)
	require.Empty(t, ev.errors())
}

// TestAFileNamedAsALaterSegmentIsFollowed: a file named as a segment
// after the one the sink made last, put there while it runs, is found by
// the maintenance listing; the next rotation lists and names after it,
// as a listing rotation always did. One dated ahead of the clock is
// logged once (OnIgnored) and not named after.
func TestAFileNamedAsALaterSegmentIsFollowed(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "events.jsonl")
	var lists listCounter
	var ev rotationEvents
	r := ev.hook(&Rotation{MaxBytes: 1, readDir: lists.readDir})
	var mu sync.Mutex
	var warned []string
	r.OnIgnored = func(_ string, seg Segment) { mu.Lock(); warned = append(warned, filepath.Base(seg.Path)); mu.Unlock() }
	// One maintenance listing, the one looked at, and none during a
	// rotation: between its rename and its record of the segment made,
	// one would make the next rotation list once more.
	allow := make(chan struct{})
	r.maintReadDir = func(d string) ([]os.DirEntry, error) {
		<-allow
		return os.ReadDir(d)
	}
	s, err := New(Options{Path: path, Rotation: r})
	require.NoError(t, err)
	ctx := context.Background()
	for i := range 3 {
		require.NoError(t, s.WriteBatch(ctx, testSession, numberedLines(i, i)))
	}
	require.Equal(t, 1, lists.count())
	ahead := filepath.Join(dir, "events-29991231T000000Z-000099.jsonl")
	require.NoError(t, os.WriteFile(ahead, numberedLines(90, 90), 0o600))
	later := namerFor(path).name(time.Now(), 50)
	require.NoError(t, os.WriteFile(later, numberedLines(50, 50), 0o600))
	s.maint.schedule(path)
	select {
	case allow <- struct{}{}:
	case <-time.After(10 * time.Second):
		t.Fatal("no maintenance listing")
	}
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(warned) == 1
	}, 10*time.Second, 5*time.Millisecond, "the maintenance listing finds the file dated ahead")
	require.Eventually(t, func() bool {
		s.marks.mu.Lock()
		defer s.marks.mu.Unlock()
		return s.marks.stale[path]
	}, 10*time.Second, 5*time.Millisecond, "and the later segment")
	require.NoError(t, s.WriteBatch(ctx, testSession, numberedLines(3, 3)))
	require.NoError(t, s.WriteBatch(ctx, testSession, numberedLines(4, 4)))
	close(allow)
	require.NoError(t, s.Close())
	require.Equal(t, 2, lists.count(), "listed again once, then named after the segment made")
	segs, err := Segments(path)
	require.NoError(t, err)
	var seqs []int64
	for _, seg := range segs {
		seqs = append(seqs, seg.Seq)
	}
	require.Equal(t, []int64{1, 2, 50, 51, 52, 99}, seqs)
	require.Equal(t, []string{filepath.Base(ahead)}, warned, "logged once")
	require.Empty(t, ev.errors())
}

// TestARememberedNameTakenIsNamedAfterAListing: a file put under the very
// name the next segment would take makes the rotation list and name after
// the newest segment, with no failure.
func TestARememberedNameTakenIsNamedAfterAListing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	clock := &fakeClock{t: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	var lists listCounter
	var ev rotationEvents
	r := ev.hook(&Rotation{MaxBytes: 1, readDir: lists.readDir})
	clock.drive(r)
	s, err := New(Options{Path: path, Rotation: r})
	require.NoError(t, err)
	ctx := context.Background()
	for i := range 3 {
		require.NoError(t, s.WriteBatch(ctx, testSession, numberedLines(i, i)))
	}
	taken := namerFor(path).name(clock.now(), 3)
	require.NoError(t, os.WriteFile(taken, numberedLines(50, 50), 0o600))
	require.NoError(t, s.WriteBatch(ctx, testSession, numberedLines(3, 3)))
	require.NoError(t, s.Close())
	require.Equal(t, 2, lists.count())
	segs := requireSeqs(t, path, 4)
	require.Equal(t, taken, segs[2].Path)
	require.Empty(t, ev.errors())
}

// TestTemplatedFilesListOnceEach: each file of a {session_id} path lists
// the directory it shares with the others at its first rotation only.
func TestTemplatedFilesListOnceEach(t *testing.T) {
	dir := t.TempDir()
	var lists listCounter
	var ev rotationEvents
	r := ev.hook(&Rotation{MaxBytes: 1, readDir: lists.readDir})
	release := holdListings(r) // see TestRotationGoesOnWhileAnotherHoldsTheDirectoryLock
	defer release()
	s, err := New(Options{Path: filepath.Join(dir, "{session_id}.jsonl"), Rotation: r})
	require.NoError(t, err)
	ids := []string{testSession, "00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002"}
	for i := range 5 {
		for _, id := range ids {
			require.NoError(t, s.WriteBatch(context.Background(), id, numberedLines(i, i)))
		}
	}
	release()
	require.NoError(t, s.Close())
	require.Equal(t, len(ids), lists.count())
	for _, id := range ids {
		requireSeqs(t, filepath.Join(dir, id+".jsonl"), 4)
	}
	require.Empty(t, ev.errors())
}

// TestRotationGoesOnWhileAnotherHoldsTheDirectoryLock: any local user who
// can read the directory can hold its flock. Each rotation then waits
// dirLockWait, goes on by a listing and opens nothing, so holding the lock
// delays rotation and never stops it, and no number is made twice.
func TestRotationGoesOnWhileAnotherHoldsTheDirectoryLock(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "events.jsonl")
	held := holdDirLock(t, dir)
	var lists listCounter
	var ev rotationEvents
	r := ev.hook(&Rotation{MaxBytes: 1, readDir: lists.readDir})
	// A maintenance listing between a rotation's rename and its record of
	// the segment made would make the next rotation list once more.
	release := holdListings(r)
	defer release()
	s, err := New(Options{Path: path, Rotation: r})
	require.NoError(t, err)
	ctx := context.Background()
	for i := range 4 {
		require.NoError(t, s.WriteBatch(ctx, testSession, numberedLines(i, i)))
	}
	require.Equal(t, 3, lists.count(), "each rotation names after a listing")
	fsutil.Unlock(int(held.Fd()))
	for i := 4; i < 7; i++ {
		require.NoError(t, s.WriteBatch(ctx, testSession, numberedLines(i, i)))
	}
	release()
	require.NoError(t, s.Close())
	require.Equal(t, 4, lists.count(), "once the lock is free, one listing, then from memory")
	requireSeqs(t, path, 6)
	require.Empty(t, ev.errors())
}

// holdListings keeps the maintenance of a sink made with r from listing
// until release: its listing would find a segment made behind a
// rotation's back and make the next rotation list, hiding what a test
// looks at.
func holdListings(r *Rotation) (release func()) {
	held := make(chan struct{})
	r.maintReadDir = func(dir string) ([]os.DirEntry, error) {
		<-held
		return os.ReadDir(dir)
	}
	return sync.OnceFunc(func() { close(held) })
}

// rotateBehind returns a Rotation.renamed hook that, at the first
// rotation only, makes a file at the path (a Python writer's line) and has
// other rotate it with ctx, waiting at most wait for that.
func rotateBehind(ctx context.Context, t *testing.T, other *Sink, path string, wait time.Duration) func(string) {
	var once sync.Once
	return func(string) {
		once.Do(func() {
			require.NoError(t, os.WriteFile(path, numberedLines(100, 100), 0o600))
			done := make(chan struct{})
			go func() {
				defer close(done)
				_ = other.WriteBatch(ctx, testSession, numberedLines(101, 101))
			}()
			select {
			case <-done:
			case <-time.After(wait):
			}
		})
	}
}

// rotateWithAnotherBehind writes five batches, a minute apart on its
// clock, through a sink whose first rotation has another sink rotate
// behind it (rotateBehind), and returns the path's segments.
func rotateWithAnotherBehind(t *testing.T, otherCtx context.Context, wait time.Duration) []Segment {
	t.Helper()
	path := filepath.Join(t.TempDir(), "events.jsonl")
	other, err := New(Options{Path: path, Rotation: &Rotation{MaxBytes: 1}})
	require.NoError(t, err)
	var ev rotationEvents
	r := ev.hook(&Rotation{MaxBytes: 1})
	clock := &fakeClock{t: time.Now()}
	clock.drive(r)
	r.renamed = rotateBehind(otherCtx, t, other, path, wait)
	release := holdListings(r)
	defer release()
	s, err := New(Options{Path: path, Rotation: r})
	require.NoError(t, err)
	for i := range 5 {
		require.NoError(t, s.WriteBatch(context.Background(), testSession, numberedLines(i, i)))
		clock.add(time.Minute)
	}
	release()
	require.NoError(t, s.Close())
	require.NoError(t, other.Close())
	require.Empty(t, ev.errors())
	segs, err := Segments(path)
	require.NoError(t, err)
	seen := map[int64]string{}
	for _, seg := range segs {
		require.NotContains(t, seen, seg.Seq, "%s and %s", seen[seg.Seq], filepath.Base(seg.Path))
		seen[seg.Seq] = filepath.Base(seg.Path)
	}
	return segs
}

// TestARotationStalledBetweenItsRenameAndOpen: a rotation that holds the
// directory's lock longer than dirLockWait between its rename and its
// open (a stalled process) lets another collector's rotation go on
// without the lock and rotate a file a writer made at the path meanwhile.
// The stalled one then lists at its next rotation rather than naming
// after the segment it made, which would make that number twice.
func TestARotationStalledBetweenItsRenameAndOpen(t *testing.T) {
	segs := rotateWithAnotherBehind(t, context.Background(), 10*dirLockWait)
	require.Len(t, segs, 5, "the other sink's rotation among this one's four")
}

// TestACanceledRotationWaitsForTheDirectoryLock: a rotation whose batch
// was canceled (a client that gave up) still waits for the directory's
// lock, up to dirLockWait, so it cannot come between another rotation's
// rename and open.
func TestACanceledRotationWaitsForTheDirectoryLock(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	rotateWithAnotherBehind(t, canceled, dirLockWait/4)
}

// TestARotationWaitsForItsTurnAtMostDirLockWait: the sink's rotations take
// turns at the directory's lock, and a turn counts toward the wait: with
// the lock held by another process, or one rotation stalled under it,
// every other rotation goes on within dirLockWait rather than queuing
// behind the others' waits (a {session_id} path's files would each add
// a second to the next one's batch).
func TestARotationWaitsForItsTurnAtMostDirLockWait(t *testing.T) {
	dir := t.TempDir()
	var ev rotationEvents
	r := ev.hook(&Rotation{MaxBytes: 1})
	stalled := filepath.Join(dir, testSession+".jsonl")
	other := "00000000-0000-4000-8000-000000000001"
	var s *Sink
	var once sync.Once
	otherDone := false
	r.renamed = func(path string) {
		if path != stalled {
			return
		}
		once.Do(func() {
			done := make(chan error, 1)
			go func() { done <- s.WriteBatch(context.Background(), other, numberedLines(11, 11)) }()
			select {
			case err := <-done:
				require.NoError(t, err)
				otherDone = true
			case <-time.After(10 * dirLockWait):
			}
		})
	}
	s, err := New(Options{Path: filepath.Join(dir, "{session_id}.jsonl"), Rotation: r})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, s.WriteBatch(ctx, other, numberedLines(10, 10)))
	require.NoError(t, s.WriteBatch(ctx, testSession, numberedLines(0, 0)))
	require.NoError(t, s.WriteBatch(ctx, testSession, numberedLines(1, 1)))
	require.NoError(t, s.Close())
	require.True(t, otherDone, "the other file's rotation waited for the stalled one")
	requireSeqs(t, stalled, 1)
	requireSeqs(t, filepath.Join(dir, other+".jsonl"), 1)
	require.Empty(t, ev.errors())
}

// TestAFileOpenLongTriesTheHeldDirectoryLockBriefly: a rotation of a file
// the sink has had open for dirLockWait cannot come between another
// rotation's rename and open that the other one would not see (it took
// that long), so with the directory's lock held by someone else it goes
// on after a short try: the interval timer's round over many files does
// not take a second per file.
func TestAFileOpenLongTriesTheHeldDirectoryLockBriefly(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "events.jsonl")
	held := holdDirLock(t, dir)
	var ev rotationEvents
	// A wait no test outlasts: a rotation that takes it hangs the test.
	r := ev.hook(&Rotation{MaxBytes: 1, lockWait: time.Hour})
	s, err := New(Options{Path: path, Rotation: r})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, s.WriteBatch(ctx, testSession, numberedLines(0, 0)))
	s.mu.Lock()
	of := s.files[path]
	s.mu.Unlock()
	of.mu.Lock()
	of.opened = of.opened.Add(-time.Hour) // open an hour already
	of.mu.Unlock()
	done := make(chan error, 1)
	go func() { done <- s.WriteBatch(ctx, testSession, numberedLines(1, 1)) }()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * dirLockWait):
		fsutil.Unlock(int(held.Fd()))
		t.Fatalf("the rotation waited for the held lock as for a file just opened (then: %v)", <-done)
	}
	require.NoError(t, s.Close())
	requireSeqs(t, path, 1)
	require.Empty(t, ev.errors())
}

// TestANameTakenByADirectoryIsPassedOver: a directory or a symlink under
// the next segment's name is passed over by a listing, so the rotation
// takes the number after it rather than failing each time (a name planted
// for every coming second would stop rotation for good).
func TestANameTakenByADirectoryIsPassedOver(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "events.jsonl")
	clock := &fakeClock{t: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	var ev rotationEvents
	r := ev.hook(&Rotation{MaxBytes: 1})
	clock.drive(r)
	n := namerFor(path)
	require.NoError(t, os.Mkdir(n.name(clock.now(), 1), 0o700)) // before the first rotation, which lists
	s, err := New(Options{Path: path, Rotation: r})
	require.NoError(t, err)
	ctx := context.Background()
	for i := range 3 {
		require.NoError(t, s.WriteBatch(ctx, testSession, numberedLines(i, i)))
	}
	// Remembered now: the next names are taken by a directory and a symlink.
	require.NoError(t, os.Mkdir(n.name(clock.now(), 4), 0o700))
	require.NoError(t, os.Symlink(filepath.Join(dir, "elsewhere"), n.name(clock.now(), 5)))
	require.NoError(t, s.WriteBatch(ctx, testSession, numberedLines(3, 3)))
	require.NoError(t, s.Close())
	segs, err := Segments(path)
	require.NoError(t, err)
	var seqs []int64
	for _, seg := range segs {
		seqs = append(seqs, seg.Seq)
	}
	require.Equal(t, []int64{2, 3, 6}, seqs)
	require.Empty(t, ev.errors())
}

// holdDirLock takes dir's flock as another process would, until the test
// ends.
func holdDirLock(t *testing.T, dir string) *os.File {
	t.Helper()
	held, err := os.Open(dir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = held.Close() })
	require.NoError(t, fsutil.TryLock(int(held.Fd())))
	return held
}
