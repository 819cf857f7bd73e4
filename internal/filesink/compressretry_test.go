package filesink

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestFailedCompressionIsTriedAgain: a compression that fails (a full
// disk, here a directory in its temp file's place) leaves the plain
// segment, is reported, and is tried again later by itself, at waits
// that double, not only at the next rotation, which may be days away.
func TestFailedCompressionIsTriedAgain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	plain := namerFor(path).name(t0, 1)
	require.NoError(t, os.WriteFile(plain, numberedLines(1, 3), 0o600))
	tmp := plain + ZstdSuffix + tmpSuffix
	require.NoError(t, os.Mkdir(tmp, 0o700))
	var ev rotationEvents
	r := ev.hook(&Rotation{Compress: true})
	r.now = func() time.Time { return t0.Add(time.Hour) }
	m := &maintainer{rot: r, marks: newOwnMarks()}
	ctx := context.Background()

	first := m.maintain(ctx, path, newListings(nil))
	require.Equal(t, compressRetryMin, first, "tried again later")
	require.Len(t, ev.errors(), 1)
	require.FileExists(t, plain)
	require.Equal(t, 2*compressRetryMin, m.maintain(ctx, path, newListings(nil)), "the wait doubles")

	require.NoError(t, os.Remove(tmp))
	require.Zero(t, m.maintain(ctx, path, newListings(nil)))
	require.NoFileExists(t, plain)
	require.FileExists(t, plain+ZstdSuffix)
	require.Empty(t, m.retry, "forgotten once it worked")
}
