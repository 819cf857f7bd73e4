package spool

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// The quarantine file keeps within MaxSize: a bad line that takes it to
// exactly MaxSize is kept, and the next one, which would pass it, is not.
func TestQuarantineFillsMaxSizeExactly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool.jsonl")
	bad := []byte("secret=hunter2 in a line that is not an event\n")
	maxSize := int64(2 * len(bad))
	s := openSpool(t, Options{Path: path, Check: CanonicalEvent, MaxSize: maxSize})
	d := &damages{}
	s.SetDamageHandler(d.add)
	ctx := context.Background()
	require.NoError(t, s.Append(ctx, append(append([]byte{}, bad...), bad...)))
	_, err := s.Replay(ctx, 10, 1<<20, (&collector{}).send)
	require.NoError(t, err)
	require.NoError(t, s.Append(ctx, bad))
	_, err = s.Replay(ctx, 10, 1<<20, (&collector{}).send)
	require.NoError(t, err)

	require.Len(t, d.got, 3)
	for i, x := range d.got[:2] {
		require.Equal(t, path+".quarantine", x.Kept, "line %d fits: %s", i, x.Reason)
	}
	require.Empty(t, d.got[2].Kept, "the third would pass max size")
	require.Contains(t, d.got[2].Reason, "max size")
	q, err := os.ReadFile(path + ".quarantine")
	require.NoError(t, err)
	require.Len(t, q, int(maxSize))
}
