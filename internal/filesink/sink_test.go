package filesink

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/openfds"
)

const testSession = "6ba7b810-9dad-41d1-80b4-00c04fd430c8"

func TestWriteCreatesFileAndDirectories(t *testing.T) {
	root := t.TempDir()
	s, err := New(Options{Path: root + "/a/b/{session_id_hex}/{session_id}.jsonl"})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })

	lines := "{\"n\":1}\n{\"n\":2}\n"
	require.NoError(t, s.WriteBatch(context.Background(), testSession, []byte(lines)))
	require.NoError(t, s.WriteBatch(context.Background(), testSession, []byte("{\"n\":3}\n")))

	path := filepath.Join(root, "a", "b", strings.ReplaceAll(testSession, "-", ""), testSession+".jsonl")
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, lines+"{\"n\":3}\n", string(got))

	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	for _, d := range []string{"a", "a/b", "a/b/" + strings.ReplaceAll(testSession, "-", "")} {
		fi, err := os.Stat(filepath.Join(root, d))
		require.NoError(t, err)
		require.True(t, fi.IsDir())
		require.Equal(t, os.FileMode(0o700), fi.Mode().Perm(), d)
	}
}

func TestWriteKeepsExistingFileMode(t *testing.T) {
	// A file the Python sink created (0644 by its umask) is appended to, not
	// re-permissioned: changing modes of files we did not create is surprising.
	path := filepath.Join(t.TempDir(), "shared.jsonl")
	require.NoError(t, os.WriteFile(path, []byte("{\"py\":1}\n"), 0o644))
	s, err := New(Options{Path: path})
	require.NoError(t, err)
	require.NoError(t, s.WriteBatch(context.Background(), testSession, []byte("{\"go\":1}\n")))
	require.NoError(t, s.Close())
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "{\"py\":1}\n{\"go\":1}\n", string(got))
}

func TestWriteRejectsEscapingSessionID(t *testing.T) {
	root := t.TempDir()
	base := filepath.Join(root, "logs")
	s, err := New(Options{Path: base + "/{session_id}.jsonl"})
	require.NoError(t, err)
	defer func() { _ = s.Close() }()
	err = s.WriteBatch(context.Background(), "../../etc/x", []byte("{}\n"))
	require.Error(t, err)
	// Nothing was created anywhere under root.
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	require.Empty(t, entries)
}

func TestWriteRejectsIncompleteBatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.jsonl")
	s, err := New(Options{Path: path})
	require.NoError(t, err)
	defer func() { _ = s.Close() }()
	require.Error(t, s.WriteBatch(context.Background(), testSession, []byte("{\"n\":1}")))
	require.NoError(t, s.WriteBatch(context.Background(), testSession, nil), "empty batch is a no-op")
	_, err = os.Stat(path)
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestWriteAllFsyncModes(t *testing.T) {
	for _, mode := range []FsyncMode{"", FsyncNever, FsyncBatch, FsyncAlways} {
		t.Run(string(mode), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.jsonl")
			s, err := New(Options{Path: path, Fsync: mode})
			require.NoError(t, err)
			var want strings.Builder
			for b := range 5 {
				var batch strings.Builder
				for i := range 7 {
					fmt.Fprintf(&batch, "{\"b\":%d,\"i\":%d}\n", b, i)
				}
				want.WriteString(batch.String())
				require.NoError(t, s.WriteBatch(context.Background(), testSession, []byte(batch.String())))
			}
			require.NoError(t, s.Close())
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, want.String(), string(got))
		})
	}
}

// TestWriteCutsTornTail: a torn last line (a writer killed mid-write) is
// cut off before the next write and kept aside, so the file holds only
// whole lines and the line is not lost.
func TestWriteCutsTornTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.jsonl")
	require.NoError(t, os.WriteFile(path, []byte("{\"ok\":1}\n{\"torn"), 0o600))
	var told []fsutil.TornTail
	s, err := New(Options{Path: path, OnTornTail: func(p string, torn fsutil.TornTail, site TornSite) {
		require.Equal(t, path, p)
		require.Equal(t, TornInAuditFile, site)
		told = append(told, torn)
	}})
	require.NoError(t, err)
	require.NoError(t, s.WriteBatch(context.Background(), testSession, []byte("{\"n\":1}\n")))
	require.NoError(t, s.Close())
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "{\"ok\":1}\n{\"n\":1}\n", string(got))
	kept := requireTornKept(t, path, "{\"torn")
	require.Equal(t, []fsutil.TornTail{{Bytes: 6, KeptIn: kept}}, told)
}

