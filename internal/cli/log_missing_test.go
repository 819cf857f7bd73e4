package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A log command given a path with no audit file and no closed segment (a
// typo) says so and writes nothing: no new log over nothing reported as
// done, no lock file left beside the mistyped name.
func TestLogCommandsRefuseAPathWithNoAuditFile(t *testing.T) {
	keys := t.TempDir()
	require.Equal(t, 0, run(t, "", "keygen", "--name", "old", "--out", keys).code)
	require.Equal(t, 0, run(t, "", "keygen", "--name", "new", "--out", keys).code)
	for name, args := range map[string][]string{
		"reset":         {"log", "reset", "--signing-key", filepath.Join(keys, "old.key")},
		"handover":      {"log", "handover", "--signing-key", filepath.Join(keys, "old.key"), "--next-key", filepath.Join(keys, "new.pub")},
		"rebuild-store": {"log", "rebuild-store", "--key", filepath.Join(keys, "old.pub")},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "evnets.jsonl")
			res := run(t, "", append(args, path)...)
			assert.Equal(t, exitProblems, res.code, res.stdout+res.stderr)
			assert.Contains(t, res.stderr, "log "+name+": "+path+": no audit file")
			assert.Empty(t, res.stdout)
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			assert.Empty(t, entries, "nothing written")

			// A directory or a link where the audit file should be.
			trail := filepath.Join(dir, "audit")
			require.NoError(t, os.Mkdir(trail, 0o700))
			require.NoError(t, os.WriteFile(filepath.Join(trail, "events.jsonl"), nil, 0o600))
			link := filepath.Join(dir, "link.jsonl")
			require.NoError(t, os.Symlink(filepath.Join(trail, "events.jsonl"), link))
			for _, p := range []string{trail, link} {
				res := run(t, "", append(args, p)...)
				assert.Equal(t, exitProblems, res.code, res.stdout+res.stderr)
				assert.Contains(t, res.stderr, "log "+name+": "+p+" is not a regular file", p)
			}
			entries, err = os.ReadDir(dir)
			require.NoError(t, err)
			assert.Len(t, entries, 2, "nothing written beside them")
		})
	}
}
