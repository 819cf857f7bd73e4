package filesink

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
)

// fakeClock is a settable clock for Rotation.now.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

// drive makes r run on c. Files made under c carry the real clock's
// creation times, which mean nothing on c: r sees none, so a file's
// segment begins when the sink opens it.
func (c *fakeClock) drive(r *Rotation) {
	r.now = c.now
	r.birth = func(*os.File) (time.Time, bool) { return time.Time{}, false }
}
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// rotationEvents records what the hooks were told.
type rotationEvents struct {
	mu      sync.Mutex
	rotated []string
	removed []string // "<segment base>:<reason>"
	errs    []error
}

func (e *rotationEvents) hook(r *Rotation) *Rotation {
	r.OnRotate = func(_, seg string) { e.mu.Lock(); e.rotated = append(e.rotated, seg); e.mu.Unlock() }
	r.OnRemoved = func(_ string, seg Segment, reason string) {
		e.mu.Lock()
		e.removed = append(e.removed, filepath.Base(seg.Path)+":"+reason)
		e.mu.Unlock()
	}
	r.OnError = func(_ string, err error) { e.mu.Lock(); e.errs = append(e.errs, err); e.mu.Unlock() }
	return r
}

func (e *rotationEvents) errors() []error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.errs)
}

// readTrail returns the closed segments of path, oldest first, and the
// active file, each decompressed (with the library; zstdCLI checks the
// command-line tool reads them too).
func readTrail(t *testing.T, path string) (segs []Segment, parts [][]byte) {
	t.Helper()
	segs, err := Segments(path)
	require.NoError(t, err)
	for _, s := range segs {
		raw, err := os.ReadFile(s.Path)
		require.NoError(t, err)
		if s.Compressed {
			dec, err := zstd.NewReader(bytes.NewReader(raw))
			require.NoError(t, err)
			raw, err = io.ReadAll(dec)
			dec.Close()
			require.NoError(t, err, s.Path)
		}
		parts = append(parts, raw)
	}
	active, err := os.ReadFile(path)
	if !os.IsNotExist(err) {
		require.NoError(t, err)
		parts = append(parts, active)
	}
	return segs, parts
}

// zstdCLI decompresses file with the zstd command, skipping when it is not
// installed (outside CI; .ci/run installs it).
func zstdCLI(t *testing.T, file string) []byte {
	t.Helper()
	bin, err := exec.LookPath("zstd")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("zstd not found on PATH (.ci/run installs it): %v", err)
		}
		t.Skip("zstd not found on PATH; skipping the check that the zstd tool reads compressed segments")
	}
	out, err := exec.Command(bin, "-d", "-c", "-q", file).Output()
	require.NoError(t, err, "zstd -d %s", file)
	return out
}

// waitCompressed waits (bounded) until every closed segment of path is
// compressed.
func waitCompressed(t *testing.T, path string, want int) {
	t.Helper()
	require.Eventually(t, func() bool {
		segs, err := Segments(path)
		if err != nil || len(segs) < want {
			return false
		}
		for _, s := range segs {
			if !s.Compressed {
				return false
			}
			if _, err := os.Lstat(s.Plain); err == nil {
				return false
			}
		}
		return true
	}, time.Minute, 5*time.Millisecond, "segments of %s not compressed", path)
}

func TestRotateBySizeKeepsBatchesWhole(t *testing.T) {
	for _, mode := range []FsyncMode{FsyncNever, FsyncBatch, FsyncAlways} {
		t.Run(string(mode), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "events.jsonl")
			var ev rotationEvents
			s, err := New(Options{Path: path, Fsync: mode, Rotation: ev.hook(&Rotation{MaxBytes: 1000})})
			require.NoError(t, err)
			var all []byte
			var batches [][]byte
			for i := range 40 {
				b := numberedLines(i*3, i*3+2) // 3 lines, about 180 bytes
				if i == 17 {
					b = numberedLines(1000, 1020) // one batch larger than MaxBytes
				}
				require.NoError(t, s.WriteBatch(context.Background(), testSession, b))
				all = append(all, b...)
				batches = append(batches, b)
			}
			require.NoError(t, s.Close())
			require.Empty(t, ev.errors())

			segs, parts := readTrail(t, path)
			require.Len(t, ev.rotated, len(segs))
			require.Greater(t, len(segs), 5)
			names := make([]string, len(segs))
			for i, seg := range segs {
				names[i] = filepath.Base(seg.Path)
				require.Equal(t, int64(i+1), seg.Seq)
				require.Equal(t, seg.Path, ev.rotated[i])
				require.Regexp(t, `^events-\d{8}T\d{6}Z-\d{6}\.jsonl$`, names[i])
				fi, err := os.Stat(seg.Path)
				require.NoError(t, err)
				require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
			}
			require.True(t, slices.IsSorted(names), "segment names sort in rotation order: %v", names)
			require.Equal(t, string(all), string(bytes.Join(parts, nil)), "every line once, in order")
			for _, p := range parts {
				// Each file is whole batches: it starts with a batch's
				// first line and ends with one's last.
				require.True(t, len(p) <= 1000 || bytes.Count(p, []byte("\n")) == 21, "a file past max bytes holds a lone big batch")
				require.True(t, startsABatch(p, batches), "file starts inside a batch: %.60q", p)
			}
		})
	}
}