// requireTornKept checks that path's one torn line, want, is kept in a
// private side file beside it, and returns that file.
func requireTornKept(t *testing.T, path, want string) string {
	t.Helper()
	kept, err := filepath.Glob(path + fsutil.TornSuffix + "*")
	require.NoError(t, err)
	require.Len(t, kept, 1)
	got, err := os.ReadFile(kept[0])
	require.NoError(t, err)
	require.Equal(t, want, string(got))
	fi, err := os.Lstat(kept[0])
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode())
	return kept[0]
}

// TestWriteCutsTornTailAfterOurs: between two of our writes to the open
// file, another writer leaves a torn line (appended, or after cutting the
// file back); the next write cuts it off rather than joining it.
func TestWriteCutsTornTailAfterOurs(t *testing.T) {
	for name, other := range map[string]func(*os.File) error{
		"appended": func(f *os.File) error { _, err := f.WriteString("{\"torn"); return err },
		"cut back, then appended": func(f *os.File) error {
			if err := f.Truncate(3); err != nil {
				return err
			}
			_, err := f.WriteString("{\"torn")
			return err
		},
		"cut to nothing, then appended": func(f *os.File) error {
			if err := f.Truncate(0); err != nil {
				return err
			}
			_, err := f.WriteString("{\"torn")
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.jsonl")
			s, err := New(Options{Path: path, Fsync: FsyncNever})
			require.NoError(t, err)
			ctx := context.Background()
			require.NoError(t, s.WriteBatch(ctx, testSession, []byte("{\"n\":1}\n")))
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			require.NoError(t, err)
			require.NoError(t, other(f))
			require.NoError(t, f.Close())
			before, err := os.ReadFile(path)
			require.NoError(t, err)
			require.NoError(t, s.WriteBatch(ctx, testSession, []byte("{\"n\":2}\n")))
			require.NoError(t, s.Close())
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			torn := before[bytes.LastIndexByte(before, '\n')+1:]
			require.Equal(t, string(before[:len(before)-len(torn)])+"{\"n\":2}\n", string(got))
			requireTornKept(t, path, string(torn))
		})
	}
}

// TestWriteCutsTornTailInAReplacedFile: the file is renamed away and
// another takes its path, as long as ours was and ending in a torn line;
// the size alone would say nothing changed, so the write must see the new
// file and cut its line off.
func TestWriteCutsTornTailInAReplacedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.jsonl")
	s, err := New(Options{Path: path, Fsync: FsyncNever})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, s.WriteBatch(ctx, testSession, []byte("{\"n\":1}\n")))
	require.NoError(t, os.Rename(path, path+".1"))
	torn := "{\"torn\":" // 8 bytes, as the line above
	require.NoError(t, os.WriteFile(path, []byte(torn), 0o600))
	require.NoError(t, s.WriteBatch(ctx, testSession, []byte("{\"n\":2}\n")))
	require.NoError(t, s.Close())
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "{\"n\":2}\n", string(got))
	requireTornKept(t, path, torn)
}

func TestWriteHonoursContextWhileLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.jsonl")
	holder, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	require.NoError(t, err)
	defer func() { _ = holder.Close() }()
	require.NoError(t, unix.Flock(int(holder.Fd()), unix.LOCK_EX))

	s, err := New(Options{Path: path})
	require.NoError(t, err)
	defer func() { _ = s.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err = s.WriteBatch(ctx, testSession, []byte("{}\n"))
	require.ErrorIs(t, err, context.DeadlineExceeded)

	require.NoError(t, unix.Flock(int(holder.Fd()), unix.LOCK_UN))
	require.NoError(t, s.WriteBatch(context.Background(), testSession, []byte("{}\n")))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "{}\n", string(got), "the cancelled batch wrote nothing")
}

func TestWriteAfterClose(t *testing.T) {
	s, err := New(Options{Path: filepath.Join(t.TempDir(), "x.jsonl")})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.ErrorIs(t, s.WriteBatch(context.Background(), testSession, []byte("{}\n")), ErrClosed)
	require.NoError(t, s.Close(), "second Close is a no-op")
}

