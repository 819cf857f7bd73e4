package integrity

import (
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