// TestRotationNeverClosesATornLineIntoASegment: a file due for rotation
// whose last line is torn (a writer killed mid-write) has the line cut off
// and kept aside before it is rotated, so the segment holds whole lines.
func TestRotationNeverClosesATornLineIntoASegment(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	whole := numberedLines(0, 20) // past MaxBytes
	torn := `{"n":21,"pad":"xx`
	require.NoError(t, os.WriteFile(path, append(slices.Clone(whole), torn...), 0o600))
	var ev rotationEvents
	s, err := New(Options{Path: path, Rotation: ev.hook(&Rotation{MaxBytes: 1000})})
	require.NoError(t, err)
	next := numberedLines(100, 102)
	require.NoError(t, s.WriteBatch(context.Background(), testSession, next))
	require.NoError(t, s.Close())
	require.Empty(t, ev.errors())

	segs, parts := readTrail(t, path)
	require.Len(t, segs, 1)
	require.Equal(t, [][]byte{whole, next}, parts)
	requireTornKept(t, path, torn)
}

func startsABatch(p []byte, batches [][]byte) bool {
	for _, b := range batches {
		if bytes.HasPrefix(p, b) {
			return true
		}
	}
	return false
}

func TestRotateByInterval(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	clock := &fakeClock{t: time.Date(2026, 12, 6, 6, 0, 0, 0, time.UTC)}
	var ev rotationEvents
	r := ev.hook(&Rotation{Interval: time.Hour})
	clock.drive(r)
	s, err := New(Options{Path: path, Rotation: r})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, s.WriteBatch(ctx, testSession, numberedLines(1, 2)))
	clock.add(59 * time.Minute)
	require.NoError(t, s.WriteBatch(ctx, testSession, numberedLines(3, 4)))
	clock.add(time.Minute)
	require.NoError(t, s.WriteBatch(ctx, testSession, numberedLines(5, 6)))
	clock.add(30 * time.Minute)
	require.NoError(t, s.WriteBatch(ctx, testSession, numberedLines(7, 8)))
	require.NoError(t, s.Close())

	segs, parts := readTrail(t, path)
	require.Len(t, segs, 1)
	require.Equal(t, "events-20261206T070000Z-000001.jsonl", filepath.Base(segs[0].Path))
	require.Equal(t, string(numberedLines(1, 4)), string(parts[0]))
	require.Equal(t, string(numberedLines(5, 8)), string(parts[1]))
}

// An idle file rotates when its interval runs out, with no batch to
// trigger it; the next batch goes to the new file.
func TestRotateByIntervalWithoutABatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	clock := &fakeClock{t: time.Date(2026, 12, 6, 6, 0, 0, 0, time.UTC)}
	var ev rotationEvents
	r := ev.hook(&Rotation{Interval: time.Hour})
	clock.drive(r)
	r.idlePoll = 2 * time.Millisecond
	s, err := New(Options{Path: path, Rotation: r})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, s.WriteBatch(ctx, testSession, numberedLines(1, 2)))
	clock.add(time.Hour)
	require.Eventually(t, func() bool {
		ev.mu.Lock()
		defer ev.mu.Unlock()
		return len(ev.rotated) == 1
	}, time.Minute, 2*time.Millisecond, "the idle file was not rotated")
	segs, parts := readTrail(t, path)
	require.Len(t, segs, 1)
	require.Equal(t, "events-20261206T070000Z-000001.jsonl", filepath.Base(segs[0].Path))
	require.Equal(t, string(numberedLines(1, 2)), string(parts[0]))
	require.Empty(t, parts[1], "the path holds a new, empty file")

	// The empty file is left alone however long it stays empty; its
	// segment begins then, so a batch half an interval later does not
	// rotate it either.
	clock.add(2 * time.Hour)
	require.NoError(t, s.WriteBatch(ctx, testSession, numberedLines(3, 4)))
	clock.add(30 * time.Minute)
	require.NoError(t, s.WriteBatch(ctx, testSession, numberedLines(5, 6)))
	require.NoError(t, s.Close())
	require.Empty(t, ev.errors())
	segs, parts = readTrail(t, path)
	require.Len(t, segs, 1)
	require.Equal(t, string(numberedLines(3, 6)), string(parts[1]))
}

