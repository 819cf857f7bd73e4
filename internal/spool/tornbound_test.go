package spool

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTornFilesStayWithinMaxSize: every restart after a crash mid-append
// keeps the torn last line in a new <spool>.torn-<unixnano>, and nothing
// removes them. Together they stay within MaxSize, as the quarantine
// does: a torn line that would take them past it is closed with a newline
// where it is, so replay quarantines it (never sends it), and the spool
// still opens with its intact lines.
func TestTornFilesStayWithinMaxSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool.jsonl")
	const maxSize = 4096
	torn := bytes.Repeat([]byte("x"), 1000)
	writeSpool(t, path, nil)
	for i := range 8 {
		appendRaw(t, path, append(eventLines(t, i+1, i+1), torn...))
		s, err := Open(context.Background(), Options{Path: path, Check: CanonicalEvent, MaxSize: maxSize})
		require.NoError(t, err, "restart %d", i)
		rec := s.Recovery()
		require.Equal(t, int64(len(torn)), rec.TornBytes, "restart %d", i)
		if rec.TornNotKept != nil {
			require.ErrorContains(t, rec.TornNotKept, "max size")
		}
		var got []byte
		_, err = s.Replay(context.Background(), 10, 1<<20, func(_ context.Context, batch []byte, _ int) error {
			got = append(got, batch...)
			return nil
		})
		require.NoError(t, err)
		require.Equal(t, string(eventLines(t, i+1, i+1)), string(got), "restart %d: the intact line only", i)
		require.NoError(t, s.Close())
	}
	require.LessOrEqual(t, tornFilesSize(t, path), int64(maxSize), "the .torn- files stay within max_size together")
}

// appendRaw appends b to the file at path as a crashed writer would.
func appendRaw(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.Write(b)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// tornFilesSize sums the sizes of the torn lines kept beside path.
func tornFilesSize(t *testing.T, path string) int64 {
	t.Helper()
	kept, err := filepath.Glob(path + ".torn-*")
	require.NoError(t, err)
	var n int64
	for _, k := range kept {
		n += fileSize(t, k)
	}
	return n
}
