package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
)

// A checkpoint kept off the host of a log a handover started (signed by
// its key, not the first) is checked when verify, given the first key,
// follows the chain to that log: the middle log of two handovers, and the
// live one.
func TestVerifyGivenCheckpointsAcrossHandovers(t *testing.T) {
	path, retired1, oldPub, midKey, _ := handedOver(t)
	midPub := strings.TrimSuffix(midKey, ".key") + ".pub"
	mid := savedCheckpoint(t, path, midPub, 3) // the note and two lines
	nextKey, nextPub := keyFiles(t, "cli-test-2028")
	res := run(t, "", "log", "handover", "--signing-key", midKey, "--next-key", nextPub, path)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	matches, err := filepath.Glob(path + ".retired-*.handover")
	require.NoError(t, err)
	retired2 := strings.TrimSuffix(matches[0], ".handover")
	s, f := op(sessionA, "stop", "a000000000000009", 7, 8)
	appendFlocked(t, path, canonLines(s, f))
	require.NoError(t, sealWith(t, path, nextKey))
	live := savedCheckpoint(t, path, nextPub, 3)

	res = run(t, "", "verify", "--key", oldPub, "--allow-open", "--checkpoint", mid, "--checkpoint", live, retired1, retired2, path)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, retired2+": integrity: lines 1-2 of the log are in the checkpoint given in "+mid+" (2 lines)")
	require.Contains(t, res.stdout, path+": integrity: lines 1-2 of the log are in the checkpoint given in "+live+" (2 lines)")

	// The second retired log alone, with its own key, as before.
	res = run(t, "", "verify", "--key", midPub, "--allow-open", "--checkpoint", mid, retired2)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, retired2+": integrity: lines 1-2 of the log are in the checkpoint given in "+mid+" (2 lines)")

	// One that no key of the chain signed is a problem, named; so is one
	// of a later log when no note read names its key: not the retired log
	// before it, nor the note beside it (which the middle key signed, and
	// which, read, names the key: the first retired log names the middle
	// one).
	res = run(t, "", "verify", "--key", oldPub, "--allow-open", "--checkpoint", live, retired1, path)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, path+": integrity: lines 1-2 of the log are in the checkpoint given in "+live+" (2 lines)")
	require.NoError(t, os.Rename(integrity.HandoverPath(path), filepath.Join(t.TempDir(), "moved.handover")))
	otherKey, _ := keyFiles(t, "cli-other")
	keys, err := integrity.LoadSigningKey(otherKey)
	require.NoError(t, err)
	other, err := integrity.SignCheckpoint(integrity.Checkpoint{Origin: "cli-other/audit.jsonl", N: 1}, keys.Signer)
	require.NoError(t, err)
	foreign := filepath.Join(t.TempDir(), "other.checkpoint")
	require.NoError(t, os.WriteFile(foreign, other, 0o600))
	res = run(t, "", "verify", "--key", oldPub, "--allow-open", "--checkpoint", foreign, "--checkpoint", live, retired1, path)
	require.Equal(t, 1, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, foreign+": integrity: the checkpoint given is not signed by key cli-test+")
	require.Contains(t, res.stdout, "(signed by [cli-other+")
	require.Contains(t, res.stdout, live+": integrity: the checkpoint given is not signed by key cli-test+")
	require.Contains(t, res.stdout, "nor by a key that a final checkpoint read hands over to: give the retired logs before it")
}
