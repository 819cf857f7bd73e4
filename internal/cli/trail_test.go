package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
)

// rotatedFixture writes ops operations of two sessions through a rotating,
// compressing file sink sealed by a sealer (as the collector runs them),
// and returns the audit path, the key files and the canonical lines in
// order.
func rotatedFixture(t *testing.T, ops int) (path, keyPath, pubPath string, want []byte) {
	t.Helper()
	return retainedFixture(t, ops, 0)
}

// retainedFixture is rotatedFixture with retention keeping keep closed
// segments (0: all).
func retainedFixture(t *testing.T, ops, keep int) (path, keyPath, pubPath string, want []byte) {
	t.Helper()
	dir := t.TempDir()
	res := run(t, "", "keygen", "--name", "cli-test", "--out", filepath.Join(dir, "keys"))
	require.Equal(t, 0, res.code, res.stderr)
	keyPath, pubPath = filepath.Join(dir, "keys", "cli-test.key"), filepath.Join(dir, "keys", "cli-test.pub")
	keys, err := integrity.LoadSigningKey(keyPath)
	require.NoError(t, err)
	sealer, err := integrity.NewSealer(integrity.Settings{Keys: keys, Interval: time.Second})
	require.NoError(t, err)

	path = filepath.Join(dir, "trail", "events.jsonl")
	sink, err := filesink.New(filesink.Options{Path: path, OnWrite: sealer.Wrote,
		Rotation: &filesink.Rotation{MaxBytes: 4 << 10, Compress: true, MaxBackups: keep, BeforeRemove: sealer.Retire}})
	require.NoError(t, err)
	ctx := context.Background()
	for i := range ops {
		s, f := op(sessionA, "exec", fmt.Sprintf("a%015d", i), int64(2*i+1), int64(2*i+2))
		s2, f2 := op(sessionB, "read", fmt.Sprintf("b%015d", i), int64(2*i+1), int64(2*i+2))
		batch := canonLines(s, f, s2, f2)
		require.NoError(t, sink.WriteBatch(ctx, sessionA.String(), []byte(batch)))
		want = append(want, batch...)
		if i%5 == 0 {
			require.NoError(t, sealer.SealPending(ctx))
		}
	}
	require.NoError(t, sealer.SealPending(ctx))
	require.Eventually(t, func() bool {
		segs, err := filesink.Segments(path)
		require.NoError(t, err)
		for _, s := range segs {
			if _, err := os.Lstat(s.Plain); err == nil {
				return false
			}
		}
		return len(segs) > 3
	}, time.Minute, 10*time.Millisecond, "segments not compressed")
	require.NoError(t, sink.Close())
	require.NoError(t, sealer.Close(ctx))
	return path, keyPath, pubPath, want
}

func TestVerifyTrailDirectory(t *testing.T) {
	path, _, pub, want := rotatedFixture(t, 60)
	dir := filepath.Dir(path)
	res := run(t, "", "verify", "--key", pub, dir)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	segs, err := filesink.Segments(path)
	require.NoError(t, err)
	n := bytes.Count(want, []byte("\n"))
	require.Contains(t, res.stdout, fmt.Sprintf("%s: integrity: trail segments=%d retired=0 first_line=1 lines=%d sealed=%d unsealed=0", path, len(segs), n, n))
	require.Contains(t, res.stdout, fmt.Sprintf("files=%d lines=%d", len(segs)+1, n))

	// A segment named stands for its trail; so does the active file.
	for _, arg := range []string{segs[1].Path, path} {
		res = run(t, "", "verify", "--key", pub, arg)
		require.Equal(t, 0, res.code, res.stdout+res.stderr)
		require.Contains(t, res.stdout, "trail segments=")
	}
	// Without a key the directory's lines are read in order, decompressed.
	res = run(t, "", "verify", dir)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, fmt.Sprintf("files=%d lines=%d", len(segs)+1, n))

	// A directory named through a symbolic link (a volume mount) is read
	// as the directory, with the key and without, not found empty.
	link := filepath.Join(t.TempDir(), "audit")
	require.NoError(t, os.Symlink(dir, link))
	for _, args := range [][]string{{"verify", "--key", pub, link}, {"verify", link}} {
		res = run(t, "", args...)
		require.Equal(t, 0, res.code, res.stdout+res.stderr)
		require.Contains(t, res.stdout, fmt.Sprintf("files=%d lines=%d", len(segs)+1, n))
	}
}

