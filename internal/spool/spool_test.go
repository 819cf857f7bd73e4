package spool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
)

// makeLines returns lines {"n":from}..{"n":from+count-1}, each padded to
// roughly pad bytes.
func makeLines(from, count, pad int) []byte {
	var b bytes.Buffer
	for i := from; i < from+count; i++ {
		fmt.Fprintf(&b, "{\"n\":%d,\"pad\":%q}\n", i, strings.Repeat("p", pad+(i%7)*10))
	}
	return b.Bytes()
}

// collector is a SendFunc recording batches; failAt makes the n-th call
// (1-based, counted over the collector's life) fail.
type collector struct {
	mu      sync.Mutex
	data    bytes.Buffer
	batches []int // lines per batch
	sizes   []int // bytes per batch
	calls   int
	failAt  map[int]bool
}

var errSend = errors.New("endpoint down")

func (c *collector) send(_ context.Context, batch []byte, lines int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	if c.failAt[c.calls] {
		return errSend
	}
	if got := bytes.Count(batch, []byte("\n")); got != lines || batch[len(batch)-1] != '\n' {
		return fmt.Errorf("batch claims %d lines, holds %d", lines, got)
	}
	c.data.Write(batch)
	c.batches = append(c.batches, lines)
	c.sizes = append(c.sizes, len(batch))
	return nil
}

func openSpool(t *testing.T, opts Options) *Spool {
	t.Helper()
	s, err := Open(context.Background(), opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// writeSpool makes a spool at path, as the exporter does, and appends b to
// its file as is (torn lines included): what a crash mid-append leaves.
func writeSpool(t *testing.T, path string, b []byte) {
	t.Helper()
	s, err := Open(context.Background(), Options{Path: path})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.Write(b)
	require.NoError(t, errors.Join(err, f.Close()))
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	return fi.Size()
}

func TestAppendReplayInOrderThenTrim(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	path := filepath.Join(dir, "spool.jsonl")
	s := openSpool(t, Options{Path: path})
	ctx := context.Background()

	var want bytes.Buffer
	for _, n := range []int{1, 13, 40, 2} {
		b := makeLines(want.Len(), n, 30) // distinct numbers are enough
		want.Write(b)
		require.NoError(t, s.Append(ctx, b))
	}
	require.Equal(t, int64(want.Len()), s.Size())
	require.True(t, s.Pending())

	c := &collector{}
	sent, err := s.Replay(ctx, 7, 1000, c.send)
	require.NoError(t, err)
	require.Equal(t, 56, sent)
	require.Equal(t, want.String(), c.data.String())
	for i := range c.batches {
		require.LessOrEqual(t, c.batches[i], 7)
		require.LessOrEqual(t, c.sizes[i], 1000)
	}
	require.False(t, s.Pending())
	require.Equal(t, int64(0), fileSize(t, path), "trimmed")

	// Nothing is resent, and the spool keeps working after the trim.
	sent, err = s.Replay(ctx, 7, 1000, c.send)
	require.NoError(t, err)
	require.Zero(t, sent)
	require.NoError(t, s.Append(ctx, []byte("{\"after\":1}\n")))
	sent, err = s.Replay(ctx, 7, 1000, c.send)
	require.NoError(t, err)
	require.Equal(t, 1, sent)
	require.True(t, strings.HasSuffix(c.data.String(), "{\"after\":1}\n"))

	for p, mode := range map[string]os.FileMode{path: 0o600, path + ".offset": 0o600, dir: 0o700, filepath.Dir(dir): 0o700} {
		fi, err := os.Stat(p)
		require.NoError(t, err)
		require.Equal(t, mode, fi.Mode().Perm(), p)
	}
}

func TestReplayFailureThenResume(t *testing.T) {
	s := openSpool(t, Options{Path: filepath.Join(t.TempDir(), "spool.jsonl")})
	ctx := context.Background()
	all := makeLines(0, 100, 20)
	require.NoError(t, s.Append(ctx, all))

	c := &collector{failAt: map[int]bool{3: true, 6: true}}
	sent, err := s.Replay(ctx, 10, 1<<20, c.send)
	require.ErrorIs(t, err, errSend)
	require.Equal(t, 20, sent)
	require.Equal(t, string(all[:c.data.Len()]), c.data.String())
	require.Equal(t, int64(len(all)-c.data.Len()), s.Size())

	sent, err = s.Replay(ctx, 10, 1<<20, c.send)
	require.ErrorIs(t, err, errSend)
	require.Equal(t, 20, sent)

	sent, err = s.Replay(ctx, 10, 1<<20, c.send)
	require.NoError(t, err)
	require.Equal(t, 60, sent)
	require.Equal(t, string(all), c.data.String(), "exactly once, in order, across rounds")
	require.False(t, s.Pending())
}

func TestOffsetSurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool.jsonl")
	ctx := context.Background()
	all := makeLines(0, 50, 20)
	s, err := Open(ctx, Options{Path: path})
	require.NoError(t, err)
	require.NoError(t, s.Append(ctx, all))
	c := &collector{failAt: map[int]bool{3: true}}
	sent, err := s.Replay(ctx, 10, 1<<20, c.send)
	require.ErrorIs(t, err, errSend)
	require.Equal(t, 20, sent)
	require.NoError(t, s.Close())

	s, err = Open(ctx, Options{Path: path})
	require.NoError(t, err)
	defer func() { _ = s.Close() }()
	require.Equal(t, Recovery{ResumeOffset: int64(c.data.Len())}, s.Recovery())
	sent, err = s.Replay(ctx, 10, 1<<20, c.send)
	require.NoError(t, err)
	require.Equal(t, 30, sent)
	require.Equal(t, string(all), c.data.String(), "no resend after a clean restart")
}

func TestTornTailIsCutAndKept(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "spool.jsonl")
	complete := makeLines(0, 3, 10)
	torn := []byte(`{"n":3,"pad":"pp`)
	writeSpool(t, path, append(append([]byte{}, complete...), torn...))

	s := openSpool(t, Options{Path: path})
	rec := s.Recovery()
	require.Equal(t, int64(len(torn)), rec.TornBytes)
	require.True(t, strings.HasPrefix(filepath.Base(rec.TornPath), "spool.jsonl.torn-"), rec.TornPath)
	require.Equal(t, dir, filepath.Dir(rec.TornPath))
	saved, err := os.ReadFile(rec.TornPath)
	require.NoError(t, err)
	require.Equal(t, torn, saved)
	fi, err := os.Stat(rec.TornPath)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	require.Equal(t, int64(len(complete)), fileSize(t, path))

	ctx := context.Background()
	require.NoError(t, s.Append(ctx, []byte("{\"n\":4}\n")))
	c := &collector{}
	sent, err := s.Replay(ctx, 100, 1<<20, c.send)
	require.NoError(t, err)
	require.Equal(t, 4, sent)
	require.Equal(t, string(complete)+"{\"n\":4}\n", c.data.String())
}

