package integrity

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zapcore"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
)

// Retention asks to retire a segment it could not remove again each
// round (an immutable file): the record is signed once, and so is the
// INFO that says it was.
func TestRetireLogsOnlyTheRecordItSigns(t *testing.T) {
	k, _ := testKeys(t, "test")
	path := filepath.Join(t.TempDir(), "events.jsonl")
	sealer, logs := observedSealer(t, k, zapcore.InfoLevel)
	sink := sealedSink(t, path, reportedRotation(sealer), sealer)
	writeSealed(t, sink, sealer, 0, 40)
	segs, err := filesink.Segments(path)
	require.NoError(t, err)
	require.NotEmpty(t, segs)
	for range 3 {
		require.NoError(t, sealer.Retire(path, segs[0]))
	}
	signed := logs.FilterMessage("integrity: signed the retention record of a closed segment").Len()
	require.Equal(t, 1, signed, "one record signed, one INFO")
	require.NoError(t, sink.Close())
	require.NoError(t, sealer.Close(bg))
}
