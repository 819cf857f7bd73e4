package filesink

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// residentPages reports which pages of path are in the page cache
// (mincore on a shared read-only mapping, which faults nothing in).
func residentPages(t *testing.T, path string) []bool {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	fi, err := f.Stat()
	require.NoError(t, err)
	m, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
	require.NoError(t, err)
	defer func() { require.NoError(t, unix.Munmap(m)) }()
	page := os.Getpagesize()
	vec := make([]byte, (len(m)+page-1)/page)
	// x/sys/unix has no wrapper for mincore(2).
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0])))
	require.Zero(t, errno, "mincore: %v", errno)
	in := make([]bool, len(vec))
	for i, v := range vec {
		in[i] = v&1 == 1
	}
	return in
}

// skipUnlessDroppable skips when dir's filesystem keeps synced pages
// despite POSIX_FADV_DONTNEED (tmpfs, where they are the storage).
func skipUnlessDroppable(t *testing.T, dir string) {
	t.Helper()
	path := filepath.Join(dir, "probe")
	require.NoError(t, os.WriteFile(path, bytes.Repeat([]byte("p"), 2*os.Getpagesize()), 0o600))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, unix.Fdatasync(int(f.Fd())))
	require.NoError(t, unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED))
	if in := residentPages(t, path); in[0] {
		t.Skipf("the filesystem of %s keeps synced pages after POSIX_FADV_DONTNEED", dir)
	}
	require.NoError(t, os.Remove(path))
}

// writeUnaligned writes batches whose ends fall mid-page, as real ones do.
func writeUnaligned(t *testing.T, opts Options, batches int) string {
	t.Helper()
	dir := t.TempDir()
	skipUnlessDroppable(t, dir)
	opts.Path = filepath.Join(dir, "audit.jsonl")
	s, err := New(opts)
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	line := append(bytes.Repeat([]byte("x"), 999), '\n')
	for i := range batches {
		batch := bytes.Repeat(line, 10+i%7)
		require.NoError(t, s.WriteBatch(context.Background(), "", batch))
	}
	return opts.Path
}

func TestSyncedPagesLeaveThePageCache(t *testing.T) {
	for _, mode := range []FsyncMode{FsyncBatch, FsyncAlways} {
		t.Run(string(mode), func(t *testing.T) {
			in := residentPages(t, writeUnaligned(t, Options{Fsync: mode, DropSyncedPages: true}, 40))

			require.Greater(t, len(in), 100)
			require.True(t, in[len(in)-1], "the page the next append writes into stays")
			for i, r := range in[:len(in)-1] {
				require.False(t, r, "page %d of %d still cached", i, len(in))
			}
		})
	}
}

// The comparison that shows the test above can tell: written pages stay
// cached when nothing drops them.
func TestPagesStayCachedWithoutDropSyncedPages(t *testing.T) {
	for name, opts := range map[string]Options{
		"off":         {Fsync: FsyncBatch},
		"fsync never": {Fsync: FsyncNever, DropSyncedPages: true},
	} {
		t.Run(name, func(t *testing.T) {
			in := residentPages(t, writeUnaligned(t, opts, 40))

			for i, r := range in {
				require.True(t, r, "page %d of %d not cached", i, len(in))
			}
		})
	}
}