func TestVerifyTrailRefusesAttacks(t *testing.T) {
	for _, tc := range []struct {
		name   string
		attack func(t *testing.T, path string, segs []filesink.Segment)
		want   string
	}{
		{"segment dropped", func(t *testing.T, _ string, segs []filesink.Segment) {
			require.NoError(t, os.Remove(segs[1].Path))
		}, "is missing, and no retention record says it was removed"},
		{"segments swapped", func(t *testing.T, _ string, segs []filesink.Segment) {
			a, b := segs[0].Path, segs[2].Path
			require.NoError(t, os.Rename(a, a+".x"))
			require.NoError(t, os.Rename(b, a))
			require.NoError(t, os.Rename(a+".x", b))
		}, "do not match the root hash"},
		{"forged line appended to a rotated segment", func(t *testing.T, _ string, segs []filesink.Segment) {
			data := decompress(t, segs[1].Path)
			last := data[bytes.LastIndexByte(data[:len(data)-1], '\n')+1:]
			compressTo(t, segs[1].Path, append(data, bytes.Replace(last, []byte(`"seq":`), []byte(`"seq":9`), 1)...))
		}, "its signed segment record"},
		{"segment records cut, the lines whole", func(t *testing.T, path string, _ []filesink.Segment) {
			b, err := os.ReadFile(integrity.SegmentsPath(path))
			require.NoError(t, err)
			sig := bytes.Index(b, []byte("\n\n\u2014 ")) + 2 // the first record's signature
			first := sig + bytes.Index(b[sig:], []byte("\n\n")) + 2
			require.NoError(t, os.WriteFile(integrity.SegmentsPath(path), b[:first], 0o600))
		}, "which no segment record names, ends at line"},
		{"active file cut back", func(t *testing.T, path string, _ []filesink.Segment) {
			require.NoError(t, os.Truncate(path, 0))
		}, "cut off the end"},
		{"forged line appended to the active file", func(t *testing.T, path string, _ []filesink.Segment) {
			s, f := op(sessionA, "exec", "f000000000000001", 9001, 9002)
			appendFlocked(t, path, canonLines(s, f))
		}, "2 lines after the newest checkpoint are not sealed"},
		{"active file replaced by a symbolic link to a copy", func(t *testing.T, path string, _ []filesink.Segment) {
			copied := filepath.Join(t.TempDir(), "copy.jsonl")
			require.NoError(t, os.Rename(path, copied))
			require.NoError(t, os.Symlink(copied, path))
		}, "events.jsonl is a symbolic link, not followed: the active file is not read"},
		{"segment of another log under a number the log has", func(t *testing.T, _ string, segs []filesink.Segment) {
			other, _, _, _ := rotatedFixture(t, 40)
			theirs, err := filesink.Segments(other)
			require.NoError(t, err)
			name := strings.Replace(filepath.Base(segs[1].Path), segs[1].Time.Format("20060102T150405Z"),
				segs[1].Time.Add(time.Hour).Format("20060102T150405Z"), 1)
			require.NoError(t, os.Rename(theirs[1].Path, filepath.Join(filepath.Dir(segs[1].Path), name)))
		}, "a foreign or renamed segment"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, _, pub, _ := rotatedFixture(t, 40)
			segs, err := filesink.Segments(path)
			require.NoError(t, err)
			tc.attack(t, path, segs)
			res := run(t, "", "verify", "--key", pub, filepath.Dir(path))
			require.Equal(t, exitProblems, res.code, res.stdout)
			require.Contains(t, res.stdout, tc.want)
			require.Contains(t, res.stdout, "FAILED")
		})
	}
}

// A live file's last lines, not yet checkpointed, pass only with
// --allow-unsealed, bounded by count or by time, and the output says so.
func TestVerifyAllowUnsealed(t *testing.T) {
	path, _, pub, _ := rotatedFixture(t, 20)
	s, f := op(sessionA, "exec", "f000000000000001", 41, 42)
	appendFlocked(t, path, canonLines(s, f))
	dir := filepath.Dir(path)
	for _, tc := range []struct {
		limit string
		code  int
		want  string
	}{
		{"", exitProblems, "2 lines after the newest checkpoint are not sealed"},
		{"1", exitProblems, "more than --allow-unsealed 1 allows"},
		{"2", exitOK, "unsealed=2 (allowed by --allow-unsealed 2)"},
		{"10m", exitOK, "unsealed=2 (allowed by --allow-unsealed 10m)"},
	} {
		args := []string{"verify", "--key", pub, dir}
		if tc.limit != "" {
			args = append(args, "--allow-unsealed", tc.limit)
		}
		res := run(t, "", args...)
		require.Equal(t, tc.code, res.code, "%s: %s", tc.limit, res.stdout)
		require.Contains(t, res.stdout, tc.want, tc.limit)
	}
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(path, old, old))
	res := run(t, "", "verify", "--key", pub, dir, "--allow-unsealed", "10m")
	require.Equal(t, exitProblems, res.code, "lines in a file last written an hour ago are not a live file's: %s", res.stdout)
	res = run(t, "", "verify", "--key", pub, dir, "--allow-unsealed", "ten")
	require.Equal(t, exitUsage, res.code)
	require.Contains(t, res.stderr, `"ten" is neither a line count (100) nor a duration (30s)`)
}