func TestTornTailWithoutAnyNewline(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool.jsonl")
	writeSpool(t, path, []byte(`{"half`))
	s := openSpool(t, Options{Path: path})
	require.Equal(t, int64(6), s.Recovery().TornBytes)
	require.False(t, s.Pending())
	require.Equal(t, int64(0), fileSize(t, path))
}

func TestFullRefusesWithoutWriting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool.jsonl")
	s := openSpool(t, Options{Path: path, MaxSize: 100})
	ctx := context.Background()
	line := func(n int) []byte { // exactly n bytes
		return []byte(`{"p":"` + strings.Repeat("x", n-9) + "\"}\n")
	}
	require.NoError(t, s.Append(ctx, line(60)))
	err := s.Append(ctx, line(41))
	require.ErrorIs(t, err, ErrFull)
	require.Contains(t, err.Error(), "max size 100")
	require.Equal(t, int64(60), fileSize(t, path), "nothing partially written")
	require.Equal(t, int64(60), s.Size())

	require.NoError(t, s.Append(ctx, line(40)), "exactly at the limit fits")
	require.ErrorIs(t, s.Append(ctx, line(10)), ErrFull)

	c := &collector{}
	sent, err := s.Replay(ctx, 10, 1<<20, c.send)
	require.NoError(t, err)
	require.Equal(t, 2, sent)
	require.Equal(t, string(line(60))+string(line(40)), c.data.String())
	require.NoError(t, s.Append(ctx, line(100)), "space is freed by acknowledgement")
}

func TestAppendValidatesInput(t *testing.T) {
	s := openSpool(t, Options{Path: filepath.Join(t.TempDir(), "spool.jsonl")})
	ctx := context.Background()
	require.Error(t, s.Append(ctx, []byte(`{"n":1}`)))
	require.NoError(t, s.Append(ctx, nil))
	require.False(t, s.Pending())
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, s.Append(cancelled, []byte("{}\n")), context.Canceled)
	_, err := s.Replay(ctx, 0, 10, (&collector{}).send)
	require.Error(t, err)

	require.NoError(t, s.Close())
	require.ErrorIs(t, s.Append(ctx, []byte("{}\n")), ErrClosed)
	_, err = s.Replay(ctx, 1, 10, (&collector{}).send)
	require.ErrorIs(t, err, ErrClosed)
	require.NoError(t, s.Close())
}

func TestSecondOpenIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool.jsonl")
	s := openSpool(t, Options{Path: path})
	_, err := Open(context.Background(), Options{Path: path})
	require.ErrorIs(t, err, ErrLocked)
	require.NoError(t, s.Close())
	s2, err := Open(context.Background(), Options{Path: path})
	require.NoError(t, err, "the lock is released by Close")
	require.NoError(t, s2.Close())
}

func TestAppendDuringReplayIsKept(t *testing.T) {
	// Lines appended from inside send land while Replay is mid-flight; the
	// trim or compaction at the end must keep them.
	for _, tc := range []struct {
		name     string
		compact  int64
		fileWant func(first, late []byte) string
	}{
		{"no-compaction", 0, func(first, late []byte) string { return string(first) + string(late) }},
		{"compaction", 1, func(_, late []byte) string { return string(late) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "spool.jsonl")
			s := openSpool(t, Options{Path: path, CompactBytes: tc.compact})
			ctx := context.Background()
			first := makeLines(0, 10, 10)
			require.NoError(t, s.Append(ctx, first))
			late := makeLines(10, 5, 10)
			c := &collector{}
			appended := false
			sent, err := s.Replay(ctx, 3, 1<<20, func(ctx context.Context, b []byte, n int) error {
				if !appended {
					appended = true
					if err := s.Append(ctx, late); err != nil {
						return err
					}
				}
				return c.send(ctx, b, n)
			})
			require.NoError(t, err)
			require.Equal(t, 10, sent, "replay stops at the size it saw")
			require.Equal(t, int64(len(late)), s.Size())
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, tc.fileWant(first, late), string(got))

			sent, err = s.Replay(ctx, 3, 1<<20, c.send)
			require.NoError(t, err)
			require.Equal(t, 5, sent)
			require.Equal(t, string(first)+string(late), c.data.String())
			require.Equal(t, int64(0), fileSize(t, path))
		})
	}
}

func TestConcurrentAppendAndReplay(t *testing.T) {
	for _, compact := range []int64{0, 1} { // 1: compact whenever possible
		t.Run(fmt.Sprintf("compact=%d", compact), func(t *testing.T) {
			s := openSpool(t, Options{Path: filepath.Join(t.TempDir(), "spool.jsonl"), CompactBytes: compact})
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			const batches, per = 200, 7
			var want bytes.Buffer
			appendDone := make(chan error, 1)
			go func() {
				for b := range batches {
					lines := makeLines(b*per, per, 15)
					want.Write(lines) // read only after appendDone
					if err := s.Append(ctx, lines); err != nil {
						appendDone <- err
						return
					}
				}
				appendDone <- nil
			}()
			c := &collector{failAt: map[int]bool{}}
			for i := 5; i < 2000; i += 17 {
				c.failAt[i] = true // some rounds fail midway
			}
			finished := false
			for !finished {
				select {
				case err := <-appendDone:
					require.NoError(t, err)
					finished = true
				default:
				}
				_, err := s.Replay(ctx, 5, 300, c.send)
				if err != nil && !errors.Is(err, errSend) {
					require.NoError(t, err)
				}
				require.NoError(t, ctx.Err())
			}
			for s.Pending() {
				_, err := s.Replay(ctx, 5, 300, c.send)
				if err != nil && !errors.Is(err, errSend) {
					require.NoError(t, err)
				}
				require.NoError(t, ctx.Err())
			}
			require.Equal(t, want.String(), c.data.String())
		})
	}
}