// A clock that goes back must not make a newer segment sort first.
func TestSegmentNamesSortWhenTheClockGoesBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	clock := &fakeClock{t: time.Date(2026, 12, 6, 6, 0, 0, 0, time.UTC)}
	r := &Rotation{MaxBytes: 1}
	clock.drive(r)
	s, err := New(Options{Path: path, Rotation: r})
	require.NoError(t, err)
	for i := range 4 {
		require.NoError(t, s.WriteBatch(context.Background(), testSession, numberedLines(i, i)))
		clock.add(-time.Hour)
	}
	require.NoError(t, s.Close())
	segs, err := Segments(path)
	require.NoError(t, err)
	require.Len(t, segs, 3)
	var names []string
	for _, seg := range segs {
		names = append(names, filepath.Base(seg.Path))
	}
	require.True(t, slices.IsSorted(names), "%v", names)
}

func TestRotationPerTemplatedFile(t *testing.T) {
	dir := t.TempDir()
	s, err := New(Options{Path: filepath.Join(dir, "{session_id}.jsonl"), Rotation: &Rotation{MaxBytes: 300}})
	require.NoError(t, err)
	other := "0b6f3d43-7a55-4d4b-9d3e-3b1d6b0e9f21"
	for i := range 10 {
		require.NoError(t, s.WriteBatch(context.Background(), testSession, numberedLines(i*2, i*2+1)))
		require.NoError(t, s.WriteBatch(context.Background(), other, numberedLines(100+i, 100+i)))
	}
	require.NoError(t, s.Close())
	for _, tc := range []struct {
		id   string
		want []byte
	}{{testSession, numberedLines(0, 19)}, {other, numberedLines(100, 109)}} {
		path := filepath.Join(dir, tc.id+".jsonl")
		segs, parts := readTrail(t, path)
		require.NotEmpty(t, segs, tc.id)
		require.Equal(t, string(tc.want), string(bytes.Join(parts, nil)), tc.id)
		match, err := Matcher(filepath.Join(dir, "{session_id}.jsonl"))
		require.NoError(t, err)
		require.False(t, match(segs[0].Path), "a segment is not a file the template gives")
		require.True(t, IsSegmentOf(segs[0].Path, path))
		require.True(t, IsSegment(segs[0].Path))
		require.False(t, IsSegment(path), "the active file is not a segment")
	}
}

func TestRetentionByCountAndAge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	clock := &fakeClock{t: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	var ev rotationEvents
	r := ev.hook(&Rotation{MaxBytes: 1, MaxBackups: 3, MaxAge: 72 * time.Hour})
	clock.drive(r)
	s, err := New(Options{Path: path, Rotation: r})
	require.NoError(t, err)
	removed := func(n int) func() bool {
		return func() bool { ev.mu.Lock(); defer ev.mu.Unlock(); return len(ev.removed) == n }
	}
	// One line a day: each write from the second on closes a segment
	// named after its day (Dec 2 to Dec 6); the clock stands still until
	// the maintainer has removed what it must.
	for i, want := range []int{0, 0, 0, 0, 1, 2} {
		require.NoError(t, s.WriteBatch(context.Background(), testSession, numberedLines(i, i)))
		require.Eventually(t, removed(want), time.Minute, 5*time.Millisecond, "after write %d", i)
		clock.add(24 * time.Hour)
	}
	// Two days later: one more by count, and the Dec 5 segment is then
	// older than 72 h.
	clock.add(24*time.Hour + time.Minute)
	require.NoError(t, s.WriteBatch(context.Background(), testSession, numberedLines(6, 6)))
	require.Eventually(t, removed(4), time.Minute, 5*time.Millisecond)
	require.NoError(t, s.Close())
	require.Empty(t, ev.errors())
	require.Equal(t, []string{
		"events-20261202T000000Z-000001.jsonl:max_backups",
		"events-20261203T000000Z-000002.jsonl:max_backups",
		"events-20261204T000000Z-000003.jsonl:max_backups",
		"events-20261205T000000Z-000004.jsonl:max_days",
	}, ev.removed)
	segs, parts := readTrail(t, path)
	require.Len(t, segs, 2)
	require.Equal(t, string(numberedLines(4, 6)), string(bytes.Join(parts, nil)))
}