// A file whose time is ahead of the clock was not written within any
// duration: its unsealed lines are not a live file's.
func TestVerifyAllowUnsealedNotInAFileFromTheFuture(t *testing.T) {
	path, _, pub, _ := rotatedFixture(t, 20)
	s, f := op(sessionA, "exec", "f000000000000001", 41, 42)
	appendFlocked(t, path, canonLines(s, f))
	ahead := time.Now().Add(24 * time.Hour)
	require.NoError(t, os.Chtimes(path, ahead, ahead))
	res := run(t, "", "verify", "--key", pub, filepath.Dir(path), "--allow-unsealed", "10m")
	require.Equal(t, exitProblems, res.code, res.stdout)
	require.Contains(t, res.stdout, "2 lines after the newest checkpoint are not sealed")
}

// A closed segment is not a live file: a forged line appended to the
// newest one, with the segments sidecar cut so that no record counts its
// lines, is not among the lines --allow-unsealed accepts.
func TestVerifyAllowUnsealedNotInAClosedSegment(t *testing.T) {
	for _, cut := range []string{"removed", "last record cut"} {
		t.Run(cut, func(t *testing.T) {
			path, _, pub, _ := rotatedFixture(t, 20)
			segs, err := filesink.Segments(path)
			require.NoError(t, err)
			newest := segs[len(segs)-1]
			if cut == "removed" {
				require.NoError(t, os.Remove(integrity.SegmentsPath(path)))
			} else {
				sidecar, err := os.ReadFile(integrity.SegmentsPath(path))
				require.NoError(t, err)
				last := bytes.LastIndex(sidecar, []byte("sandboxaudit segment v1\n"))
				require.Positive(t, last)
				require.NoError(t, os.WriteFile(integrity.SegmentsPath(path), sidecar[:last], 0o600))
			}
			// As just after a rotation by time: the active file empty, its
			// sealed lines the newest segment's last ones.
			data := decompress(t, newest.Path)
			active, err := os.ReadFile(path)
			require.NoError(t, err)
			require.NoError(t, os.Truncate(path, 0))
			s, f := op(sessionA, "exec", "f000000000000001", 41, 42)
			compressTo(t, newest.Path, append(append(data, active...), canonLines(s, f)...))

			res := run(t, "", "verify", "--key", pub, "--allow-unsealed", "10", filepath.Dir(path))
			require.Equal(t, exitProblems, res.code, res.stdout)
			require.Contains(t, res.stdout, "2 lines after the newest checkpoint are not sealed, and the closed segment "+newest.Path+" holds some")
			require.NotContains(t, res.stdout, "allowed by --allow-unsealed")
			require.Contains(t, res.stdout, "FAILED")
		})
	}
}

// A compressed segment cut short fails that segment, named, and the run
// goes on to the trail's summary, with the key and without.
func TestVerifyTrailDamagedSegment(t *testing.T) {
	path, _, pub, _ := rotatedFixture(t, 40)
	segs, err := filesink.Segments(path)
	require.NoError(t, err)
	fi, err := os.Stat(segs[1].Path)
	require.NoError(t, err)
	require.NoError(t, os.Truncate(segs[1].Path, fi.Size()/2))
	dir := filepath.Dir(path)
	for _, args := range [][]string{{"verify", "--key", pub, dir}, {"verify", dir}} {
		res := run(t, "", args...)
		require.Equal(t, exitProblems, res.code, res.stdout+res.stderr)
		require.Contains(t, res.stdout, segs[1].Path+": the compressed segment cannot be read to its end (unexpected EOF): cut short or damaged")
		require.Contains(t, res.stdout, fmt.Sprintf("files=%d", len(segs)+1), "every part is read")
		require.Contains(t, res.stdout, "FAILED")
	}
	res := run(t, "", "verify", "--key", pub, dir)
	require.Contains(t, res.stdout, path+": integrity: trail segments=")
	require.Contains(t, res.stdout, segs[1].Path+": holds ")
}

