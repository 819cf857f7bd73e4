package integrity

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/mod/sumdb/tlog"
	"golang.org/x/sys/unix"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
)

// rotatingLog is a sealed log of held lines whose file sink rotates
// before every 4-line batch.
func rotatingLog(t *testing.T, held int) (*Sealer, *filesink.Sink, string, []byte) {
	t.Helper()
	k, _ := testKeys(t, "test")
	path := auditPath(t)
	writeNumbered(t, path, held)
	sealer := newSealer(t, k)
	require.NoError(t, sealer.Seal(bg, path))
	batch := []byte(lines(0, 3))
	sink := sealedSink(t, path, &filesink.Rotation{MaxBytes: int64(len(batch))}, sealer)
	t.Cleanup(func() { _ = sink.Close() })
	return sealer, sink, path, batch
}

// A rotation's seal checks the closed segment and the new file against
// the store: it reads the segment's hashes and those added since, not
// the store from its first hash, whose size grows with the log's age.
func TestRotationSealReadsOnlyTheHashesOfItsSegment(t *testing.T) {
	sealer, sink, path, batch := rotatingLog(t, 2000)
	l := sealer.logs[path]
	for i := range 6 {
		before := l.walked
		require.NoError(t, sink.WriteBatch(bg, "s", batch))
		require.NoError(t, sealer.SealPending(bg))
		seg := l.segLog.Segments[len(l.segLog.Segments)-1]
		require.Equal(t, int64(2000+4*(i+1)), l.last.N, "the new file's lines are sealed")
		bound := tlog.StoredHashCount(l.last.N) - tlog.StoredHashCount(seg.First)
		require.LessOrEqual(t, l.walked-before, bound,
			"rotation %d read more of the store than the hashes from its segment's first line (%d) on", i, seg.First)
	}
}

// A store changed in place since the sealer checked it, at its size, is
// read from its first hash again at the next rotation, as at start: a
// hash over two subtrees that is not theirs is refused there. So it is
// when a seal without a rotation (lines another writer appended) came
// between: that seal reads no store hash, and must not pass the change
// off as checked.
func TestRotationSealChecksAStoreChangedSince(t *testing.T) {
	for _, sealBetween := range []bool{false, true} {
		t.Run(fmt.Sprintf("seal-between=%v", sealBetween), func(t *testing.T) {
			sealer, sink, path, batch := rotatingLog(t, 200)
			l := sealer.logs[path]
			for range 2 {
				require.NoError(t, sink.WriteBatch(bg, "s", batch))
				require.NoError(t, sealer.SealPending(bg))
			}
			require.NotNil(t, l.mark, "the sealer walks on from where it checked")
			damageStoreHash(t, path, 2, l.mark.changed) // the hash over lines 1 and 2
			if sealBetween {
				appendLocked(t, path, lines(1000, 1000))
				require.NoError(t, sealer.SealPending(bg), "the change is off the consistency proof's path")
			}
			before, err := os.ReadFile(CheckpointsPath(path))
			require.NoError(t, err)

			require.NoError(t, sink.WriteBatch(bg, "s", batch))
			err = sealer.SealPending(bg)
			require.True(t, errors.Is(err, ErrTampered), "SealPending = %v, want tampering", err)
			require.True(t, strings.Contains(err.Error(), "is damaged") && strings.Contains(err.Error(), "lines 1-2"), "%v", err)
			after, err := os.ReadFile(CheckpointsPath(path))
			require.NoError(t, err)
			require.Equal(t, before, after, "nothing is signed over the damaged store")
		})
	}
}

// damageStoreHash zeroes stored hash idx of path's store in place,
// rewriting it until the store's change time is no longer was (it ticks
// coarser than a write).
func damageStoreHash(t *testing.T, path string, idx int64, was syscall.Timespec) {
	t.Helper()
	f, err := os.OpenFile(StorePath(path), os.O_WRONLY, 0)
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	bad := make([]byte, tlog.HashSize)
	for i := 0; ; i++ {
		_, err := f.WriteAt(bad, idx*tlog.HashSize)
		require.NoError(t, err)
		st, ok := statStore(&hashStore{f: f})
		require.True(t, ok)
		if st.Ctim != was {
			return
		}
		require.Less(t, i, 5000, "the store's change time did not move on")
		time.Sleep(time.Millisecond)
	}
}

// A start after a backlog of rotations (a collector killed while behind)
// reads the store whole once, for the first file it checks, and walks on
// from there for the others, not once for every segment.
func TestStartReadsTheStoreOnceForABacklogOfSegments(t *testing.T) {
	sealer, sink, path, batch := rotatingLog(t, 2000)
	for range 6 {
		require.NoError(t, sink.WriteBatch(bg, "s", batch)) // not sealed: a backlog
	}
	restarted := newSealer(t, sealer.set.Keys)
	require.NoError(t, restarted.SealAtStart(bg, path))
	l := restarted.logs[path]
	require.Equal(t, int64(2000+6*4), l.last.N)
	require.Equal(t, 6, l.segLog.Closed(), "the file of 2000 lines and five of the batches are closed segments, recorded")
	whole := tlog.StoredHashCount(l.last.N)
	require.LessOrEqual(t, l.walked, whole+whole/4, "the store was read %.1f times", float64(l.walked)/float64(whole))
}

// A store written by someone else while a seal runs, before the seal's
// own write, is read from its first hash again at the next rotation: the
// seal's write must not pass the change off as its own. The writer's
// flock holds the seal between its open of the store and its write.
func TestRotationSealChecksAStoreChangedDuringASeal(t *testing.T) {
	sealer, sink, path, batch := rotatingLog(t, 200)
	l := sealer.logs[path]
	for range 2 {
		require.NoError(t, sink.WriteBatch(bg, "s", batch))
		require.NoError(t, sealer.SealPending(bg))
	}
	require.NotNil(t, l.mark, "the sealer walks on from where it checked")
	was := l.mark.changed

	w, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	defer func() { _ = w.Close() }()
	require.NoError(t, unix.Flock(int(w.Fd()), unix.LOCK_EX))
	_, err = w.WriteString(lines(1000, 1000))
	require.NoError(t, err)
	opened := openCount(t, path)
	done := make(chan error, 1)
	go func() { done <- sealer.SealPending(bg) }()
	for i := 0; openCount(t, path) == opened; i++ {
		require.Less(t, i, 5000, "the seal did not open the file")
		time.Sleep(time.Millisecond)
	}
	damageStoreHash(t, path, 2, was) // the hash over lines 1 and 2
	require.NoError(t, unix.Flock(int(w.Fd()), unix.LOCK_UN))
	require.NoError(t, <-done, "the change is off the consistency proof's path")

	require.NoError(t, sink.WriteBatch(bg, "s", batch))
	err = sealer.SealPending(bg)
	require.True(t, errors.Is(err, ErrTampered), "SealPending = %v, want tampering", err)
	require.True(t, strings.Contains(err.Error(), "is damaged") && strings.Contains(err.Error(), "lines 1-2"), "%v", err)
}

// openCount counts this process's descriptors of path.
func openCount(t *testing.T, path string) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	n := 0
	for _, fd := range fds {
		if target, err := os.Readlink("/proc/self/fd/" + fd.Name()); err == nil && target == path {
			n++
		}
	}
	return n
}