func TestRetentionRefusedKeepsTheSegment(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	var ev rotationEvents
	r := ev.hook(&Rotation{MaxBytes: 1, MaxBackups: 1})
	r.BeforeRemove = func(string, Segment) error { return fmt.Errorf("not recorded yet") }
	s, err := New(Options{Path: path, Rotation: r})
	require.NoError(t, err)
	for i := range 4 {
		require.NoError(t, s.WriteBatch(context.Background(), testSession, numberedLines(i, i)))
	}
	require.Eventually(t, func() bool { return len(ev.errors()) > 0 }, time.Minute, 5*time.Millisecond)
	require.NoError(t, s.Close())
	require.Empty(t, ev.removed)
	require.ErrorContains(t, ev.errors()[0], "not recorded yet")
	_, parts := readTrail(t, path)
	require.Equal(t, string(numberedLines(0, 3)), string(bytes.Join(parts, nil)))
}

// TestRotationUnderLoadWithPythonWriter: a Python JsonlOutboxSink appends
// by path while the sink rotates every few KB and compresses each segment:
// every line of both writers is in exactly one segment, whole and in its
// writer's order, each Go batch in one piece, and the zstd tool reads every
// compressed segment.
func TestRotationUnderLoadWithPythonWriter(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found on PATH; skipping the rotation test with the Python writer")
	}
	path := filepath.Join(t.TempDir(), "shared.jsonl")
	const pyLines = 3000
	var ev rotationEvents
	// The default grace: the Python writer, between its open and its
	// write, may be kept off a loaded host's cores far longer than a
	// shorter one, and its line would go to a segment compressed meanwhile.
	r := ev.hook(&Rotation{MaxBytes: 64 << 10, Compress: true})
	s, err := New(Options{Path: path, Fsync: FsyncNever, Rotation: r})
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, "-c", pyAppender, path, strconv.Itoa(pyLines), "200", "take turns")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	pyDone := make(chan struct{})
	var pyErr error
	go func() { pyErr = cmd.Wait(); close(pyDone) }()
	require.Eventually(t, func() bool {
		fi, err := os.Stat(path)
		return err == nil && fi.Size() > 0
	}, 30*time.Second, time.Millisecond, "python writer never wrote")

	rotations := func() int { ev.mu.Lock(); defer ev.mu.Unlock(); return len(ev.rotated) }
	var batches [][]byte
	// Until Python is done and the sink has rotated a few times (bounded:
	// 64 KB segments fill within a few hundred batches).
	for i, done := 0, false; !done && len(batches) < 100_000; {
		select {
		case <-pyDone:
			done = rotations() >= 5
		default:
		}
		var b bytes.Buffer
		for range 5 {
			fmt.Fprintf(&b, "{\"i\":%d,\"pad\":%q,\"w\":\"go\"}\n", i, strings.Repeat("y", 200))
			i++
		}
		require.NoError(t, s.WriteBatch(ctx, testSession, b.Bytes()))
		batches = append(batches, b.Bytes())
	}
	require.NoError(t, pyErr, "python writer: %s", stderr.String())
	segs, err := Segments(path)
	require.NoError(t, err)
	waitCompressed(t, path, len(segs))
	require.NoError(t, s.Close())
	require.Empty(t, ev.errors())

	segs, parts := readTrail(t, path)
	require.GreaterOrEqual(t, len(segs), 5, "the test rotated too little to prove anything")
	for i, seg := range segs {
		require.True(t, seg.Compressed)
		require.Equal(t, string(parts[i]), string(zstdCLI(t, seg.Path)), "zstd -d %s", seg.Path)
	}
	switches := checkInterleaving(t, bytes.Join(parts, nil), map[string]int{"py": pyLines, "go": 5 * len(batches)}, map[string][][]byte{"go": batches})
	require.Greater(t, switches, 2, "the writers did not overlap")
	t.Logf("%d segments, %d python lines, %d go lines, %d writer switches", len(segs), pyLines, 5*len(batches), switches)
}