// A resent line whose first copy sits in a compressed segment is a
// duplicate: the first copy is read again decompressed.
func TestVerifyDuplicateOfACompressedLine(t *testing.T) {
	path, _, _, _ := rotatedFixture(t, 20)
	segs, err := filesink.Segments(path)
	require.NoError(t, err)
	require.True(t, segs[0].Compressed)
	data := decompress(t, segs[0].Path)
	appendFlocked(t, path, string(data[:bytes.IndexByte(data, '\n')+1]))
	res := run(t, "", "verify", "--allow-duplicates", filepath.Dir(path))
	require.Equal(t, exitOK, res.code, res.stdout)
	require.Contains(t, res.stdout, "duplicates=1")
	res = run(t, "", "verify", filepath.Dir(path))
	require.Equal(t, exitProblems, res.code, res.stdout)
	require.Contains(t, res.stdout, "duplicate of "+segs[0].Path+":1 (same event_id and bytes")
}

func decompress(t *testing.T, name string) []byte {
	t.Helper()
	r, err := integrity.TrailPart{Path: name, Compressed: strings.HasSuffix(name, ".zst")}.Open()
	require.NoError(t, err)
	defer func() { _ = r.Close() }()
	var b bytes.Buffer
	_, err = b.ReadFrom(r)
	require.NoError(t, err)
	return b.Bytes()
}

func compressTo(t *testing.T, name string, data []byte) {
	t.Helper()
	tmp := filepath.Join(t.TempDir(), "plain")
	require.NoError(t, os.WriteFile(tmp, data, 0o600))
	require.NoError(t, filesink.CompressFile(context.Background(), tmp, name))
}

// A file the collector refuses (lines, no signed history) gets a new log
// only through log reset, which keeps the old sidecars.
func TestLogReset(t *testing.T) {
	path, keyPath, pub := sealedFixture(t)
	require.NoError(t, os.Remove(path+integrity.StoreSuffix))
	require.NoError(t, os.Rename(path+integrity.CheckpointsSuffix, path+".old"))
	require.ErrorIs(t, integrity.CheckHistory(path), integrity.ErrNoHistory)
	require.NoError(t, os.Rename(path+".old", path+integrity.CheckpointsSuffix))

	res := run(t, "", "log", "reset", "--signing-key", keyPath, path)
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, "a new log starts over the lines it holds now")
	require.Regexp(t, `kept the old audit\.jsonl\.checkpoints as .*audit\.jsonl\.reset-\d{8}T\d{6}Z\.checkpoints`, res.stdout)
	require.NoError(t, integrity.CheckHistory(path))
	res = run(t, "", "verify", "--key", pub, path)
	require.Equal(t, 0, res.code, res.stdout)
	require.Contains(t, res.stdout, "integrity: lines=8 sealed=8 unsealed=0 checkpoints=1")

	res = run(t, "", "log", "reset", path)
	require.Equal(t, exitUsage, res.code)
}

