package integrity

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/sandboxaudit/sandboxaudit/internal/witness"
	"github.com/sandboxaudit/sandboxaudit/internal/witness/witnesstest"
)

// A file waiting for cosignatures whose directory is removed (a session's,
// cleaned up) cannot have them recorded beside it: it is logged once and
// forgotten, not submitted and logged again every round.
func TestWitnessForgetsAFileWhoseDirectoryIsGone(t *testing.T) {
	k, _ := testKeys(t, "test")
	fake := witnesstest.Start(t, "w1.example/w", k.Verifier)
	pool, err := witness.NewPool(witnesstest.Witnesses(t, fake), 1, nil, nil)
	require.NoError(t, err)
	pool.SetBackoff(witness.Backoff{}) // asked every round, as a witness back from its pause is
	core, logs := observer.New(zapcore.WarnLevel)
	s, err := NewSealer(Settings{Keys: k, Interval: time.Hour, CallerOwns: true, Witnesses: pool, Logger: zap.New(core)})
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close(bg)) }()
	dir := filepath.Join(t.TempDir(), "session")
	require.NoError(t, os.Mkdir(dir, 0o700))
	path := filepath.Join(dir, "events.jsonl")
	fake.SetStatus(http.StatusServiceUnavailable)
	appendLocked(t, path, lines(1, 3))
	s.Wrote(path, 3)
	require.NoError(t, s.SealPending(bg))

	require.NoError(t, os.RemoveAll(dir))
	fake.SetStatus(0)
	asked := fake.Requests()
	for range 3 {
		_ = s.SealPending(bg)
	}
	require.Len(t, logs.FilterField(zap.String("path", path)).All(), 1, "logged once: %v", logs.All())
	require.Len(t, logs.FilterMessageSnippet("was removed").All(), 1)
	require.Equal(t, asked, fake.Requests(), "not submitted: nothing can record its cosignatures")
	s.wit.mu.Lock()
	defer s.wit.mu.Unlock()
	require.Empty(t, s.wit.retry)
	require.Empty(t, s.wit.recorded)
	require.NotContains(t, s.wit.done, path)
}
