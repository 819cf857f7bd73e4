package filesink

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/sandboxaudit/sandboxaudit/internal/groupcommit"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/groupcommittest"
)

// groupRig is a sink whose first sync waits until the test lets it go on
// (groupcommittest.HeldSync), so that a test can queue batches behind it
// and have them committed as one group.
type groupRig struct {
	t    *testing.T
	s    *Sink
	path string
	held *groupcommittest.HeldSync
}

// newGroupRig makes the rig; failSync maps 1-based sync numbers to errors.
func newGroupRig(t *testing.T, opts Options, failSync map[int]error) *groupRig {
	r := &groupRig{t: t, path: filepath.Join(t.TempDir(), "audit.jsonl"), held: groupcommittest.NewHeldSync(t, failSync)}
	opts.Path = r.path
	if opts.Fsync == "" {
		opts.Fsync = FsyncBatch
	}
	opts.syncFn = r.held.Sync
	s, err := New(opts)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	t.Cleanup(r.held.LetGo) // before the sink's Close: a failed test must not leave a writer waiting
	r.s = s
	return r
}

func (r *groupRig) syncCount() int { return r.held.Calls() }

// behind writes first and, while its sync is held, the batches behind it
// (see HeldSync.Behind); it returns the batches' results in order.
func (r *groupRig) behind(first []byte, batches ...[]byte) []error {
	write := func(b []byte) func() error {
		return func() error { return r.s.WriteBatch(context.Background(), testSession, b) }
	}
	rest := make([]func() error, len(batches))
	for i, b := range batches {
		rest[i] = write(b)
	}
	return r.held.Behind(r.t, r.queued, write(first), rest...)
}

// queued is the length of the file's queue, the batch committing included.
func (r *groupRig) queued() int {
	r.s.mu.Lock()
	of := r.s.files[r.path]
	r.s.mu.Unlock()
	if of == nil {
		return 0
	}
	return of.queue.Len()
}

func (r *groupRig) file() string {
	got, err := os.ReadFile(r.path)
	require.NoError(r.t, err)
	return string(got)
}

func batchNamed(name string, lines int) []byte {
	var b bytes.Buffer
	for i := range lines {
		fmt.Fprintf(&b, "{\"batch\":%q,\"i\":%d}\n", name, i)
	}
	return b.Bytes()
}

// TestConcurrentBatchesShareOneSync: batches that queue while another is
// syncing are committed together, with one fdatasync for all of them, and
// each lands whole.
func TestConcurrentBatchesShareOneSync(t *testing.T) {
	r := newGroupRig(t, Options{}, nil)
	first := batchNamed("first", 3)
	var rest [][]byte
	for i := range 8 {
		rest = append(rest, batchNamed(fmt.Sprintf("b%d", i), 1+i))
	}
	for _, err := range r.behind(first, rest...) {
		require.NoError(t, err)
	}
	require.Equal(t, 2, r.syncCount(), "one sync for the first batch, one for the eight queued behind it")
	require.True(t, strings.HasPrefix(r.file(), string(first)))
	groupcommittest.RequireWhole(t, r.file(), append(rest, first)...)
}

// TestFailedGroupSyncCutsEveryBatchBack: when the group's shared sync
// fails, none of its batches is reported written or left in the file (the
// lost pages may be any of theirs), and their retries land whole.
func TestFailedGroupSyncCutsEveryBatchBack(t *testing.T) {
	r := newGroupRig(t, Options{}, map[int]error{2: unix.EIO})
	first := batchNamed("first", 2)
	a, b := batchNamed("a", 3), batchNamed("b", 4)
	for _, err := range r.behind(first, a, b) {
		require.ErrorIs(t, err, unix.EIO)
	}
	require.Equal(t, string(first), r.file(), "a batch of the failed group stayed in the file")

	for _, batch := range [][]byte{a, b} {
		require.NoError(t, r.s.WriteBatch(context.Background(), testSession, batch))
	}
	groupcommittest.RequireWhole(t, r.file(), first, a, b)
}

// TestRefusedBatchFailsAloneInItsGroup: a batch the disk refuses part-way
// is cut back and fails; the batches committed with it are written whole.
func TestRefusedBatchFailsAloneInItsGroup(t *testing.T) {
	bad := batchNamed("bad", 5)
	r := newGroupRig(t, Options{writeFn: func(f *os.File, b []byte) (int, error) {
		if bytes.Equal(b, bad) {
			n, _ := f.Write(b[:len(b)/2]) // a full disk takes a prefix
			return n, unix.ENOSPC
		}
		return f.Write(b)
	}}, nil)
	first := batchNamed("first", 1)
	a, c := batchNamed("a", 2), batchNamed("c", 3)
	errs := r.behind(first, a, bad, c)
	require.NoError(t, errs[0])
	require.ErrorIs(t, errs[1], unix.ENOSPC)
	require.NoError(t, errs[2])
	require.Equal(t, 2, r.syncCount())
	groupcommittest.RequireWhole(t, r.file(), first, a, c)
}

