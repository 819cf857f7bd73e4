package filesink

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// heldLooks stands in for time.AfterFunc: it counts the looks again that
// are pending (neither fired nor stopped) and tells when one is made.
type heldLooks struct {
	mu      sync.Mutex
	pending int
	made    chan time.Duration
}

func (h *heldLooks) after(d time.Duration, _ func()) func() bool {
	h.mu.Lock()
	h.pending++
	h.mu.Unlock()
	h.made <- d
	stopped := false
	return func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		if stopped {
			return false
		}
		stopped = true
		h.pending--
		return true
	}
}

func (h *heldLooks) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.pending
}

// TestALookAgainIsReplacedAndStopped: a path rotated again while its
// failed compression waits to be tried again gets a round of its own,
// which looks at every segment; its look again replaces the pending one
// rather than starting a second chain of retries (one more per rotation,
// each failing and reported on its own). Stopping the sink stops the one
// left, so no timer outlives the maintainer.
func TestALookAgainIsReplacedAndStopped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	plain := namerFor(path).name(t0, 1)
	require.NoError(t, os.WriteFile(plain, numberedLines(1, 3), 0o600))
	require.NoError(t, os.Mkdir(plain+ZstdSuffix+tmpSuffix, 0o700)) // compression fails
	var ev rotationEvents
	r := ev.hook(&Rotation{Compress: true})
	r.now = func() time.Time { return t0.Add(time.Hour) }
	m := newMaintainer(r, newOwnMarks(), nil, nil, nil)
	looks := &heldLooks{made: make(chan time.Duration, 4)}
	m.after = looks.after // before schedule: the loop reads it after taking the queue

	for range 2 { // the failure's round, then a rotation's while the retry waits
		m.schedule(path)
		select {
		case <-looks.made:
		case <-time.After(time.Minute):
			m.stop()
			t.Fatal("no look again after a failed compression")
		}
	}
	require.Equal(t, 1, looks.count(), "one look again pending for the path")
	m.stop()
	require.Zero(t, looks.count(), "stopped with the maintainer")
}
