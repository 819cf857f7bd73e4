package integrity

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/openfds"
)

// A file's inode number is reused once the file is gone: ext4 gives the
// next new file the number of the plain segment compression just removed.
// The sealer took the new file at the path for the one it sealed last (same
// device and inode), skipped the segment the rotation made, and hashed the
// new file from the old file's end, mid-line: it signed a line no file
// holds, and the collector refused to start on the trail.
func TestInodeReusedByTheNextFileIsNotTheSealedFile(t *testing.T) {
	k, pub := testKeys(t, "test")
	path := filepath.Join(t.TempDir(), "events.jsonl")
	appendLocked(t, path, lines(1, 4))
	s := newSealer(t, k)
	require.NoError(t, s.Seal(bg, path))

	// The sink's rotation, then compression removes the plain segment.
	seg := filepath.Join(filepath.Dir(path), "events-20261207T000000Z-000001.jsonl")
	require.NoError(t, os.Rename(path, seg))
	require.NoError(t, filesink.CompressFile(bg, seg, seg+filesink.ZstdSuffix))
	require.NoError(t, os.Remove(seg))
	// The new file is longer: the old end falls mid-line. On ext4 it gets
	// the removed segment's inode number unless the sealer holds it.
	appendLocked(t, path, lines(100, 111))

	require.NoError(t, s.Seal(bg, path))
	require.NoError(t, s.Close(bg))
	res := checkTrail(t, path, pub)
	require.Empty(t, res.Failures)
	require.Equal(t, int64(16), res.Lines)
	require.Equal(t, int64(16), res.Sealed)
	require.NoError(t, newSealer(t, k).SealAtStart(bg, path), "a restart refused the trail")
}

// The descriptor kept of the file sealed last goes with the sealer.
func TestSealerCloseLetsTheSealedFileGo(t *testing.T) {
	k, _ := testKeys(t, "test")
	path := filepath.Join(t.TempDir(), "events.jsonl")
	appendLocked(t, path, lines(1, 4))
	s := newSealer(t, k)
	require.NoError(t, s.Seal(bg, path))
	require.NoError(t, s.Close(bg))
	require.Zero(t, openfds.Under(t, filepath.Dir(path)))
}