// TestLockFailureFailsOnlyItsCaller: the goroutine committing a group
// waits for flock with its own context; when that wait fails, its batch
// fails and the others stay queued for their own callers to commit.
func TestLockFailureFailsOnlyItsCaller(t *testing.T) {
	errLock := errors.New("lock wait ended")
	var mu sync.Mutex
	locks := 0
	r := newGroupRig(t, Options{lockFn: func(ctx context.Context, fd int) error {
		mu.Lock()
		locks++
		n := locks
		mu.Unlock()
		if n == 2 { // the first commit after the held batch
			return errLock
		}
		return unix.Flock(fd, unix.LOCK_EX)
	}}, nil)
	first := batchNamed("first", 1)
	a, b := batchNamed("a", 2), batchNamed("b", 3)
	errs := r.behind(first, a, b)
	errA, errB := errs[0], errs[1]
	require.True(t, (errA == nil) != (errB == nil), "exactly one batch fails: a %v, b %v", errA, errB)
	failed, written := a, b
	if errB != nil {
		failed, written = b, a
		errA = errB
	}
	require.ErrorIs(t, errA, errLock)
	require.NotContains(t, r.file(), string(failed))
	groupcommittest.RequireWhole(t, r.file(), first, written)
}

// TestGroupsStayWithinTheirBound: batches that together exceed
// groupcommit.MaxGroupBytes are committed in several groups, each caller waiting until
// its own batch is done.
func TestGroupsStayWithinTheirBound(t *testing.T) {
	r := newGroupRig(t, Options{}, nil)
	first := batchNamed("first", 1)
	big := make([][]byte, 3)
	for i := range big {
		line := fmt.Sprintf("{\"big\":%d,\"pad\":%q}\n", i, strings.Repeat("x", 1000))
		big[i] = bytes.Repeat([]byte(line), groupcommit.MaxGroupBytes*6/10/len(line))
	}
	for _, err := range r.behind(first, big...) {
		require.NoError(t, err)
	}
	require.Equal(t, 4, r.syncCount(), "no two of the big batches fit in one group: one sync each")
	groupcommittest.RequireWhole(t, r.file(), append(big, first)...)
}

// TestFsyncAlwaysCommitsBatchesAlone: with a sync per line a group would
// save no sync and only hold the lock longer against another writer (the
// Python sink), so each queued batch takes the lock on its own.
func TestFsyncAlwaysCommitsBatchesAlone(t *testing.T) {
	var mu sync.Mutex
	locks := 0
	r := newGroupRig(t, Options{Fsync: FsyncAlways, lockFn: func(ctx context.Context, fd int) error {
		mu.Lock()
		locks++
		mu.Unlock()
		return unix.Flock(fd, unix.LOCK_EX)
	}}, nil)
	first := batchNamed("first", 2)
	rest := [][]byte{batchNamed("a", 2), batchNamed("b", 3), batchNamed("c", 1)}
	for _, err := range r.behind(first, rest...) {
		require.NoError(t, err)
	}
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, 4, locks, "one lock hold per batch")
	require.Equal(t, 8, r.syncCount(), "one sync per line")
	groupcommittest.RequireWhole(t, r.file(), append(rest, first)...)
}

// TestBatchesQueuedDuringTheLockWaitJoin: the group is taken once the file
// is locked, so batches that queue while another process (the Python sink)
// holds the lock are written with the first one and share its sync.
func TestBatchesQueuedDuringTheLockWaitJoin(t *testing.T) {
	r := newGroupRig(t, Options{}, nil)
	r.held.LetGo() // no held sync here: the other process's lock holds the queue
	holder, err := os.OpenFile(r.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	require.NoError(t, err)
	defer func() { _ = holder.Close() }()
	require.NoError(t, unix.Flock(int(holder.Fd()), unix.LOCK_EX))

	batches := [][]byte{batchNamed("x", 1), batchNamed("y", 2), batchNamed("z", 3)}
	results := make(chan error, len(batches))
	for i, b := range batches {
		go func() { results <- r.s.WriteBatch(context.Background(), testSession, b) }()
		deadline := time.Now().Add(10 * time.Second)
		for r.queued() < i+1 {
			require.False(t, time.Now().After(deadline), "batch %d never queued", i)
			time.Sleep(time.Millisecond)
		}
	}
	require.NoError(t, unix.Flock(int(holder.Fd()), unix.LOCK_UN))
	for range batches {
		require.NoError(t, <-results)
	}
	require.Equal(t, 1, r.syncCount(), "the batches that queued during the lock wait share one sync")
	groupcommittest.RequireWhole(t, r.file(), batches...)
}
