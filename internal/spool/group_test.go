package spool

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/groupcommittest"
)

// heldSpool is a spool whose first sync waits until the test lets it go
// on (groupcommittest.HeldSync), so that appends can queue behind it and
// be committed as one group.
type heldSpool struct {
	*Spool
	t    *testing.T
	held *groupcommittest.HeldSync
}

// newHeldSpool makes the spool; failSync maps 1-based sync numbers to
// errors.
func newHeldSpool(t *testing.T, opts Options, failSync map[int]error) *heldSpool {
	opts.Path = filepath.Join(t.TempDir(), "spool.jsonl")
	h := &heldSpool{Spool: openSpool(t, opts), t: t, held: groupcommittest.NewHeldSync(t, failSync)}
	h.syncFn = h.held.Sync
	return h
}

func (h *heldSpool) syncCount() int { return h.held.Calls() }

// behind appends first and, while its sync is held, the batches behind it
// (see HeldSync.Behind); it returns the batches' results in order.
func (h *heldSpool) behind(first []byte, batches ...[]byte) []error {
	appendFn := func(b []byte) func() error {
		return func() error { return h.Append(context.Background(), b) }
	}
	rest := make([]func() error, len(batches))
	for i, b := range batches {
		rest[i] = appendFn(b)
	}
	return h.held.Behind(h.t, h.queue.Len, appendFn(first), rest...)
}

// replayAll returns what a replay delivers.
func (h *heldSpool) replayAll() string {
	c := &collector{}
	_, err := h.Replay(context.Background(), 1000, 1<<20, c.send)
	require.NoError(h.t, err)
	return c.data.String()
}

// TestAppendsQueuedBehindASyncShareTheNext: appends that queue while
// another is syncing (concurrent pushes spooling during an outage) are
// written with one sync for all of them, each whole.
func TestAppendsQueuedBehindASyncShareTheNext(t *testing.T) {
	h := newHeldSpool(t, Options{}, nil)
	first := makeLines(0, 2, 20)
	rest := [][]byte{makeLines(10, 1, 30), makeLines(20, 3, 10), makeLines(30, 2, 50), makeLines(40, 1, 5)}
	for _, err := range h.behind(first, rest...) {
		require.NoError(t, err)
	}
	require.Equal(t, 2, h.syncCount())
	all := append([][]byte{first}, rest...)
	total := 0
	for _, b := range all {
		total += len(b)
	}
	require.Equal(t, int64(total), h.Size())
	groupcommittest.RequireWhole(t, h.replayAll(), all...)
}

// TestFailedGroupSyncDropsEveryAppend: when the shared sync fails, every
// append of the group fails and is cut back out (nothing of it is
// replayed), and the retries are kept.
func TestFailedGroupSyncDropsEveryAppend(t *testing.T) {
	h := newHeldSpool(t, Options{}, map[int]error{2: unix.EIO})
	first := makeLines(0, 1, 10)
	a, b := makeLines(10, 2, 10), makeLines(20, 3, 10)
	for _, err := range h.behind(first, a, b) {
		require.ErrorIs(t, err, unix.EIO)
	}
	require.Equal(t, int64(len(first)), h.Size())
	require.Equal(t, int64(len(first)), fileSize(t, h.Path()), "a failed append left bytes in the file")
	for _, batch := range [][]byte{a, b} {
		require.NoError(t, h.Append(context.Background(), batch))
	}
	groupcommittest.RequireWhole(t, h.replayAll(), first, a, b)
}

// TestGroupRefusesOnlyWhatFailsAlone: in one group, an append over
// MaxSize is refused with ErrFull and one whose write fails is cut back;
// each fails alone, and the others are written.
func TestGroupRefusesOnlyWhatFailsAlone(t *testing.T) {
	h := newHeldSpool(t, Options{MaxSize: 300}, nil)
	bad := []byte(`{"bad":"` + strings.Repeat("w", 40) + "\"}\n")
	h.writeFn = func(f *os.File, b []byte) (int, error) {
		if string(b) == string(bad) {
			n, _ := f.Write(b[:len(b)/2]) // a full disk takes a prefix
			return n, unix.ENOSPC
		}
		return f.Write(b)
	}
	first := []byte(`{"first":"` + strings.Repeat("f", 88) + "\"}\n") // 101 bytes
	tooBig := []byte(`{"big":"` + strings.Repeat("b", 190) + "\"}\n") // 201: over 300 with first
	small := []byte(`{"small":"` + strings.Repeat("s", 38) + "\"}\n") // 51
	errs := h.behind(first, tooBig, bad, small)
	require.ErrorIs(t, errs[0], ErrFull)
	require.ErrorIs(t, errs[1], unix.ENOSPC)
	require.NoError(t, errs[2])
	require.Equal(t, int64(len(first)+len(small)), fileSize(t, h.Path()))
	groupcommittest.RequireWhole(t, h.replayAll(), first, small)
}

