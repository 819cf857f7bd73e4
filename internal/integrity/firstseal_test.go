package integrity

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestKilledBeforeTheFirstSealStartsAgain(t *testing.T) {
	k, _ := testKeys(t, "test")
	path := filepath.Join(t.TempDir(), "events.jsonl")
	require.NoError(t, newSealer(t, k).SealAtStart(bg, path)) // a new log
	appendLocked(t, path, lines(1, 4))                        // acknowledged; SIGKILL before the first seal
	require.NoError(t, newSealer(t, k).SealAtStart(bg, path))
}

// A new log's first checkpoint is signed at start, before the file sink
// makes the file: of 0 lines. Lines after it are unsealed until the next
// seal, then sealed as its extension; verify passes both ways.
func TestNewLogStartsWithACheckpointOfNoLine(t *testing.T) {
	k, pub := testKeys(t, "test")
	path := auditPath(t)
	s := newSealer(t, k)
	require.NoError(t, s.SealAtStart(bg, path))
	_, c, err := NewestSigned(path, k.Verifier)
	require.NoError(t, err)
	require.Equal(t, int64(0), c.N)
	require.NoFileExists(t, path, "the file sink makes the file")
	require.NoError(t, s.SealPending(bg), "a round over the missing file")
	require.NoError(t, newSealer(t, k).SealAtStart(bg, path), "a start over the missing file")

	appendLocked(t, path, lines(1, 4))
	res := checkTrail(t, path, pub)
	require.Empty(t, res.Failures)
	require.Equal(t, [2]int64{0, 4}, [2]int64{res.Sealed, res.Unsealed})
	require.Equal(t, 1, check(t, path, pub).Checkpoints)

	require.NoError(t, newSealer(t, k).SealAtStart(bg, path))
	res = checkTrail(t, path, pub)
	require.Empty(t, res.Failures)
	require.Equal(t, [3]int64{4, 0, 2}, [3]int64{res.Sealed, res.Unsealed, int64(res.Checkpoints)})
}

// A round seals only what was written: the first checkpoint of a log the
// collector did not start (a templated path's new file) is of its lines.
func TestRoundsSignNoEmptyCheckpoint(t *testing.T) {
	k, _ := testKeys(t, "test")
	path := auditPath(t)
	s := newSealer(t, k)
	s.Watch(path)
	require.NoError(t, s.SealPending(bg))
	require.NoFileExists(t, CheckpointsPath(path))
	appendLocked(t, path, "")
	require.NoError(t, s.SealPending(bg))
	require.False(t, holdsData(CheckpointsPath(path)))
}

// The file gone while its checkpoints sign lines is refused, with its hash
// store or without.
func TestMissingFileWithSignedLinesIsRefused(t *testing.T) {
	for _, store := range []bool{true, false} {
		k, _ := testKeys(t, "test")
		path := auditPath(t)
		appendLocked(t, path, lines(1, 3))
		require.NoError(t, newSealer(t, k).Seal(bg, path))
		require.NoError(t, os.Remove(path))
		if !store {
			require.NoError(t, os.Remove(StorePath(path)))
		}
		err := newSealer(t, k).SealAtStart(bg, path)
		require.ErrorIs(t, err, ErrTampered)
		require.ErrorContains(t, err, "the audit file is missing but")
	}
}

// A log handed over signs its first checkpoint, of the note's leaf, at
// start, before the file sink makes the file: a crash before the first
// round leaves history the file extends.
func TestHandedOverLogKilledBeforeTheFirstSeal(t *testing.T) {
	path := auditPath(t)
	keys, pub, _ := pendingHandover(t, path)
	require.NoError(t, newSealer(t, keys).SealAtStart(bg, path))
	_, c, err := NewestSigned(path, keys.Verifier)
	require.NoError(t, err)
	require.Equal(t, int64(1), c.N)
	appendLocked(t, path, lines(1, 3))
	require.NoError(t, newSealer(t, keys).SealAtStart(bg, path))
	res := checkTrail(t, path, pub)
	require.Empty(t, res.Failures)
	require.Equal(t, int64(4), res.Sealed)
}

// A new log's checkpoint of 0 lines is not submitted to the witnesses;
// its first checkpoint of lines is, and is cosigned.
func TestEmptyCheckpointIsNotWitnessed(t *testing.T) {
	k, _ := testKeys(t, "test")
	fake, pool := fakeWitnessPool(t, k)
	sealer, err := NewSealer(Settings{Keys: k, Interval: 1e9, CallerOwns: true, Witnesses: pool})
	require.NoError(t, err)
	defer func() { require.NoError(t, sealer.Close(bg)) }()

	path := auditPath(t)
	require.NoError(t, sealer.SealAtStart(bg, path))
	require.Equal(t, 1, countRecords(t, CheckpointsPath(path)))
	require.Zero(t, fake.Requests())
	require.NoFileExists(t, WitnessedPath(path))

	appendLocked(t, path, lines(1, 2))
	sealer.Wrote(path, 2)
	require.NoError(t, sealer.SealPending(bg))
	require.Equal(t, 1, fake.Requests())
	require.Equal(t, 1, countRecords(t, WitnessedPath(path)))
}