func TestCompactionDropsAcknowledgedPrefix(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool.jsonl")
	ctx := context.Background()
	s, err := Open(ctx, Options{Path: path, CompactBytes: 1000})
	require.NoError(t, err)
	all := makeLines(0, 100, 40)
	require.NoError(t, s.Append(ctx, all))
	c := &collector{failAt: map[int]bool{8: true}}
	sent, err := s.Replay(ctx, 10, 1<<20, c.send)
	require.ErrorIs(t, err, errSend)
	require.Equal(t, 70, sent)
	rest := all[c.data.Len():]
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, rest, got, "acknowledged prefix compacted away")
	require.Equal(t, int64(len(rest)), s.Size())

	var st syscall.Stat_t
	require.NoError(t, syscall.Stat(path, &st))
	side, err := os.ReadFile(path + ".offset")
	require.NoError(t, err)
	require.JSONEq(t, fmt.Sprintf(`{"inode":%d,"offset":0}`, st.Ino), string(side))
	require.NoError(t, s.Close())

	s = openSpool(t, Options{Path: path, CompactBytes: 1000})
	require.Empty(t, s.Recovery().OffsetProblem)
	sent, err = s.Replay(ctx, 10, 1<<20, c.send)
	require.NoError(t, err)
	require.Equal(t, 30, sent)
	require.Equal(t, string(all), c.data.String())
	_, err = os.Stat(path + ".compact")
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestStoredOffsetValidation(t *testing.T) {
	lines := makeLines(0, 4, 10)
	bounds := []int{0}
	for i, b := range lines {
		if b == '\n' {
			bounds = append(bounds, i+1)
		}
	}
	setup := func(t *testing.T, sidecar func(ino uint64) string) (*Spool, string) {
		path := filepath.Join(t.TempDir(), "spool.jsonl")
		require.NoError(t, os.WriteFile(path, lines, 0o600))
		var st syscall.Stat_t
		require.NoError(t, syscall.Stat(path, &st))
		sc := sidecar(st.Ino)
		if sc != "" {
			require.NoError(t, os.WriteFile(path+".offset", []byte(sc), 0o600))
		}
		// A lost sidecar: taken as a spool only when the operator says so.
		return openSpool(t, Options{Path: path, Adopt: sc == ""}), path
	}
	for _, tc := range []struct {
		name    string
		sidecar func(ino uint64) string
		resume  int
		problem string
	}{
		{"valid", func(ino uint64) string { return fmt.Sprintf(`{"inode":%d,"offset":%d}`, ino, bounds[2]) }, bounds[2], ""},
		{"mid-line", func(ino uint64) string { return fmt.Sprintf(`{"inode":%d,"offset":%d}`, ino, bounds[2]+5) }, bounds[2], "not at a line boundary"},
		{"mid-first-line", func(ino uint64) string { return fmt.Sprintf(`{"inode":%d,"offset":3}`, ino) }, 0, "not at a line boundary"},
		{"beyond-end", func(ino uint64) string { return fmt.Sprintf(`{"inode":%d,"offset":%d}`, ino, len(lines)+1) }, 0, "outside the file"},
		{"negative", func(ino uint64) string { return fmt.Sprintf(`{"inode":%d,"offset":-4}`, ino) }, 0, "outside the file"},
		{"other-inode", func(ino uint64) string { return fmt.Sprintf(`{"inode":%d,"offset":%d}`, ino+1, bounds[2]) }, 0, "earlier spool file"},
		{"garbage", func(uint64) string { return "not json" }, 0, "parse"},
		{"missing", func(uint64) string { return "" }, 0, "no offset file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, path := setup(t, tc.sidecar)
			rec := s.Recovery()
			require.Equal(t, int64(tc.resume), rec.ResumeOffset)
			if tc.problem == "" {
				require.Empty(t, rec.OffsetProblem)
			} else {
				require.Contains(t, rec.OffsetProblem, tc.problem)
			}
			c := &collector{}
			_, err := s.Replay(context.Background(), 100, 1<<20, c.send)
			require.NoError(t, err)
			require.Equal(t, string(lines[tc.resume:]), c.data.String())
			// The corrected offset was persisted and the file trimmed.
			var side offsetRecord
			b, err := os.ReadFile(path + ".offset")
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(b, &side))
			require.Zero(t, side.Offset)
		})
	}
}

func TestLongLines(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 65 MiB line")
	}
	s := openSpool(t, Options{Path: filepath.Join(t.TempDir(), "spool.jsonl")})
	ctx := context.Background()
	mk := func(tag string, n int) []byte {
		return []byte(`{"t":"` + tag + `","p":"` + strings.Repeat("L", n) + "\"}\n")
	}
	small := mk("s", 10)
	mid := mk("m", 200<<10) // longer than the read buffer, fits a batch
	huge := mk("h", 65<<20) // larger than any batch: sent alone
	var want bytes.Buffer
	for _, l := range [][]byte{small, mid, small, huge, small, mid} {
		want.Write(l)
		require.NoError(t, s.Append(ctx, l))
	}
	c := &collector{}
	sent, err := s.Replay(ctx, 10, 1<<20, c.send)
	require.NoError(t, err)
	require.Equal(t, 6, sent)
	require.True(t, bytes.Equal(want.Bytes(), c.data.Bytes()), "content differs")
	require.Equal(t, []int{3, 1, 2}, c.batches, "the huge line travels alone")
}

