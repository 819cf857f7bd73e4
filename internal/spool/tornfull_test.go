package spool

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTornTailOnAFullDiskStillOpens: a spool on a full file system with a
// torn last line (an append cut short, as a full disk does) cannot have
// the line saved aside. Open closes the torn line with a newline instead,
// so replay quarantines it (or passes over it), and the intact lines
// before it are still replayed: a full disk must not keep the collector
// from starting. No partial side file is left behind. Needs root to mount
// a tmpfs; skipped otherwise.
func TestTornTailOnAFullDiskStillOpens(t *testing.T) {
	mnt := filepath.Join(t.TempDir(), "small")
	require.NoError(t, os.Mkdir(mnt, 0o700))
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs (needs root): %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", mnt).Run() })
	path := filepath.Join(mnt, "spool.jsonl")
	intact := eventLines(t, 1, 5)
	torn := bytes.Repeat([]byte("x"), 3000)
	writeSpool(t, path, append(append([]byte{}, intact...), torn...))
	fillDisk(t, filepath.Join(mnt, "filler"))

	s, err := Open(context.Background(), Options{Path: path, Check: CanonicalEvent})
	require.NoError(t, err, "a full disk must not stop the spool from opening")
	defer func() { require.NoError(t, s.Close()) }()
	rec := s.Recovery()
	require.Equal(t, int64(len(torn)), rec.TornBytes)
	require.Empty(t, rec.TornPath)
	require.Error(t, rec.TornNotKept)
	left, err := filepath.Glob(path + ".torn-*")
	require.NoError(t, err)
	require.Empty(t, left, "no partial side file")

	var got []byte
	_, err = s.Replay(context.Background(), 10, 1<<20, func(_ context.Context, batch []byte, _ int) error {
		got = append(got, batch...)
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, string(intact), string(got), "the intact lines, and never the torn one")
}

// fillDisk writes path until its file system is full.
func fillDisk(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	block := make([]byte, 1024)
	for range 1 << 20 {
		if _, err := f.Write(block); err != nil {
			return
		}
	}
	t.Fatal("the file system never filled up")
}
