package cli

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A checkpoint given of a log of one line is worded for one line.
func TestVerifyGivenCheckpointOfOneLine(t *testing.T) {
	key, pub := keyFiles(t, "cli-test")
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	s1, _ := op(sessionA, "exec", "a000000000000001", 1, 2)
	writeLines(t, path, []string{canonLines(s1)})
	require.NoError(t, sealWith(t, path, key))
	saved := savedCheckpoint(t, path, pub, 1)
	res := run(t, "", "verify", "--key", pub, "--allow-open", "--checkpoint", saved, path)
	require.Equal(t, exitOK, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, fmt.Sprintf("%s: integrity: line 1 of the log is in the checkpoint given in %s (1 line): "+
		"the lines read lead to its root\n", path, saved))
}
