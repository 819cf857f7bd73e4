package spool

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A symlink planted at the spool, its lock or its offset sidecar is not
// followed: the spool would replay another file's lines to the endpoint and
// append to it. The spool and its lock refuse to open; an offset sidecar
// that cannot be read means replaying from 0, as for any bad sidecar.
func TestSpoolDoesNotFollowSymlinks(t *testing.T) {
	for _, link := range []string{"spool.jsonl", "spool.jsonl.lock", "spool.jsonl.offset"} {
		t.Run(link, func(t *testing.T) {
			dir := t.TempDir()
			victim := filepath.Join(dir, "victim")
			require.NoError(t, os.WriteFile(victim, []byte("SECRET-LINE\n"), 0o600))
			require.NoError(t, os.Symlink(victim, filepath.Join(dir, link)))
			s, err := Open(context.Background(), Options{Path: filepath.Join(dir, "spool.jsonl")})
			if link == "spool.jsonl.offset" {
				require.NoError(t, err)
				assert.Contains(t, s.Recovery().OffsetProblem, "symlink")
				require.NoError(t, s.Close())
			} else {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "symlink")
			}
			if link == "spool.jsonl" {
				_, err := os.Lstat(filepath.Join(dir, "spool.jsonl.lock"))
				assert.ErrorIs(t, err, os.ErrNotExist, "a refused spool left its lock file")
			}
			b, err := os.ReadFile(victim)
			require.NoError(t, err)
			assert.Equal(t, "SECRET-LINE\n", string(b), "the link's target changed")
		})
	}
}
