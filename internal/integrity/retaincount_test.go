package integrity

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
)

// Files put beside the segments under names that sort after the last
// recorded one are not the log's: they do not count toward max_backups,
// so they cannot make retention sign away the log's own segments early.
func TestRetentionCountsOnlyTheLogsSegments(t *testing.T) {
	k, _ := testKeys(t, "test")
	path := filepath.Join(t.TempDir(), "events.jsonl")
	sealer := newSealer(t, k)
	var mu sync.Mutex
	removed := 0
	// The sink reports its rotations to the sealer, as the exporter wires
	// them: without reports every segment after the last recorded one is
	// taken for the log's, and the sink's next segment, named in a later
	// second than the planted files, sorts among them.
	rot := &filesink.Rotation{MaxBytes: 100, MaxBackups: 3, BeforeRemove: sealer.Retire, Holds: sealer.Holds,
		OnRotate:  sealer.Rotated,
		OnRemoved: func(string, filesink.Segment, string) { mu.Lock(); removed++; mu.Unlock() }}
	sink := sealedSink(t, path, rot, sealer)
	writeSealed(t, sink, sealer, 0, 40)
	// Retention runs after each rotation, off the writers' path: wait
	// until it has brought the log down to max_backups and reported the
	// removal. Ten batches, two to a file, made four segments and the
	// active file, so one went; a count read before it was reported
	// would be one short.
	var segs []filesink.Segment
	require.Eventually(t, func() bool {
		var err error
		segs, err = filesink.Segments(path)
		mu.Lock()
		defer mu.Unlock()
		return err == nil && len(segs) == 3 && removed == 1
	}, time.Minute, 5*time.Millisecond, "retention keeps max_backups segments")
	last := segs[len(segs)-1]
	planted := map[string]bool{}
	for seq := last.Seq + 1; seq <= last.Seq+3; seq++ {
		name := "events-" + last.Time.Format("20060102T150405Z") + "-" + fmtSeq(seq) + ".jsonl"
		require.NoError(t, os.WriteFile(filepath.Join(filepath.Dir(path), name), nil, 0o600))
		planted[name] = true
	}
	mu.Lock()
	before := removed
	mu.Unlock()
	require.NoError(t, sink.WriteBatch(bg, "s", []byte(lines(40, 43))))
	require.NoError(t, sink.WriteBatch(bg, "s", []byte(lines(44, 47))))
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return removed > before }, time.Minute, 5*time.Millisecond)
	require.NoError(t, sink.Close())
	// The sink reported no planted file: they are not the log's, and the
	// log goes on sealed.
	require.NoError(t, sealer.Close(bg))

	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, 1, removed-before, "one of the log's segments went, as without the files put beside them")
	sl, err := LoadSegmentLog(path, k.Verifier)
	require.NoError(t, err)
	kept := 0
	for _, r := range sl.Segments {
		// By name: the sink's next segment takes the planted files'
		// numbers when its rotation comes in a later second than theirs.
		require.False(t, planted[r.Name], "the planted %s recorded as the log's", r.Name)
		if _, err := os.Lstat(filepath.Join(filepath.Dir(path), r.Name)); err == nil {
			kept++
		}
	}
	require.Equal(t, 3, kept, "the three newest recorded segments stay")
}

func fmtSeq(n int64) string { return fmt.Sprintf("%06d", n) }
