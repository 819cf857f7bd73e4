package spool

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A file planted at the compacted file's name while the spool writes it
// (by a writer of the spool's directory) is not renamed over the spool in
// silence: planted before the last look at the name, the compaction is
// abandoned and the spool file kept; planted after it, so that the rename
// puts it at the path, the round says the path names another file and
// appends are refused, as for any file put in the spool's place.
func TestCompactionRefusesAFilePlantedAtItsName(t *testing.T) {
	planted := eventLines(t, 90, 90)
	for _, tc := range []struct {
		name        string
		beforeCheck bool
		want        string
	}{
		{"before the check", true, "was replaced while the spool was written into it"},
		{"after the check", false, "no longer names the spool's file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "spool.jsonl")
			s := openSpool(t, Options{Path: path, CompactBytes: 1})
			require.NoError(t, s.Append(context.Background(), eventLines(t, 1, 4)))
			before, err := os.Stat(path)
			require.NoError(t, err)

			plant := func() {
				require.NoError(t, os.WriteFile(path+".planted", planted, 0o600))
				require.NoError(t, os.Rename(path+".planted", path+".compact"))
			}
			s.lstatFn = func(name string) (os.FileInfo, error) {
				if name != path+".compact" {
					return os.Lstat(name)
				}
				if tc.beforeCheck {
					plant()
					return os.Lstat(name)
				}
				fi, err := os.Lstat(name)
				plant()
				return fi, err
			}
			var sent int
			_, err = s.Replay(context.Background(), 10, 1<<20, func(_ context.Context, _ []byte, n int) error {
				sent += n
				return nil
			})
			require.NoError(t, err)
			require.Equal(t, 4, sent)
			require.ErrorContains(t, s.Upkeep(), tc.want)

			if tc.beforeCheck {
				now, err := os.Stat(path)
				require.NoError(t, err)
				require.True(t, os.SameFile(before, now), "the spool file was replaced")
				require.NoError(t, s.Append(context.Background(), eventLines(t, 5, 5)))
				return
			}
			err = s.Append(context.Background(), eventLines(t, 5, 5))
			require.ErrorContains(t, err, "no longer names the spool's file")
		})
	}
}