// A crash during compression leaves a temp file, or a durable .zst beside
// its plain segment: the next start finishes the job and loses nothing.
func TestRestartFinishesCompression(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "events.jsonl")
	n := namerFor(path)
	t0 := time.Date(2026, 12, 6, 6, 0, 0, 0, time.UTC)
	seg1, seg2 := n.name(t0, 1), n.name(t0, 2)
	require.NoError(t, os.WriteFile(seg1, numberedLines(1, 50), 0o600))
	require.NoError(t, os.WriteFile(seg1+ZstdSuffix+tmpSuffix, []byte("half a frame"), 0o600))
	require.NoError(t, os.WriteFile(seg2, numberedLines(51, 60), 0o600))
	require.NoError(t, writeZstd(context.Background(), bytes.NewReader(numberedLines(51, 60)), seg2+ZstdSuffix))
	old := t0.Add(-time.Minute)
	for _, p := range []string{seg1, seg2} {
		require.NoError(t, os.Chtimes(p, old, old))
	}

	s, err := New(Options{Path: path, Rotation: &Rotation{Compress: true}})
	require.NoError(t, err)
	require.NoError(t, s.WriteBatch(context.Background(), testSession, numberedLines(61, 61)))
	waitCompressed(t, path, 2)
	require.NoError(t, s.Close())
	_, parts := readTrail(t, path)
	require.Equal(t, string(numberedLines(1, 61)), string(bytes.Join(parts, nil)))
	_, err = os.Lstat(seg1 + ZstdSuffix + tmpSuffix)
	require.True(t, os.IsNotExist(err), "temp file left behind")
}

// A plain segment beside its compressed copy is what a compression cut
// short leaves, and is removed; one that differs from the compressed copy
// means one of them was changed, and both stay, reported.
func TestRestartKeepsAPlainTwinThatDiffers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	n := namerFor(path)
	t0 := time.Date(2026, 12, 6, 6, 0, 0, 0, time.UTC)
	same, differs := n.name(t0, 1), n.name(t0, 2)
	require.NoError(t, os.WriteFile(same, numberedLines(1, 50), 0o600))
	require.NoError(t, writeZstd(context.Background(), bytes.NewReader(numberedLines(1, 50)), same+ZstdSuffix))
	require.NoError(t, os.WriteFile(differs, numberedLines(51, 60), 0o600))
	require.NoError(t, writeZstd(context.Background(), bytes.NewReader(numberedLines(52, 61)), differs+ZstdSuffix))

	var ev rotationEvents
	s, err := New(Options{Path: path, Rotation: ev.hook(&Rotation{Compress: true})})
	require.NoError(t, err)
	require.NoError(t, s.WriteBatch(context.Background(), testSession, numberedLines(62, 62)))
	require.Eventually(t, func() bool {
		_, err := os.Lstat(same)
		return os.IsNotExist(err) && len(ev.errors()) > 0
	}, time.Minute, 5*time.Millisecond)
	require.NoError(t, s.Close())
	got, err := os.ReadFile(differs)
	require.NoError(t, err, "the plain segment that differs is kept")
	require.Equal(t, numberedLines(51, 60), got)
	require.ErrorContains(t, ev.errors()[0], differs+" differs from its compressed copy "+differs+ZstdSuffix)
}

