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
	mnt := smallFS(t)
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

// smallFS mounts a 64 KiB tmpfs for the test and returns where; the test
// is skipped without root.
func smallFS(t *testing.T) string {
	t.Helper()
	mnt := filepath.Join(t.TempDir(), "small")
	require.NoError(t, os.Mkdir(mnt, 0o700))
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs (needs root): %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", mnt).Run() })
	return mnt
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

// TestSidecarUnwritableAtOpenOnAFullDisk: a restart on a full disk after
// a crash between a trim's rename and its sidecar update finds a sidecar
// naming the old file, which Open cannot write again. The spool opens all
// the same (its lines are replayed from the start), Upkeep says the offset
// is not saved, and the first round after space is freed saves it.
func TestSidecarUnwritableAtOpenOnAFullDisk(t *testing.T) {
	mnt := smallFS(t)
	path := filepath.Join(mnt, "spool.jsonl")
	lines := eventLines(t, 1, 5)
	writeSpool(t, path, lines)
	require.NoError(t, os.WriteFile(path+".offset", []byte(`{"inode":1,"offset":0}`+"\n"), 0o600))
	fillDisk(t, filepath.Join(mnt, "filler"))

	s, err := Open(context.Background(), Options{Path: path, Check: CanonicalEvent})
	require.NoError(t, err, "a full disk must not stop the spool from opening")
	defer func() { require.NoError(t, s.Close()) }()
	require.Contains(t, s.Recovery().OffsetProblem, "earlier spool file")
	require.Error(t, s.Upkeep(), "the offset is not saved")

	var got []byte
	send := func(_ context.Context, batch []byte, _ int) error {
		got = append(got, batch...)
		return nil
	}
	_, err = s.Replay(context.Background(), 10, 1<<20, send)
	require.NoError(t, err)
	require.Equal(t, string(lines), string(got))

	require.NoError(t, os.Remove(filepath.Join(mnt, "filler")))
	_, err = s.Replay(context.Background(), 10, 1<<20, send)
	require.NoError(t, err)
	require.NoError(t, s.Upkeep(), "saved once there is space")
	rec, found, err := readOffset(path + ".offset")
	require.NoError(t, err)
	require.True(t, found)
	ino, err := inode(s.f)
	require.NoError(t, err)
	require.Equal(t, ino, rec.Inode, "the sidecar names the spool's file")
}

// TestSidecarPathNotAFileStillStopsOpen: a directory at the sidecar's path
// is no full disk: it would block every trim, so Open refuses, naming it.
func TestSidecarPathNotAFileStillStopsOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool.jsonl")
	writeSpool(t, path, eventLines(t, 1, 2))
	require.NoError(t, os.Remove(path+".offset"))
	require.NoError(t, os.Mkdir(path+".offset", 0o700))
	_, err := Open(context.Background(), Options{Path: path, Check: CanonicalEvent})
	require.ErrorContains(t, err, path+".offset")
}
