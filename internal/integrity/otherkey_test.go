package integrity

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
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
// no longer has: the signed lines are intact, and the refusal says so
// rather than that sealed lines were cut.
func TestSealRefusesAStoreAheadOfTheFileNamingIt(t *testing.T) {
	k, _ := testKeys(t, "test")
	path := auditPath(t)
	appendLocked(t, path, lines(1, 6))
	require.NoError(t, newSealer(t, k).Seal(bg, path))
	longer := auditPath(t)
	appendLocked(t, longer, lines(1, 7))
	require.NoError(t, newSealer(t, k).Seal(bg, longer))
	store, err := os.ReadFile(StorePath(longer))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(StorePath(path), store, 0o600))

	err = newSealer(t, k).Seal(bg, path)
	require.ErrorIs(t, err, ErrTampered)
	require.ErrorContains(t, err, "the hash store holds 1 line after the newest checkpoint (6 lines) that the file no longer has")
	require.ErrorContains(t, err, "the signed lines are intact")
	require.NotContains(t, err.Error(), "were sealed")
}