// A segment last written before the clock went back has a time ahead of
// the clock; no write came since, so it is compressed now, not once the
// clock catches up with it.
func TestCompressesASegmentWrittenBeforeTheClockWentBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	now := time.Date(2026, 12, 6, 6, 0, 0, 0, time.UTC)
	seg := Segment{Plain: namerFor(path).name(now.Add(-time.Hour), 1)}
	seg.Path = seg.Plain
	require.NoError(t, os.WriteFile(seg.Plain, numberedLines(1, 5), 0o600))
	ahead := now.Add(24 * time.Hour)
	require.NoError(t, os.Chtimes(seg.Plain, ahead, ahead))
	wait, err := compressSegment(context.Background(), &compressor{}, seg, now, time.Second, nil)
	require.NoError(t, err)
	require.Zero(t, wait)
	segs, err := Segments(path)
	require.NoError(t, err)
	require.Len(t, segs, 1)
	require.True(t, segs[0].Compressed)

	// A time ahead by less than the grace (a clock a little off) still
	// waits for the segment to be quiet.
	seg.Plain = namerFor(path).name(now, 2)
	seg.Path = seg.Plain
	require.NoError(t, os.WriteFile(seg.Plain, numberedLines(6, 9), 0o600))
	soon := now.Add(500 * time.Millisecond)
	require.NoError(t, os.Chtimes(seg.Plain, soon, soon))
	wait, err = compressSegment(context.Background(), &compressor{}, seg, now, time.Second, nil)
	require.NoError(t, err)
	require.Equal(t, 1500*time.Millisecond, wait)
}

// TestFullDiskDuringRotationAndCompression: on a full 256 KiB tmpfs a batch
// that rotates the file is refused whole (ENOSPC) and the segment the
// rotation closed is intact; its compression fails visibly (OnError), no
// temp file stays, the plain segment is kept; once there is room again the
// next rotation compresses both. Needs root (mount); gated like the e2e
// tests.
func TestFullDiskDuringRotationAndCompression(t *testing.T) {
	if os.Getenv("SANDBOXAUDIT_E2E") != "1" {
		t.Skip("set SANDBOXAUDIT_E2E=1 to run (mounts a tmpfs; needs root)")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", dir).Run() })
	path := filepath.Join(dir, "events.jsonl")
	var ev rotationEvents
	r := ev.hook(&Rotation{MaxBytes: 100 << 10, Compress: true})
	r.grace = time.Millisecond
	s, err := New(Options{Path: path, Rotation: r})
	require.NoError(t, err)
	ctx := context.Background()
	first := numberedLines(0, 1499) // about 90 KB
	require.NoError(t, s.WriteBatch(ctx, testSession, first))
	// Fill the disk.
	filler := filepath.Join(dir, "filler")
	f, err := os.Create(filler)
	require.NoError(t, err)
	for {
		if _, err := f.Write(bytes.Repeat([]byte{'x'}, 4096)); err != nil {
			break
		}
	}
	require.NoError(t, f.Close())

	second := numberedLines(1500, 1799) // rotates first, then finds no room
	err = s.WriteBatch(ctx, testSession, second)
	require.Error(t, err, "a batch on a full disk")
	require.Eventually(t, func() bool { return len(ev.errors()) > 0 }, time.Minute, 5*time.Millisecond, "compression on a full disk reported no error")
	segs, err := Segments(path)
	require.NoError(t, err)
	require.Len(t, segs, 1)
	require.False(t, segs[0].Compressed)
	got, err := os.ReadFile(segs[0].Path)
	require.NoError(t, err)
	require.Equal(t, string(first), string(got), "the closed segment is intact")
	_, err = os.Lstat(segs[0].Plain + ZstdSuffix + tmpSuffix)
	require.True(t, os.IsNotExist(err), "a temp file was left on the full disk")
	t.Logf("error reported: %v", ev.errors()[0])

	require.NoError(t, os.Remove(filler))
	require.NoError(t, s.WriteBatch(ctx, testSession, second))
	require.NoError(t, s.WriteBatch(ctx, testSession, numberedLines(1800, 3300))) // rotates again
	waitCompressed(t, path, 2)
	require.NoError(t, s.Close())
	_, parts := readTrail(t, path)
	require.Equal(t, string(numberedLines(0, 3300)), string(bytes.Join(parts, nil)))
}

// Two names with one sequence number (one of them not made by the
// rotation) are both listed, so that a reader of the trail sees both.
func TestSegmentsListsTwoNamesOfOneNumber(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "events.jsonl")
	for _, name := range []string{
		"events-20261206T061500Z-000001.jsonl.zst",
		"events-20261206T071500Z-000002.jsonl.zst",
		"events-20261206T091500Z-000002.jsonl.zst",
		"events-20261206T081500Z-000003.jsonl",
		"events-20261206T081500Z-000003.jsonl.zst",
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), nil, 0o600))
	}
	segs, err := Segments(path)
	require.NoError(t, err)
	var names []string
	for _, s := range segs {
		names = append(names, filepath.Base(s.Path))
	}
	require.Equal(t, []string{
		"events-20261206T061500Z-000001.jsonl.zst",
		"events-20261206T071500Z-000002.jsonl.zst",
		"events-20261206T091500Z-000002.jsonl.zst",
		"events-20261206T081500Z-000003.jsonl.zst",
	}, names)
}

