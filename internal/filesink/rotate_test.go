package filesink

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// An operator (logrotate) or the Python sink may move or delete the audit
// file while the sink holds it open. Lines written after that must land in
// the file the path names now, not in the moved file or in a deleted inode
// nobody can read.
func TestWriteFollowsTheFileThePathNames(t *testing.T) {
	for _, tc := range []struct {
		name   string
		rotate func(t *testing.T, path string)
		// rotated is what the moved-away file must hold; "" when deleted.
		rotated string
	}{
		{
			name:    "renamed",
			rotate:  func(t *testing.T, path string) { require.NoError(t, os.Rename(path, path+".1")) },
			rotated: "{\"n\":1}\n",
		},
		{
			name:   "deleted",
			rotate: func(t *testing.T, path string) { require.NoError(t, os.Remove(path)) },
		},
		{
			name: "replaced by another writer's new file",
			rotate: func(t *testing.T, path string) {
				require.NoError(t, os.Rename(path, path+".1"))
				require.NoError(t, os.WriteFile(path, []byte("{\"py\":1}\n"), 0o600))
			},
			rotated: "{\"n\":1}\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, mode := range []FsyncMode{FsyncNever, FsyncBatch, FsyncAlways} {
				dir := t.TempDir()
				path := filepath.Join(dir, "audit.jsonl")
				s, err := New(Options{Path: path, Fsync: mode})
				require.NoError(t, err)
				ctx := context.Background()
				require.NoError(t, s.WriteBatch(ctx, testSession, []byte("{\"n\":1}\n")))
				tc.rotate(t, path)
				require.NoError(t, s.WriteBatch(ctx, testSession, []byte("{\"n\":2}\n")))
				require.NoError(t, s.Close())

				want := "{\"n\":2}\n"
				if tc.name == "replaced by another writer's new file" {
					want = "{\"py\":1}\n" + want
				}
				got, err := os.ReadFile(path)
				require.NoError(t, err, mode)
				require.Equal(t, want, string(got), mode)
				fi, err := os.Stat(path)
				require.NoError(t, err)
				require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
				if tc.rotated != "" {
					old, err := os.ReadFile(path + ".1")
					require.NoError(t, err)
					require.Equal(t, tc.rotated, string(old), mode)
				}
				require.Equal(t, int64(0), s.live.Load(), "every descriptor closed")
			}
		})
	}
}