// With retention on, the trail verifies: the removed segments are named
// by signed retention records, and a finish whose start went with them is
// a note, not a problem. Removing one more by hand is a problem.
func TestVerifyRetainedTrail(t *testing.T) {
	dir := t.TempDir()
	res := run(t, "", "keygen", "--name", "cli-test", "--out", filepath.Join(dir, "keys"))
	require.Equal(t, 0, res.code, res.stderr)
	keys, err := integrity.LoadSigningKey(filepath.Join(dir, "keys", "cli-test.key"))
	require.NoError(t, err)
	pub := filepath.Join(dir, "keys", "cli-test.pub")
	sealer, err := integrity.NewSealer(integrity.Settings{Keys: keys, Interval: time.Second})
	require.NoError(t, err)
	path := filepath.Join(dir, "trail", "events.jsonl")
	sink, err := filesink.New(filesink.Options{Path: path, OnWrite: sealer.Wrote,
		Rotation: &filesink.Rotation{MaxBytes: 2 << 10, MaxBackups: 3, BeforeRemove: sealer.Retire}})
	require.NoError(t, err)
	ctx := context.Background()
	// One pair of another session first, so the segments do not end on
	// pair boundaries.
	s0, f0 := op(sessionB, "read", "b000000000000000", 1, 2)
	require.NoError(t, sink.WriteBatch(ctx, sessionB.String(), []byte(canonLines(s0, f0))))
	for i := range 60 {
		// Each start in one batch, its finish in the next: some pairs
		// straddle a rotation.
		s, f := op(sessionA, "exec", fmt.Sprintf("a%015d", i), int64(2*i+1), int64(2*i+2))
		require.NoError(t, sink.WriteBatch(ctx, sessionA.String(), []byte(canonLines(s))))
		require.NoError(t, sink.WriteBatch(ctx, sessionA.String(), []byte(canonLines(f))))
		require.NoError(t, sealer.SealPending(ctx))
	}
	require.Eventually(t, func() bool {
		segs, err := filesink.Segments(path)
		require.NoError(t, err)
		return len(segs) == 3
	}, time.Minute, 10*time.Millisecond)
	require.NoError(t, sink.Close())
	require.NoError(t, sealer.Close(ctx))

	res = run(t, "", "verify", "--key", pub, filepath.Dir(path))
	require.Equal(t, 0, res.code, res.stdout)
	require.Regexp(t, `trail segments=3 retired=[1-9]\d* first_line=\d+`, res.stdout)
	require.Contains(t, res.stdout, "its start was in a segment retention removed")

	segs, err := filesink.Segments(path)
	require.NoError(t, err)
	require.NoError(t, os.Remove(segs[0].Path))
	res = run(t, "", "verify", "--key", pub, filepath.Dir(path))
	require.Equal(t, exitProblems, res.code, res.stdout)
	require.Contains(t, res.stdout, "no retention record says it was removed")
}

// Below a templated directory two sessions' rotated trails swapped whole
// (directories and all) still match their own checkpoints, which name the
// other directory: verify says so, as it does for a file that never
// rotated.
func TestVerifyTrailSwappedSessionDirectories(t *testing.T) {
	dir := t.TempDir()
	res := run(t, "", "keygen", "--name", "cli-test", "--out", filepath.Join(dir, "keys"))
	require.Equal(t, 0, res.code, res.stderr)
	keys, err := integrity.LoadSigningKey(filepath.Join(dir, "keys", "cli-test.key"))
	require.NoError(t, err)
	pub := filepath.Join(dir, "keys", "cli-test.pub")
	base := filepath.Join(dir, "audit")
	sealer, err := integrity.NewSealer(integrity.Settings{Keys: keys, Interval: time.Second, OriginBase: base})
	require.NoError(t, err)
	sink, err := filesink.New(filesink.Options{Path: filepath.Join(base, "{session_id}", "events.jsonl"), OnWrite: sealer.Wrote,
		Rotation: &filesink.Rotation{MaxBytes: 2 << 10}})
	require.NoError(t, err)
	ctx := context.Background()
	for i := range 20 {
		for _, s := range []fmt.Stringer{sessionA, sessionB} {
			st, f := op(sessionA, "exec", fmt.Sprintf("a%015d", i), int64(2*i+1), int64(2*i+2))
			if s == sessionB {
				st, f = op(sessionB, "read", fmt.Sprintf("b%015d", i), int64(2*i+1), int64(2*i+2))
			}
			require.NoError(t, sink.WriteBatch(ctx, s.String(), []byte(canonLines(st, f))))
		}
		require.NoError(t, sealer.SealPending(ctx))
	}
	require.NoError(t, sink.Close())
	require.NoError(t, sealer.Close(ctx))
	a, b := filepath.Join(base, sessionA.String()), filepath.Join(base, sessionB.String())
	segs, err := filesink.Segments(filepath.Join(a, "events.jsonl"))
	require.NoError(t, err)
	require.NotEmpty(t, segs, "the trail rotated")
	res = run(t, "", "verify", "--key", pub, base)
	require.Equal(t, exitOK, res.code, res.stdout+res.stderr)

	require.NoError(t, os.Rename(a, a+".x"))
	require.NoError(t, os.Rename(b, a))
	require.NoError(t, os.Rename(a+".x", b))
	res = run(t, "", "verify", "--key", pub, base)
	require.Equal(t, exitProblems, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, filepath.Join(a, "events.jsonl")+": integrity: the checkpoints name another file (origin \"cli-test/"+sessionB.String()+"/events.jsonl\")")
	res = run(t, "", "verify", "--key", pub, "--allow-renamed", base)
	require.Equal(t, exitOK, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, "integrity: warning: the checkpoints name another file")
}