// A symlink planted at the spool, its lock or its offset sidecar is not
// followed: the spool would replay another file's lines to the endpoint and
// append to it. The spool and its lock refuse to open; an offset sidecar
// that cannot be read means replaying from 0, as for any bad sidecar.
func TestSpoolDoesNotFollowSymlinks(t *testing.T) {
	for _, link := range []string{"spool.jsonl", "spool.jsonl.lock", "spool.jsonl.offset"} {
		t.Run(link, func(t *testing.T) {
			dir := t.TempDir()
			victim := filepath.Join(dir, "victim")
			require.NoError(t, os.WriteFile(victim, []byte("SECRET-LINE\n"), 0o600))
			require.NoError(t, os.Symlink(victim, filepath.Join(dir, link)))
			s, err := Open(context.Background(), Options{Path: filepath.Join(dir, "spool.jsonl")})
			if link == "spool.jsonl.offset" {
				require.NoError(t, err)
				assert.Contains(t, s.Recovery().OffsetProblem, "symlink")
				require.NoError(t, s.Close())
			} else {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "symlink")
			}
			if link == "spool.jsonl" {
				assert.ErrorIs(t, err, fsutil.ErrNotRegular)
				_, err := os.Lstat(filepath.Join(dir, "spool.jsonl.lock"))
				assert.ErrorIs(t, err, os.ErrNotExist, "a refused spool left its lock file")
			}
			b, err := os.ReadFile(victim)
			require.NoError(t, err)
			assert.Equal(t, "SECRET-LINE\n", string(b), "the link's target changed")
		})
	}
}

// A FIFO or a directory in the spool's place is refused as a symlink is,
// before its lock file is made, and Open does not block on the FIFO.
func TestSpoolRefusesWhatIsNotAFile(t *testing.T) {
	for name, make := range map[string]func(string) error{
		"fifo":      func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"directory": func(p string) error { return os.Mkdir(p, 0o700) },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "spool.jsonl")
			require.NoError(t, make(path))
			_, err := Open(context.Background(), Options{Path: path})
			require.ErrorIs(t, err, fsutil.ErrNotRegular)
			_, err = os.Lstat(path + ".lock")
			assert.ErrorIs(t, err, os.ErrNotExist, "a refused spool left its lock file")
		})
	}
}

// A FIFO at the offset sidecar does not block Open (it waited for a writer
// for ever): it is a bad sidecar, and replay starts from 0.
func TestSpoolOffsetFIFODoesNotBlock(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "spool.jsonl")
	require.NoError(t, syscall.Mkfifo(path+".offset", 0o600))
	type opened struct {
		s   *Spool
		err error
	}
	done := make(chan opened, 1)
	go func() {
		s, err := Open(context.Background(), Options{Path: path})
		done <- opened{s, err}
	}()
	select {
	case o := <-done:
		require.NoError(t, o.err)
		assert.Contains(t, o.s.Recovery().OffsetProblem, "not a regular file")
		require.NoError(t, o.s.Close())
	case <-time.After(10 * time.Second):
		t.Fatal("Open blocked on a FIFO at the offset sidecar")
	}
}

// TestFileWithoutSidecarIsNotASpool: a file with lines and no offset
// sidecar (an audit file reached through a symlink, or named by a second
// exporter's spool path) is refused before anything in it or beside it
// changes; replaying it would trim the audit trail to nothing.
func TestFileWithoutSidecarIsNotASpool(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "events.jsonl")
	lines := makeLines(0, 3, 10)
	require.NoError(t, os.WriteFile(path, lines, 0o600))
	_, err := Open(context.Background(), Options{Path: path})
	require.ErrorIs(t, err, ErrNotASpool)
	got, rerr := os.ReadFile(path)
	require.NoError(t, rerr)
	require.Equal(t, lines, got)
	entries, rerr := os.ReadDir(dir)
	require.NoError(t, rerr)
	require.Len(t, entries, 1, "nothing made beside it")

	// An empty file is a spool that never held a line.
	empty := filepath.Join(dir, "empty.jsonl")
	require.NoError(t, os.WriteFile(empty, nil, 0o600))
	openSpool(t, Options{Path: empty})
}
