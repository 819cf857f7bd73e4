package integrity

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zapcore"
	"golang.org/x/mod/sumdb/tlog"
)

// A collector given another key than the one that signed the log (the
// operator changed signing_key_file) is told how a log's key is changed.
func TestSealWithAnotherKeyNamesTheHandover(t *testing.T) {
	k, _ := testKeys(t, "test")
	path := auditPath(t)
	appendLocked(t, path, lines(1, 6))
	require.NoError(t, newSealer(t, k).Seal(bg, path))
	other, _ := testKeys(t, "next")
	err := newSealer(t, other).Seal(bg, path)
	require.ErrorIs(t, err, ErrTampered)
	require.ErrorContains(t, err, "checkpoint #1: not signed by key next+")
	require.ErrorContains(t, err, "the log was signed with another key: "+
		"a log's key is changed with `sandboxaudit log handover`, run with the key that signed it")
}

// A hash store that holds lines after the newest checkpoint which the file
// no longer has: nothing signs them and verify does not read them, so the
// seal cuts the store back to the file, with a warning that says the
// signed lines are intact, rather than refusing as if sealed lines were
// cut.
func TestSealCutsBackAStoreAheadOfTheFile(t *testing.T) {
	k, pub := testKeys(t, "test")
	path := auditPath(t)
	appendLocked(t, path, lines(1, 6))
	require.NoError(t, newSealer(t, k).Seal(bg, path))
	longer := auditPath(t)
	appendLocked(t, longer, lines(1, 7))
	require.NoError(t, newSealer(t, k).Seal(bg, longer))
	store, err := os.ReadFile(StorePath(longer))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(StorePath(path), store, 0o600))
	require.Empty(t, check(t, path, pub).StoreDamage)

	s, logs := observedSealer(t, k, zapcore.WarnLevel)
	require.NoError(t, s.Seal(bg, path))
	warned := logs.FilterMessage("integrity: repaired crash damage").All()
	require.Len(t, warned, 1)
	require.Contains(t, warned[0].ContextMap()["repair"], "after the newest checkpoint, which nothing signs, disagree with the file from line 7 (the file ends at line 6)")
	require.Contains(t, warned[0].ContextMap()["repair"], "the signed lines are intact")
	fi, err := os.Stat(StorePath(path))
	require.NoError(t, err)
	require.Equal(t, tlog.StoredHashCount(6)*tlog.HashSize, fi.Size(), "cut back to the file's lines")
	res := check(t, path, pub)
	require.Nil(t, res.Failure)
	require.Empty(t, res.StoreDamage)
	require.EqualValues(t, 6, res.Sealed)
}

// A handover that stopped before it moved the retired log aside leaves
// the final checkpoint at the path. A collector started there, with the
// retired key or with the new one, is told to finish the handover.
func TestSealAnUnfinishedHandoverSaysToFinishIt(t *testing.T) {
	k, _ := testKeys(t, "test")
	path := auditPath(t)
	appendLocked(t, path, lines(1, 6))
	require.NoError(t, newSealer(t, k).Seal(bg, path))
	next, nextPub := testKeys(t, "next")
	handOverLogTo(t, path, k, nextPub)

	const finish = "a handover that stopped midway is finished by running `sandboxaudit log handover` again"
	err := newSealer(t, k).Seal(bg, path)
	require.ErrorIs(t, err, ErrRetired)
	require.ErrorContains(t, err, finish+", then the collector starts with the key it names, next+")
	err = newSealer(t, next).Seal(bg, path)
	require.ErrorIs(t, err, ErrTampered)
	require.ErrorContains(t, err, "its checkpoints end with a final one naming this key: "+finish+", with the key that signed it")
}
