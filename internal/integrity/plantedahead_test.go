package integrity

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
)

// A file named as a segment far in the future, put beside the audit file
// once it holds lines, is neither sealed into the log nor followed by the
// rotation's names, and nothing is logged as failed about it.
func TestPlantedFutureSegmentIsNotSealed(t *testing.T) {
	k, _ := testKeys(t, "test")
	dir := t.TempDir()
	path := filepath.Join(dir, "events.jsonl")
	planted := filepath.Join(dir, "events-29991231T000000Z-000099.jsonl")
	sealer := newSealer(t, k)
	var mu sync.Mutex
	var rotErrs, rotated, ignored []string
	rot := &filesink.Rotation{MaxBytes: 100, MaxBackups: 3, BeforeRemove: sealer.Retire, Holds: sealer.Holds,
		OnRotate:  func(_, seg string) { mu.Lock(); rotated = append(rotated, filepath.Base(seg)); mu.Unlock() },
		OnIgnored: func(_ string, seg filesink.Segment) { mu.Lock(); ignored = append(ignored, seg.Path); mu.Unlock() },
		OnError:   func(_ string, err error) { mu.Lock(); rotErrs = append(rotErrs, err.Error()); mu.Unlock() }}
	sink := sealedSink(t, path, rot, sealer)
	writeSealed(t, sink, sealer, 0, 4)
	require.NoError(t, os.WriteFile(planted, []byte(lines(1000, 1000)), 0o600))
	writeSealed(t, sink, sealer, 4, 80)
	require.NoError(t, sink.Close())
	require.NoError(t, sealer.Close(bg))

	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, rotated)
	for _, name := range rotated {
		require.False(t, strings.Contains(name, "2999"), "%s named after the planted file", name)
	}
	require.Empty(t, rotErrs)
	require.Equal(t, []string{planted}, ignored)
	require.FileExists(t, planted)
	_, seg, ok := filesink.ParseSegment(planted)
	require.True(t, ok)
	require.False(t, sealer.Holds(path, seg), "the planted file is not one of the log's segments")
}