// A listing of the directory grouped by audit file gives each file the
// segments Segments lists for it.
func TestSegmentGroupsListAsSegments(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for _, name := range []string{
		"events-20261206T061500Z-000001.jsonl.zst",
		"events-20261206T071500Z-000002.jsonl.zst",
		"events-20261206T091500Z-000002.jsonl.zst",
		"events-20261206T081500Z-000003.jsonl",
		"events-20261206T081500Z-000003.jsonl.zst",
		"events.jsonl",
		"other-20261206T061500Z-000002.jsonl",
		"other-20261206T061500Z-000001.jsonl",
		"other.jsonl",
		"notes.txt",
	} {
		files = append(files, filepath.Join(dir, name))
		require.NoError(t, os.WriteFile(files[len(files)-1], nil, 0o600))
	}
	g := SegmentGroups{}
	var actives []string
	for _, f := range files {
		if a, ok := g.Add(f); ok {
			actives = append(actives, filepath.Base(a))
		}
	}
	require.Equal(t, []string{"events.jsonl", "events.jsonl", "events.jsonl", "events.jsonl", "events.jsonl",
		"other.jsonl", "other.jsonl"}, actives)
	for _, name := range []string{"events.jsonl", "other.jsonl", "notes.txt"} {
		path := filepath.Join(dir, name)
		want, err := Segments(path)
		require.NoError(t, err)
		require.Equal(t, want, g.Of(path), name)
	}
	require.Len(t, g.Of(filepath.Join(dir, "events.jsonl")), 4)
	require.Len(t, g.Of(filepath.Join(dir, "other.jsonl")), 2)
}

// A file whose interval ran out while the collector was stopped rotates
// after the restart with no batch: the timer looks at the path's file
// before the first write opens it.
func TestRotateByIntervalAfterARestartWithoutABatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	began := time.Date(2026, 12, 6, 6, 0, 0, 0, time.UTC)
	clock := &fakeClock{t: began}
	first := &Rotation{Interval: time.Hour}
	clock.drive(first)
	s, err := New(Options{Path: path, Rotation: first})
	require.NoError(t, err)
	require.NoError(t, s.WriteBatch(context.Background(), testSession, numberedLines(1, 2)))
	require.NoError(t, s.Close())

	clock.add(2 * time.Hour) // stopped meanwhile
	var ev rotationEvents
	r := ev.hook(&Rotation{Interval: time.Hour})
	clock.drive(r)
	r.birth = func(*os.File) (time.Time, bool) { return began, true } // the file's creation time
	r.idlePoll = 2 * time.Millisecond
	s, err = New(Options{Path: path, Rotation: r})
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	require.Eventually(t, func() bool {
		ev.mu.Lock()
		defer ev.mu.Unlock()
		return len(ev.rotated) == 1
	}, 10*time.Second, 2*time.Millisecond, "the file was not rotated after the restart")
	segs, parts := readTrail(t, path)
	require.Len(t, segs, 1)
	require.Equal(t, string(numberedLines(1, 2)), string(parts[0]))
	require.Empty(t, parts[1], "the path holds a new, empty file")
	require.Empty(t, ev.errors())
}

// TestAPlainTwinThatDiffersIsReportedOnce: each maintenance round looks
// at the segments again; a pair that differs is read and reported once,
// and again only when one of the two files changes.
func TestAPlainTwinThatDiffersIsReportedOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	plain := namerFor(path).name(time.Date(2026, 12, 6, 6, 0, 0, 0, time.UTC), 1)
	require.NoError(t, os.WriteFile(plain, numberedLines(1, 10), 0o600))
	require.NoError(t, writeZstd(context.Background(), bytes.NewReader(numberedLines(2, 11)), plain+ZstdSuffix))
	var ev rotationEvents
	m := &maintainer{rot: ev.hook(&Rotation{Compress: true})}
	seg := Segment{Plain: plain, Path: plain + ZstdSuffix, Compressed: true}
	m.dropPlainTwin(path, seg)
	m.dropPlainTwin(path, seg)
	require.Len(t, ev.errors(), 1, "the same pair reported again")
	require.NoError(t, os.WriteFile(plain, numberedLines(1, 11), 0o600))
	m.dropPlainTwin(path, seg)
	require.Len(t, ev.errors(), 2, "a changed pair is looked at again")
	require.FileExists(t, plain)
}

