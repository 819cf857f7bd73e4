// Package groupcommittest is test support for group commit: a sync that
// its first caller waits in, so that a test can queue batches behind a
// commit deterministically and see them committed as one group.
package groupcommittest // import "github.com/sandboxaudit/sandboxaudit/internal/testutil/groupcommittest"

import (
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
)

// HeldSync is an fdatasync whose first call waits until LetGo, counts its
// calls and fails those named in Fail.
type HeldSync struct {
	entered chan struct{} // closed when the first sync starts
	gate    chan struct{} // closed by LetGo
	// LetGo lets the first sync go on; it is also called at cleanup, so a
	// failed test does not leave a writer waiting.
	LetGo func()

	mu    sync.Mutex
	calls int
	fail  map[int]error
}

// NewHeldSync returns a HeldSync; fail maps 1-based call numbers to the
// errors those calls return instead of syncing.
func NewHeldSync(t testing.TB, fail map[int]error) *HeldSync {
	h := &HeldSync{entered: make(chan struct{}), gate: make(chan struct{}), fail: fail}
	h.LetGo = sync.OnceFunc(func() { close(h.gate) })
	t.Cleanup(h.LetGo)
	return h
}

// Sync is the fdatasync to install in the writer under test.
func (h *HeldSync) Sync(f *os.File) error {
	h.mu.Lock()
	h.calls++
	n := h.calls
	err := h.fail[n]
	h.mu.Unlock()
	if n == 1 {
		close(h.entered)
		<-h.gate
	}
	if err != nil {
		return err
	}
	return fsutil.Fdatasync(f)
}

// Entered is closed once the first sync has started (and waits), for
// tests that queue behind it in their own way.
func (h *HeldSync) Entered() <-chan struct{} { return h.entered }

// Calls is how many syncs there were.
func (h *HeldSync) Calls() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.calls
}

// Behind runs first and, once it waits in the held sync, runs each of rest
// concurrently; when queued (the writer's queue length, the batch
// committing included) shows them all waiting behind first, it lets the
// sync go on. It fails the test unless first succeeds, and returns rest's
// results in order.
func (h *HeldSync) Behind(t testing.TB, queued func() int, first func() error, rest ...func() error) []error {
	t.Helper()
	held := make(chan error, 1)
	go func() { held <- first() }()
	select {
	case <-h.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the first batch never reached its sync")
	}
	results := make([]chan error, len(rest))
	for i, f := range rest {
		results[i] = make(chan error, 1)
		go func() { results[i] <- f() }()
	}
	deadline := time.Now().Add(10 * time.Second)
	for queued() < 1+len(rest) {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d batches queued", queued()-1, len(rest))
		}
		time.Sleep(time.Millisecond)
	}
	h.LetGo()
	if err := <-held; err != nil {
		t.Fatalf("the first batch: %v", err)
	}
	errs := make([]error, len(rest))
	for i, r := range results {
		errs[i] = <-r
	}
	return errs
}

// RequireWhole checks that got holds exactly the want batches, each in one
// piece, in any order: what a group commit must leave behind.
func RequireWhole(t testing.TB, got string, want ...[]byte) {
	t.Helper()
	total := 0
	for _, b := range want {
		require.Contains(t, got, string(b), "a batch is missing or torn")
		total += len(b)
	}
	require.Len(t, got, total, "bytes of no wanted batch")
}