// TestCloseDoesNotStrandQueuedAppends: an append queued when the spool
// closes returns, kept if it was committed before the close and with
// ErrClosed otherwise; it never waits on.
func TestCloseDoesNotStrandQueuedAppends(t *testing.T) {
	h := newHeldSpool(t, Options{}, nil)
	first := makeLines(0, 1, 10)
	held := make(chan error, 1)
	go func() { held <- h.Append(context.Background(), first) }()
	<-h.held.Entered()
	second := makeLines(1, 1, 10)
	queued := make(chan error, 1)
	go func() { queued <- h.Append(context.Background(), second) }()
	deadline := time.Now().Add(10 * time.Second)
	for h.queue.Len() < 2 {
		require.False(t, time.Now().After(deadline), "the second append never queued")
		time.Sleep(time.Millisecond)
	}
	closed := make(chan error, 1)
	go func() { closed <- h.Close() }() // waits for the first append's commit
	h.held.LetGo()
	require.NoError(t, <-held)
	require.NoError(t, <-closed)
	select {
	case err := <-queued:
		data, rerr := os.ReadFile(h.Path())
		require.NoError(t, rerr)
		if err == nil {
			require.Equal(t, string(first)+string(second), string(data))
		} else {
			require.ErrorIs(t, err, ErrClosed)
			require.Equal(t, string(first), string(data))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("an append queued at close never returned")
	}
}

// TestRefusedWriteCutIsSynced: an append whose write fails is cut back
// out, and the cut is synced, so the refused lines cannot come back after
// a crash and be replayed.
func TestRefusedWriteCutIsSynced(t *testing.T) {
	s := openSpool(t, Options{Path: filepath.Join(t.TempDir(), "spool.jsonl")})
	syncs := 0
	s.syncFn = func(f *os.File) error { syncs++; return fsutil.Fdatasync(f) }
	s.writeFn = func(f *os.File, b []byte) (int, error) {
		n, _ := f.Write(b[:len(b)/2])
		return n, unix.ENOSPC
	}
	require.ErrorIs(t, s.Append(context.Background(), makeLines(0, 3, 10)), unix.ENOSPC)
	require.Equal(t, int64(0), fileSize(t, s.Path()))
	require.Equal(t, 1, syncs, "the cut must be synced")
}

// TestPanickedAppendBreaksTheSpool: if an append panics part-way, bytes
// past the spool's end may be in the file, so later appends are refused
// until the spool is reopened (whose recovery deals with the tail) rather
// than written after them.
func TestPanickedAppendBreaksTheSpool(t *testing.T) {
	s := openSpool(t, Options{Path: filepath.Join(t.TempDir(), "spool.jsonl")})
	s.writeFn = func(f *os.File, b []byte) (int, error) {
		_, _ = f.Write(b[:len(b)/2])
		panic("write panicked")
	}
	func() {
		defer func() { require.NotNil(t, recover(), "the panic must reach the caller") }()
		_ = s.Append(context.Background(), makeLines(0, 2, 10))
	}()
	s.writeFn = (*os.File).Write
	err := s.Append(context.Background(), makeLines(5, 1, 10))
	require.ErrorContains(t, err, "unusable until reopened")
	require.ErrorContains(t, err, "panicked")
}

// TestQueuedAppendIsPending: an append still waiting to be written already
// counts as pending, so the HTTP sink neither delivers a later line live
// ahead of it nor takes the spool for drained and the endpoint for up.
func TestQueuedAppendIsPending(t *testing.T) {
	s := openSpool(t, Options{Path: filepath.Join(t.TempDir(), "spool.jsonl")})
	require.False(t, s.Pending())
	s.mu.Lock() // as a commit or a rewrite holds it
	appended := make(chan error, 1)
	go func() { appended <- s.Append(context.Background(), makeLines(0, 1, 10)) }()
	deadline := time.Now().Add(10 * time.Second)
	for s.queue.Len() < 1 {
		require.False(t, time.Now().After(deadline), "the append never queued")
		time.Sleep(time.Millisecond)
	}
	pending := make(chan bool, 1)
	go func() { pending <- s.Pending() }()
	select {
	case p := <-pending:
		require.True(t, p, "a queued append must count as pending")
	case <-time.After(5 * time.Second):
		t.Error("Pending waited for the append instead of counting it")
	}
	s.mu.Unlock()
	require.NoError(t, <-appended)
	require.True(t, s.Pending())
}
