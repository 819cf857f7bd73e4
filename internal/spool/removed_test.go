package spool

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRemovedFileIsWrittenAgain: the spool file is removed while the
// collector runs (an operator, a tmp cleaner). The lines appended next must
// not go to the removed file, which a crash would take with them: the
// spool writes its pending lines to a new file at its path, and a restart
// replays every one of them.
func TestRemovedFileIsWrittenAgain(t *testing.T) {
	for name, replayFirst := range map[string]bool{"found by an append": false, "found by a replay round": true} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "spool.jsonl")
			s, d := checkedSpool(t, path)
			first, second := eventLines(t, 1, 3), eventLines(t, 4, 5)
			require.NoError(t, s.Append(context.Background(), first))
			require.NoError(t, os.Remove(path))
			if replayFirst {
				_, err := s.Replay(context.Background(), 10, 1<<20, func(context.Context, []byte, int) error { return errors.New("endpoint down") })
				require.Error(t, err)
			}
			require.NoError(t, s.Append(context.Background(), second))
			require.Contains(t, d.kinds(), DamageRemoved)

			got, err := os.ReadFile(path)
			require.NoError(t, err, "the spool is at its path again")
			require.Equal(t, string(first)+string(second), string(got))
			fi, err := os.Stat(path)
			require.NoError(t, err)
			require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

			// A crash: the next run replays every pending line from the path.
			require.NoError(t, s.Close())
			again := openSpool(t, Options{Path: path, Check: CanonicalEvent})
			var sent []byte
			_, err = again.Replay(context.Background(), 10, 1<<20, func(_ context.Context, b []byte, _ int) error {
				sent = append(sent, b...)
				return nil
			})
			require.NoError(t, err)
			require.Equal(t, string(first)+string(second), string(sent))
		})
	}
}

// TestReplacedFileRefusesAppends: the spool's path names something else
// now (a directory). An append must fail rather than be acknowledged into
// a file no restart can find.
func TestReplacedFileRefusesAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool.jsonl")
	s, _ := checkedSpool(t, path)
	require.NoError(t, s.Append(context.Background(), eventLines(t, 1, 1)))
	require.NoError(t, os.Remove(path))
	require.NoError(t, os.Mkdir(path, 0o700))
	err := s.Append(context.Background(), eventLines(t, 2, 2))
	require.ErrorContains(t, err, "no longer names the spool's file")
	fi, err := os.Lstat(path)
	require.NoError(t, err)
	require.True(t, fi.IsDir(), "what took the path is left alone")
}
