package integrity

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
)

// Retention asks Retire of each file named as a segment, and Retire listed
// the whole directory for each to tell a foreign one: quadratic in the
// files put there. It compares with the newest segment record instead, so
// a foreign file is told as one also when that record's file is gone.
func TestRetireTellsAForeignSegmentByTheNewestRecord(t *testing.T) {
	k, _ := testKeys(t, "test")
	path := filepath.Join(t.TempDir(), "events.jsonl")
	sealer := newSealer(t, k)
	rot := &filesink.Rotation{MaxBytes: 100}
	sink := sealedSink(t, path, rot, sealer)
	writeSealed(t, sink, sealer, 0, 40)
	require.NoError(t, sink.Close())
	segs, err := filesink.Segments(path)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(segs), 3)
	// The newest recorded segment removed by hand; a file put between
	// the one before it and it sorts before the newest record.
	newest, prev := segs[len(segs)-1], segs[len(segs)-2]
	require.NoError(t, os.Remove(newest.Path))
	name := filepath.Join(filepath.Dir(path), "events-"+prev.Time.Add(time.Second).Format("20060102T150405Z")+"-"+fmtSeq(prev.Seq)+".jsonl")
	_, foreign, ok := filesink.ParseSegment(name)
	require.True(t, ok, name)
	require.NoError(t, os.WriteFile(foreign.Path, []byte(lines(1000, 1000)), 0o600))
	err = sealer.Retire(path, foreign)
	require.True(t, errors.Is(err, filesink.ErrForeignSegment), "Retire = %v", err)
	require.NoError(t, sealer.Close(bg))
}
