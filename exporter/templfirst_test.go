package sandboxauditexporter

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
)

// snapshotDir copies every regular file below src to the same place below
// dst: the disk as a collector killed now leaves it.
func snapshotDir(t *testing.T, src, dst string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(dst, filepath.Dir(rel)), 0o700); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o600)
	}))
}

// A templated path's new session file gets its first checkpoint, of 0
// lines, before its first line: a collector killed before the next round
// leaves history the file extends, so the next start seals the lines and
// verify passes. Before, the start refused the file (lines, no history).
func TestTemplatedFileKilledBeforeItsFirstRound(t *testing.T) {
	dir, killed := t.TempDir(), t.TempDir()
	keyPath, pubPath := writeKeys(t)
	cfg := syncConfig()
	withFile(cfg, filepath.Join(dir, "{session_id}", "events.jsonl"), auditevent.PolicyOverride{})
	withIntegrity(cfg, keyPath) // no round within the test
	te := startIntegrityExporters(t, cfg)
	require.NoError(t, te.traces.ConsumeTraces(context.Background(), buildTraces(t, sampleSpans()...)))
	snapshotDir(t, dir, killed) // SIGKILL before the first round
	te.shutdown(t)

	keys, err := integrity.LoadSigningKey(keyPath)
	require.NoError(t, err)
	files, err := filepath.Glob(filepath.Join(killed, "*", "events.jsonl"))
	require.NoError(t, err)
	require.Len(t, files, 2, "sample spans hold two sessions")
	for _, f := range files {
		res := checkFile(t, f, pubPath)
		require.Nil(t, res.Failure, f)
		require.Equal(t, [3]int64{int64(len(readLines(t, f))), 0, 1}, [3]int64{res.Lines, res.Sealed, int64(res.Checkpoints)}, f)

		restart, err := integrity.NewSealer(integrity.Settings{Keys: keys, Interval: time.Hour, OriginBase: killed})
		require.NoError(t, err)
		require.NoError(t, restart.SealAtStart(context.Background(), f), "the restart's start check")
		require.NoError(t, restart.Close(context.Background()))
		res = checkFile(t, f, pubPath)
		require.Nil(t, res.Failure, f)
		require.Equal(t, [2]int64{res.Lines, 2}, [2]int64{res.Sealed, int64(res.Checkpoints)}, f)
	}
}
