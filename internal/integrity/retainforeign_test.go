package integrity

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
)

// A file planted beside the segments under a name that sorts before the
// last recorded segment is never sealed, so retention cannot sign its
// removal. Retention leaves it for verify to report, says why, and goes
// on removing the log's own segments.
func TestRetentionPassesOverAForeignSegment(t *testing.T) {
	k, _ := testKeys(t, "test")
	path := filepath.Join(t.TempDir(), "events.jsonl")
	sealer := newSealer(t, k)
	var mu sync.Mutex
	var rotErrs []string
	rot := &filesink.Rotation{MaxBytes: 100, MaxBackups: 3, BeforeRemove: sealer.Retire,
		OnError: func(_ string, err error) { mu.Lock(); rotErrs = append(rotErrs, err.Error()); mu.Unlock() }}
	sink := sealedSink(t, path, rot, sealer)
	writeSealed(t, sink, sealer, 0, 40)
	segs, err := filesink.Segments(path)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(segs), 2)
	data, err := os.ReadFile(segs[0].Path)
	require.NoError(t, err)
	foreign := filepath.Join(filepath.Dir(path), "events-"+segs[0].Time.Add(time.Hour).Format("20060102T150405Z")+
		strings.TrimPrefix(filepath.Base(segs[0].Path), "events-"+segs[0].Time.Format("20060102T150405Z")))
	require.NoError(t, os.WriteFile(foreign, data, 0o600))

	writeSealed(t, sink, sealer, 40, 200)
	require.NoError(t, sink.Close())
	require.NoError(t, sealer.Close(bg))
	segs, err = filesink.Segments(path)
	require.NoError(t, err)
	require.FileExists(t, foreign, "retention removes only what the log recorded")
	require.LessOrEqual(t, len(segs), 4, "retention went on: the three newest and the foreign file")
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, rotErrs)
	require.Contains(t, rotErrs[0], "a foreign or renamed segment")
}
