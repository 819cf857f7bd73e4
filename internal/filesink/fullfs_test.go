package filesink

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// diskFullAfter is a write(2) that lets budget bytes through, in total,
// then fails with ENOSPC, as a full filesystem does (a short write first,
// then the error).
func diskFullAfter(budget *int) func(*os.File, []byte) (int, error) {
	return func(f *os.File, b []byte) (int, error) {
		if *budget <= 0 {
			return 0, unix.ENOSPC
		}
		n := min(len(b), *budget)
		*budget -= n
		n, err := f.Write(b[:n])
		if err == nil && n < len(b) {
			err = unix.ENOSPC
		}
		return n, err
	}
}

func numberedLines(from, to int) []byte {
	var b bytes.Buffer
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "{\"n\":%d,\"pad\":%q}\n", i, strings.Repeat("x", 40))
	}
	return b.Bytes()
}

// TestRefusedBatchLeavesNothing: a batch that the disk refuses part-way is
// cut back out of the file before the error is reported, in every fsync
// mode and whatever the file held: the file is byte-for-byte what it was
// (but for another writer's torn line, cut off and kept aside before the
// write), and the retry of the same batch, once there is room, appends it
// whole.
func TestRefusedBatchLeavesNothing(t *testing.T) {
	for _, mode := range []FsyncMode{FsyncNever, FsyncBatch, FsyncAlways} {
		for _, before := range []string{"", "{\"old\":1}\n", "{\"old\":1}\n{\"torn\":"} {
			for _, room := range []int{0, 1, 70, 200} { // bytes the disk takes before it is full
				t.Run(fmt.Sprintf("%s/%d-bytes-before/room-%d", mode, len(before), room), func(t *testing.T) {
					path := filepath.Join(t.TempDir(), "audit.jsonl")
					require.NoError(t, os.WriteFile(path, []byte(before), 0o600))
					budget := room
					s, err := New(Options{Path: path, Fsync: mode, writeFn: diskFullAfter(&budget)})
					require.NoError(t, err)
					t.Cleanup(func() { require.NoError(t, s.Close()) })
					batch := numberedLines(1, 5)

					err = s.WriteBatch(context.Background(), testSession, batch)
					require.ErrorIs(t, err, unix.ENOSPC)
					got, rerr := os.ReadFile(path)
					require.NoError(t, rerr)
					whole := before[:strings.LastIndexByte(before, '\n')+1]
					require.Equal(t, whole, string(got), "the refused batch left bytes behind")
					if whole != before {
						requireTornKept(t, path, before[len(whole):])
					}

					budget = 1 << 20 // room again
					require.NoError(t, s.WriteBatch(context.Background(), testSession, batch))
					got, rerr = os.ReadFile(path)
					require.NoError(t, rerr)
					require.Equal(t, whole+string(batch), string(got))
				})
			}
		}
	}
}

// TestFullTmpfsHoldsOnlyWholeBatches fills a real 64 KiB tmpfs with
// batches of 7 lines until the disk refuses them: every refused batch is
// gone, so the file is a whole number of batches of whole lines. Needs
// root (mount); gated like the e2e tests.
func TestFullTmpfsHoldsOnlyWholeBatches(t *testing.T) {
	if os.Getenv("SANDBOXAUDIT_E2E") != "1" {
		t.Skip("set SANDBOXAUDIT_E2E=1 to run (mounts a tmpfs; needs root)")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", dir).Run() })

	for _, mode := range []FsyncMode{FsyncBatch, FsyncAlways} {
		path := filepath.Join(dir, string(mode)+".jsonl")
		s, err := New(Options{Path: path, Fsync: mode})
		require.NoError(t, err)
		const perBatch = 7
		written, refused := 0, 0
		for i := 0; i < 2000 && refused < 5; i++ {
			err := s.WriteBatch(context.Background(), testSession, numberedLines(i*perBatch, i*perBatch+perBatch-1))
			switch {
			case err == nil:
				written++
			case errors.Is(err, unix.ENOSPC):
				refused++
			default:
				t.Fatalf("%s: batch %d: %v", mode, i, err)
			}
		}
		require.NoError(t, s.Close())
		require.Equal(t, 5, refused, "%s: the disk never filled up", mode)
		got, err := os.ReadFile(path)
		require.NoError(t, err)
		lines := strings.SplitAfter(string(got), "\n")
		require.Empty(t, lines[len(lines)-1], "%s: the file ends in a torn line", mode)
		lines = lines[:len(lines)-1]
		require.Len(t, lines, written*perBatch, "%s: lines of refused batches are in the file", mode)
		for i, l := range lines {
			require.Equal(t, fmt.Sprintf("{\"n\":%d,", i), l[:len(fmt.Sprintf("{\"n\":%d,", i))], "%s: line %d", mode, i+1)
		}
		// Free the space for the next mode.
		require.NoError(t, os.Remove(path))
	}
}