// TestRetentionRemovesTheSegmentsTornLines: the torn lines kept aside for
// a segment (<segment>.torn-<ns>, by the sealer) and for the active file
// before that segment was closed go with it; one kept after it stays.
func TestRetentionRemovesTheSegmentsTornLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	clock := &fakeClock{t: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	var ev rotationEvents
	r := ev.hook(&Rotation{MaxBytes: 1, MaxBackups: 1})
	clock.drive(r)
	s, err := New(Options{Path: path, Rotation: r})
	require.NoError(t, err)
	ctx := context.Background()
	for i := range 2 {
		require.NoError(t, s.WriteBatch(ctx, testSession, numberedLines(i, i)))
		clock.add(time.Hour)
	}
	segs, err := Segments(path)
	require.NoError(t, err)
	require.Len(t, segs, 1)
	before := segs[0].Time.Add(-time.Second).UnixNano()
	gone := []string{
		fmt.Sprintf("%s%s%d", segs[0].Plain, fsutil.TornSuffix, before),
		fmt.Sprintf("%s%s%d", path, fsutil.TornSuffix, before),
	}
	stays := fmt.Sprintf("%s%s%d", path, fsutil.TornSuffix, segs[0].Time.Add(time.Second).UnixNano())
	for _, p := range append(gone, stays) {
		require.NoError(t, os.WriteFile(p, []byte("{\"torn"), 0o600))
	}
	// A session's audit file named like one (whole lines) is not one.
	audit := fmt.Sprintf("%s%s%d", path, fsutil.TornSuffix, before-1)
	require.NoError(t, os.WriteFile(audit, []byte("{\"n\":1}\n"), 0o600))
	require.NoError(t, s.WriteBatch(ctx, testSession, numberedLines(2, 2)))
	require.Eventually(t, func() bool { ev.mu.Lock(); defer ev.mu.Unlock(); return len(ev.removed) == 1 }, time.Minute, 5*time.Millisecond)
	require.NoError(t, s.Close())
	require.Empty(t, ev.errors())
	for _, p := range gone {
		require.NoFileExists(t, p)
	}
	require.FileExists(t, stays)
	require.FileExists(t, audit)
}

// TestCompressionCutsATornLineOffTheSegment: a writer that had the path
// open before the rotation (the Python sink), killed mid-line, leaves the
// closed segment's last line torn; compression cuts it off and keeps it
// aside first, so the compressed segment holds only whole lines.
func TestCompressionCutsATornLineOffTheSegment(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	seg := filepath.Join(filepath.Dir(path), "events-20261201T000000Z-000001.jsonl")
	whole := numberedLines(0, 3)
	const torn = `{"n":4,"pad":"xx`
	require.NoError(t, os.WriteFile(seg, append(slices.Clone(whole), torn...), 0o600))
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(seg, old, old))
	var ev rotationEvents
	r := ev.hook(&Rotation{MaxBytes: 1 << 20, Compress: true})
	r.grace = time.Millisecond
	var mu sync.Mutex
	var told []string
	s, err := New(Options{Path: path, Rotation: r, OnTornTail: func(p string, torn fsutil.TornTail, site TornSite) {
		mu.Lock()
		defer mu.Unlock()
		told = append(told, fmt.Sprint(p, " ", torn.Bytes, " ", torn.KeptIn != "", " ", site == TornInSegment))
	}})
	require.NoError(t, err)
	require.NoError(t, s.WriteBatch(context.Background(), testSession, numberedLines(5, 5)))
	require.Eventually(t, func() bool { _, err := os.Stat(seg + ZstdSuffix); return err == nil }, time.Minute, 5*time.Millisecond)
	require.NoError(t, s.Close())
	mu.Lock()
	require.Equal(t, []string{fmt.Sprint(seg, " ", len(torn), " true true")}, told)
	mu.Unlock()
	require.Empty(t, ev.errors())
	segs, parts := readTrail(t, path)
	require.Len(t, segs, 1)
	require.True(t, segs[0].Compressed)
	require.Equal(t, string(whole), string(parts[0]))
	requireTornKept(t, seg, torn)
}
