package filesink

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestAnUnremovablePlainTwinKeepsThePairAndIsReportedOnce: a segment whose
// plain file cannot be removed (made immutable) beside its compressed copy,
// as a compression whose removal failed leaves it. Retention, due to remove
// it, leaves the pair whole rather than the plain file alone (which the
// next round would compress again), and each round's failure is reported
// once, not every round.
func TestAnUnremovablePlainTwinKeepsThePairAndIsReportedOnce(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	path, segs := retainDir(t, 2, t0)
	old := segs[0]
	zst := old.Plain + ZstdSuffix
	require.NoError(t, writeZstd(context.Background(), bytes.NewReader(numberedLines(1, 1)), zst))
	zstBefore, err := os.Stat(zst)
	require.NoError(t, err)

	var ev rotationEvents
	r := ev.hook(&Rotation{MaxBackups: 1, Compress: true})
	r.now = func() time.Time { return segs[1].Time.Add(2 * time.Hour) }
	m := &maintainer{rot: r, marks: newOwnMarks(), unlink: func(p string) error {
		if p == old.Plain {
			return &os.PathError{Op: "remove", Path: p, Err: syscall.EPERM}
		}
		return os.Remove(p)
	}}
	for range 3 {
		m.maintain(context.Background(), path, newListings(nil))
		require.FileExists(t, old.Plain)
		require.FileExists(t, zst, "the compressed copy stays with the plain file it could not remove")
	}
	zstAfter, err := os.Stat(zst)
	require.NoError(t, err)
	require.True(t, os.SameFile(zstBefore, zstAfter), "the plain file was not compressed again")
	require.Empty(t, ev.removed)
	require.Len(t, ev.errors(), 1, "the same failure on the same files is reported once: %v", ev.errors())
	require.ErrorIs(t, ev.errors()[0], syscall.EPERM)
	require.ErrorContains(t, ev.errors()[0], old.Plain)

	// Once the file can go, retention removes the pair.
	m.unlink = nil
	m.maintain(context.Background(), path, newListings(nil))
	require.NoFileExists(t, old.Plain)
	require.NoFileExists(t, zst)
	require.Len(t, ev.removed, 1)
	require.Empty(t, m.unremoved, "a removal that worked is forgotten")
}

// TestAPlainTwinRemovedOnARetryTidiesAsTheFirstTry: a plain twin whose
// removal failed once is removed at a later round without being compared
// again; that removal, like a first one, also removes the compression's
// leftover temp file.
func TestAPlainTwinRemovedOnARetryTidiesAsTheFirstTry(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	path := filepath.Join(t.TempDir(), "events.jsonl")
	plain := namerFor(path).name(t0, 1)
	require.NoError(t, os.WriteFile(plain, numberedLines(1, 3), 0o600))
	require.NoError(t, writeZstd(context.Background(), bytes.NewReader(numberedLines(1, 3)), plain+ZstdSuffix))
	tmp := plain + ZstdSuffix + tmpSuffix
	require.NoError(t, os.WriteFile(tmp, []byte("partial"), 0o600))

	var ev rotationEvents
	r := ev.hook(&Rotation{Compress: true})
	r.now = func() time.Time { return t0.Add(2 * time.Hour) }
	m := &maintainer{rot: r, marks: newOwnMarks(), unlink: func(p string) error {
		if p == plain {
			return &os.PathError{Op: "remove", Path: p, Err: syscall.EPERM}
		}
		return os.Remove(p)
	}}
	m.maintain(context.Background(), path, newListings(nil))
	require.FileExists(t, plain)
	require.FileExists(t, tmp)

	m.unlink = nil
	m.maintain(context.Background(), path, newListings(nil))
	require.NoFileExists(t, plain)
	require.FileExists(t, plain+ZstdSuffix)
	require.NoFileExists(t, tmp, "the temp file goes with the plain twin")
}
