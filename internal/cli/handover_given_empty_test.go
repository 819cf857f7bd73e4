package cli

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A checkpoint of the new log signed right after a handover holds only
// the handover note, none of the log's lines: verify says so, not
// "lines 1-0".
func TestVerifyGivenCheckpointOfNoLines(t *testing.T) {
	path, retired, oldPub, newKey, _ := handOver(t)
	require.NoError(t, sealAtStart(t, path, newKey))
	newPub := strings.TrimSuffix(newKey, ".key") + ".pub"
	empty := savedCheckpoint(t, path, newPub, 1) // the note alone
	startNewLog(t, path, newKey)

	res := run(t, "", "verify", "--key", oldPub, "--allow-open", "--checkpoint", empty, retired, path)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.NotContains(t, res.stdout, "lines 1-0")
	require.Contains(t, res.stdout, path+": integrity: the checkpoint given in "+empty+" holds none of the log's lines: ")
}
