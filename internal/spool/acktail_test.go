package spool

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSentTailIsTheFilesTail checks that the tail taken from the bytes a
// round sent is the one read from the file, whether they reach back a
// whole window, exactly the file's start, or too little (read instead).
func TestSentTailIsTheFilesTail(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef\n"), 3*tailWindow/17)
	path := filepath.Join(t.TempDir(), "spool")
	require.NoError(t, os.WriteFile(path, data, 0o600))
	f, err := os.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.Close() })
	for _, c := range []struct {
		name      string
		off, sent int64
	}{
		{"more than a window sent", 2 * tailWindow, tailWindow + 100},
		{"the whole file before a short offset", 100, 100},
		{"less than a window sent", 2 * tailWindow, 100},
		{"nothing sent", 2 * tailWindow, 0},
	} {
		got := sentTail(f, c.off, data[c.off-c.sent:c.off])
		want := tailOf(f, c.off)
		require.True(t, want.ok, c.name)
		require.Equal(t, want, got, c.name)
	}
	require.False(t, sentTail(f, 0, nil).ok, "at 0 the tail is unknown")
}

// TestHeadFollowsSmallAppends: the head the spool keeps while its file is
// under a window long, grown from each append's lines, is the file's
// first bytes, up to a window and past it.
func TestHeadFollowsSmallAppends(t *testing.T) {
	s, _ := checkedSpool(t, filepath.Join(t.TempDir(), "spool"))
	ctx := context.Background()
	for i := 1; s.end <= tailWindow; i++ {
		require.NoError(t, s.Append(ctx, eventLines(t, i, i)))
		require.Equal(t, headOf(s.f, s.end), s.head, "after %d appends", i)
	}
	require.Len(t, s.head, tailWindow)
}
