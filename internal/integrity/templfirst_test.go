package integrity

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
)

// Many sessions begin at once, each with a new file of a templated path:
// each file gets its checkpoint of 0 lines before its first line, so a
// sealer started over the files a killed collector left (no round ran)
// seals every one as its extension, and each verifies.
func TestManyNewSessionFilesKilledBeforeTheFirstRound(t *testing.T) {
	const sessions = 24
	k, pub := testKeys(t, "test")
	dir := t.TempDir()
	s, err := NewSealer(Settings{Keys: k, Interval: 1e9, OriginBase: dir, CallerOwns: true})
	require.NoError(t, err)
	sink, err := filesink.New(filesink.Options{
		Path: filepath.Join(dir, "{session_id}", "events.jsonl"), OnWrite: s.Wrote, BeforeCreate: s.SealNew,
	})
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make([]error, sessions)
	for i := range sessions {
		wg.Go(func() {
			errs[i] = sink.WriteBatch(bg, fmt.Sprintf("6f1c2a8e-3b4d-4e5f-9a0b-%012x", i), []byte(lines(1, 3)))
		})
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	require.NoError(t, sink.Close()) // SIGKILL: no round, no Close of the sealer

	restart, err := NewSealer(Settings{Keys: k, Interval: 1e9, OriginBase: dir, CallerOwns: true})
	require.NoError(t, err)
	files, err := filepath.Glob(filepath.Join(dir, "*", "events.jsonl"))
	require.NoError(t, err)
	require.Len(t, files, sessions)
	for _, f := range files {
		_, c, err := NewestSigned(f, k.Verifier)
		require.NoError(t, err)
		require.Equal(t, int64(0), c.N, f)
		require.NoError(t, restart.SealAtStart(bg, f), f)
		res := checkTrail(t, f, pub)
		require.Empty(t, res.Failures, f)
		require.Equal(t, [2]int64{3, 0}, [2]int64{res.Sealed, res.Unsealed}, f)
	}
}

// A write still in flight when the sealer closes makes no file: SealNew
// fails, and takes no owner lock that nothing would let go.
func TestSealNewAfterCloseFails(t *testing.T) {
	k, _ := testKeys(t, "test")
	s, err := NewSealer(Settings{Keys: k, Interval: 1e9})
	require.NoError(t, err)
	require.NoError(t, s.Close(bg))
	path := auditPath(t)
	require.ErrorIs(t, s.SealNew(bg, path), ErrSealerClosed)
	require.NoFileExists(t, OwnerLockPath(path))
	require.NoFileExists(t, CheckpointsPath(path))
}
