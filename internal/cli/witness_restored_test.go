package cli

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
)

// A segment retention removed, put back from a backup, leaves the witness
// check whole: the cosigned checkpoints of the lines retention removed
// after it are passed over, as before the oldest segment kept, and those
// after are checked from the next segment's signed compact range.
func TestVerifyWitnessWithARestoredRetainedSegment(t *testing.T) {
	dir := t.TempDir()
	sealer, pub, vkey, _ := oneWitnessSealer(t, dir)
	path, segs := sealedRotatedTrail(t, dir, sealer, filesink.Rotation{MaxBytes: 2 << 10})
	require.Greater(t, len(segs), 5)
	retireThenRestoreFirst(t, dir, path, segs[:3])

	res := run(t, "", "verify", "--key", pub, "--witness", vkey, filepath.Dir(path))
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, "witness: lines=80 witnessed=80 unwitnessed=0")
}

// retireThenRestoreFirst removes segs of the trail at path as retention
// does, with a sealer of the key cli-test under dir/keys signing each one's
// retention record, then puts the first back as a backup would.
func retireThenRestoreFirst(t *testing.T, dir, path string, segs []filesink.Segment) {
	t.Helper()
	kept, err := os.ReadFile(segs[0].Path)
	require.NoError(t, err)
	keys, err := integrity.LoadSigningKey(filepath.Join(dir, "keys", "cli-test.key"))
	require.NoError(t, err)
	retainer, err := integrity.NewSealer(integrity.Settings{Keys: keys, Interval: time.Second})
	require.NoError(t, err)
	for _, seg := range segs {
		require.NoError(t, retainer.Retire(path, seg))
		require.NoError(t, os.Remove(seg.Path))
	}
	require.NoError(t, retainer.Close(context.Background()))
	require.NoError(t, os.WriteFile(segs[0].Path, kept, 0o600))
}

// Retention may remove every closed segment: one put back then comes
// before the active file, checked from where the records end.
func TestVerifyWitnessWithOnlyARestoredRetainedSegment(t *testing.T) {
	dir := t.TempDir()
	sealer, pub, vkey, _ := oneWitnessSealer(t, dir)
	path, segs := sealedRotatedTrail(t, dir, sealer, filesink.Rotation{MaxBytes: 2 << 10})
	require.Greater(t, len(segs), 2)
	retireThenRestoreFirst(t, dir, path, segs)

	res := run(t, "", "verify", "--key", pub, "--witness", vkey, filepath.Dir(path))
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Regexp(t, `witness: lines=\d+ witnessed=\d+ unwitnessed=0`, res.stdout)
	require.NotContains(t, res.stdout, "not witnessed")
}
