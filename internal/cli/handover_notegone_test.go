package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
)

// The handover note removed after `log handover`, the collector's start
// with the new key began a new log at the path, logged at INFO as any
// first start: only verify found it tied to nothing ("does not start from
// the handover"). The start refuses it, naming the note and the retired
// log, for both a rotated log and one that never rotated.
func TestStartRefusesANewLogWhoseHandoverNoteIsGone(t *testing.T) {
	for _, tc := range []struct {
		name    string
		handOff func(t *testing.T) (path, retired, newKey string)
	}{
		{"plain", func(t *testing.T) (string, string, string) {
			path, retired, _, newKey, _ := handOver(t)
			return path, retired, newKey
		}},
		{"rotated", func(t *testing.T) (string, string, string) {
			path, retired, _, newKey := handOverRotatedLog(t)
			return path, filepath.Dir(retired), newKey // the retired log's directory
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, retired, newKey := tc.handOff(t)
			require.NoError(t, os.Remove(integrity.HandoverPath(path)))
			err := sealFileOnce(t, path, newKey, (*integrity.Sealer).SealAtStart)
			require.ErrorIs(t, err, integrity.ErrHandoverNoteGone)
			require.ErrorContains(t, err, integrity.HandoverPath(path)+", the note the new log starts from, is missing")
			require.ErrorContains(t, err, retired)
			for _, suffix := range []string{".tlog", ".checkpoints"} {
				_, serr := os.Lstat(path + suffix)
				require.ErrorIs(t, serr, os.ErrNotExist, "nothing is signed at the path")
			}
		})
	}
}

// The way out the refusal gives, `log reset`, refused the path as a typo
// ("no audit file, closed segment or sidecar of one here"): a path a
// handover retired a log from is reset to a log tied to nothing.
func TestLogResetStartsALogWhereTheHandoverNoteIsGone(t *testing.T) {
	path, _, _, newKey, _ := handOver(t)
	require.NoError(t, os.Remove(integrity.HandoverPath(path)))
	// The other log commands still take such a path for a typo: none
	// starts a log there.
	res := run(t, "", "log", "rebuild-store", "--signing-key", newKey, path)
	require.Equal(t, exitProblems, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stderr, "(a typo?); nothing was written")
	_, err := os.Lstat(integrity.StorePath(path))
	require.ErrorIs(t, err, os.ErrNotExist)
	res = run(t, "", "log", "reset", "--signing-key", newKey, path)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.NoError(t, sealFileOnce(t, path, newKey, (*integrity.Sealer).SealAtStart))
}
