package spool

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// adoptedCopies lists the .adopted- copies beside path and their bytes.
func adoptedCopies(t *testing.T, path string) (names []string, bytes int64) {
	t.Helper()
	names, err := filepath.Glob(path + ".adopted-*")
	require.NoError(t, err)
	for _, n := range names {
		bytes += fileSize(t, n)
	}
	return names, bytes
}

// adoptRound opens the spool at path, which has lines and no sidecar, as
// the exporter does; replays it when replay is set (which trims the file,
// so a copy made then holds bytes of its own), and closes it.
func adoptRound(t *testing.T, path string, lines []byte, maxSize int64, replay bool) Recovery {
	t.Helper()
	require.NoError(t, os.WriteFile(path, lines, 0o600))
	_ = os.Remove(path + ".offset") // lost again
	s, err := Open(context.Background(), Options{Path: path, MaxSize: maxSize, Check: CanonicalEvent, AdoptValid: true})
	require.NoError(t, err, "adopted, copy kept or not")
	r := s.Recovery()
	require.True(t, r.Adopted)
	if replay {
		c := &collector{}
		_, err := s.Replay(context.Background(), 100, 1<<20, c.send)
		require.NoError(t, err)
		require.Equal(t, lines, c.data.Bytes(), "every line is sent, copy kept or not")
		require.Zero(t, fileSize(t, path), "trimmed")
	}
	require.NoError(t, s.Close())
	return r
}

// A sidecar lost at every restart (a crash loop on a disk that refuses it,
// a cleaner) adopts the spool each time: the copies of it share the
// spool's max size, as the torn lines do, and one that would pass it is
// not made, which Recovery says.
func TestAdoptedCopiesShareMaxSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool.jsonl")
	lines := eventLines(t, 1, 4)
	n := int64(len(lines))
	maxSize := 2*n + n/2 // room for two copies
	for round := 1; round <= 5; round++ {
		r := adoptRound(t, path, lines, maxSize, true)
		names, kept := adoptedCopies(t, path)
		require.LessOrEqual(t, kept, maxSize, "round %d", round)
		if round <= 2 {
			require.NoError(t, r.AdoptedKeptErr, "round %d", round)
			require.Contains(t, names, r.AdoptedKept)
			continue
		}
		require.ErrorIs(t, r.AdoptedKeptErr, ErrAdoptedOverLimit, "round %d", round)
		require.Empty(t, r.AdoptedKept)
		require.Len(t, names, 2, "round %d: no copy past the bound", round)
	}

	// Unbounded (max size 0), as the spool itself is.
	r := adoptRound(t, path, lines, 0, true)
	require.NoError(t, r.AdoptedKeptErr)
	names, _ := adoptedCopies(t, path)
	require.Len(t, names, 3)
}

// A restart that finds the spool still the file an earlier copy names (no
// replay trimmed it between) keeps that copy rather than a second name for
// the same bytes: it costs nothing, and is at the bound too.
func TestAdoptedCopyOfTheSameFileIsNotMadeTwice(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool.jsonl")
	lines := eventLines(t, 1, 4)
	first := adoptRound(t, path, lines, int64(len(lines)), false)
	require.NoError(t, first.AdoptedKeptErr)
	for range 3 {
		r := adoptRound(t, path, lines, int64(len(lines)), false)
		require.NoError(t, r.AdoptedKeptErr)
		require.Equal(t, first.AdoptedKept, r.AdoptedKept)
	}
	names, _ := adoptedCopies(t, path)
	require.Equal(t, []string{first.AdoptedKept}, names)
}