func TestOpenFilesStayBounded(t *testing.T) {
	dir := t.TempDir()
	const maxOpen = 3
	s, err := New(Options{Path: dir + "/{session_id}.jsonl", MaxOpenFiles: maxOpen, Fsync: FsyncNever})
	require.NoError(t, err)

	sessions := make([]string, 20)
	for i := range sessions {
		sessions[i] = fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
	}
	// Sequential: the cache fills to the bound and stays there.
	for _, id := range sessions {
		require.NoError(t, s.WriteBatch(context.Background(), id, []byte("{\"seq\":0}\n")))
		require.LessOrEqual(t, openfds.Under(t, dir), maxOpen)
	}
	require.Equal(t, maxOpen, openfds.Under(t, dir))
	require.Equal(t, maxOpen, cachedFiles(s))

	// Concurrent: 8 writers over 20 files. /proc cannot be sampled
	// atomically while descriptors churn, so the sink's own count of
	// descriptors between open(2) and close(2) gives the high-water mark.
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 200 {
				id := sessions[(w*7+i)%len(sessions)]
				if err := s.WriteBatch(context.Background(), id, []byte(fmt.Sprintf("{\"w\":%d,\"i\":%d}\n", w, i))); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	require.LessOrEqual(t, s.peak.Load(), int64(maxOpen))
	require.Equal(t, int64(maxOpen), s.live.Load())
	require.Equal(t, maxOpen, openfds.Under(t, dir))

	require.NoError(t, s.Close())
	require.Equal(t, 0, openfds.Under(t, dir))

	// Every write landed: 20 first lines plus 8*200.
	total := 0
	for _, id := range sessions {
		total += countLines(t, filepath.Join(dir, id+".jsonl"))
	}
	require.Equal(t, len(sessions)+8*200, total)
}

// cachedFiles is how many entries the open-file cache holds.
func cachedFiles(s *Sink) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.files)
}

func countLines(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
	}
	require.NoError(t, sc.Err())
	return n
}

func TestAcquireWaitsForSlotAndHonoursContext(t *testing.T) {
	dir := t.TempDir()
	s, err := New(Options{Path: dir + "/{session_id}.jsonl", MaxOpenFiles: 1})
	require.NoError(t, err)
	defer func() { _ = s.Close() }()
	// Pin the only slot as a writer in flight would.
	busy, err := s.acquire(context.Background(), filepath.Join(dir, "a.jsonl"))
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err = s.WriteBatch(ctx, "b", []byte("{}\n"))
	require.ErrorIs(t, err, context.DeadlineExceeded)

	done := make(chan error, 1)
	go func() { done <- s.WriteBatch(context.Background(), "b", []byte("{}\n")) }()
	s.release(busy)
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("writer was not woken when the slot was released")
	}
	require.Equal(t, 1, openfds.Under(t, dir))
}

func TestOpenErrorIsReportedAndRetried(t *testing.T) {
	dir := t.TempDir()
	// A regular file where a directory must go makes the open fail.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "blocker"), nil, 0o600))
	s, err := New(Options{Path: dir + "/{session_id}/x.jsonl", MaxOpenFiles: 1})
	require.NoError(t, err)
	defer func() { _ = s.Close() }()
	err = s.WriteBatch(context.Background(), "blocker", []byte("{}\n"))
	require.Error(t, err)
	require.Contains(t, err.Error(), "blocker")
	require.Equal(t, 0, cachedFiles(s), "a failed open does not occupy a slot")
	require.NoError(t, s.WriteBatch(context.Background(), "ok", []byte("{}\n")))
	require.NoError(t, os.Remove(filepath.Join(dir, "blocker")))
	require.NoError(t, s.WriteBatch(context.Background(), "blocker", []byte("{}\n")), "open is retried")
}

// TestWriteWithoutFlockClosesTornTailInPlace: without flock (a file system
// that lacks it) another writer may still be writing the unfinished last
// line, or append whole lines between our read and a cut, so the sink never
// cuts bytes off: it closes the line with a newline where it is, as the
// sealer leaves such a tail alone, and keeps nothing aside.
func TestWriteWithoutFlockClosesTornTailInPlace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.jsonl")
	const before = "{\"ok\":1}\n{\"torn"
	require.NoError(t, os.WriteFile(path, []byte(before), 0o600))
	var told []fsutil.TornTail
	s, err := New(Options{
		Path:       path,
		OnTornTail: func(_ string, torn fsutil.TornTail, _ TornSite) { told = append(told, torn) },
		lockFn:     func(context.Context, int) error { return fsutil.ErrLockUnsupported },
	})
	require.NoError(t, err)
	require.NoError(t, s.WriteBatch(context.Background(), testSession, []byte("{\"n\":1}\n")))
	require.NoError(t, s.Close())
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, before+"\n{\"n\":1}\n", string(got), "no byte removed")
	kept, err := filepath.Glob(path + fsutil.TornSuffix + "*")
	require.NoError(t, err)
	require.Empty(t, kept)
	require.Len(t, told, 1)
	require.Equal(t, int64(6), told[0].Bytes)
	require.Empty(t, told[0].KeptIn)
	require.ErrorIs(t, told[0].NotKept, fsutil.ErrTornUnlocked)
}
