package integrity

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zapcore"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
)

// checkTrail streams every part of path's trail through a TrailChecker.
func checkTrail(t testing.TB, path, pubPath string) TrailResult {
	t.Helper()
	v, err := LoadVerifierKey(pubPath)
	require.NoError(t, err)
	tr, err := OpenTrail(path, v)
	require.NoError(t, err)
	return streamTrail(t, tr, v)
}

// rotatedTrail writes total lines in batches of 4 through a rotating file
// sink (a segment per 100 bytes, 8 lines, compressed when compress is set)
// sealed by a sealer every few batches, and closes both. It returns the
// audit path and the public key.
func rotatedTrail(t testing.TB, total int, compress bool, retention int) (string, string, *Keys) {
	t.Helper()
	k, pub := testKeys(t, "test")
	path := filepath.Join(t.TempDir(), "events.jsonl")
	sealer := newSealer(t, k)
	rot := &filesink.Rotation{MaxBytes: 100, Compress: compress, MaxBackups: retention, BeforeRemove: sealer.Retire}
	var rotErrs []error
	rot.OnError = func(_ string, err error) { rotErrs = append(rotErrs, err) }
	sink := sealedSink(t, path, rot, sealer)
	for i := 0; i < total; i += 4 {
		require.NoError(t, sink.WriteBatch(bg, "s", []byte(lines(i, min(i+3, total-1)))))
		if i%12 == 0 {
			require.NoError(t, sealer.SealPending(bg))
		}
	}
	require.NoError(t, sealer.SealPending(bg))
	if compress {
		require.Eventually(t, func() bool {
			segs, err := filesink.Segments(path)
			require.NoError(t, err)
			for _, s := range segs {
				if _, err := os.Lstat(s.Plain); err == nil || !s.Compressed {
					return false
				}
			}
			return len(segs) > 0
		}, time.Minute, 10*time.Millisecond)
	}
	require.NoError(t, sink.Close())
	require.NoError(t, sealer.Close(bg))
	require.Empty(t, rotErrs)
	return path, pub, k
}

func TestRotatedTrailIsOneLog(t *testing.T) {
	for _, compress := range []bool{false, true} {
		t.Run(fmt.Sprintf("compress=%v", compress), func(t *testing.T) {
			path, pub, _ := rotatedTrail(t, 200, compress, 0)
			segs, err := filesink.Segments(path)
			require.NoError(t, err)
			require.Greater(t, len(segs), 5)
			res := checkTrail(t, path, pub)
			require.Empty(t, res.Failures)
			require.Equal(t, int64(200), res.Lines)
			require.Equal(t, int64(200), res.Sealed, "one tree over every segment: the newest checkpoint covers all lines")
			require.Zero(t, res.Unsealed)

			v, err := LoadVerifierKey(pub)
			require.NoError(t, err)
			sl, err := LoadSegmentLog(path, v)
			require.NoError(t, err)
			require.Len(t, sl.Segments, len(segs))
			origins := map[string]bool{}
			for i, rec := range sl.Segments {
				require.Equal(t, filepath.Base(segs[i].Plain), rec.Name)
				origins[rec.Origin] = true
			}
			require.Equal(t, map[string]bool{"test/events.jsonl": true}, origins, "the origin stays")
		})
	}
}

// A file rotated on time with no batch after it (no write to report) is
// sealed and recorded as a segment the same way, on a templated-like path
// the sealer does not watch.
func TestIdleRotationIsSealed(t *testing.T) {
	k, pub := testKeys(t, "test")
	path := filepath.Join(t.TempDir(), "events.jsonl")
	sealer := newSealer(t, k)
	rotated := make(chan string, 8)
	rot := &filesink.Rotation{Interval: 50 * time.Millisecond, OnRotate: func(p, seg string) {
		sealer.Rotated(p, seg)
		rotated <- seg
	}}
	var rotErrs []error
	rot.OnError = func(_ string, err error) { rotErrs = append(rotErrs, err) }
	sink, err := filesink.New(filesink.Options{Path: path, Rotation: rot, OnWrite: sealer.Wrote})
	require.NoError(t, err)
	require.NoError(t, sink.WriteBatch(bg, "s", []byte(lines(0, 5))))
	require.NoError(t, sealer.SealPending(bg))
	var seg string
	select {
	case seg = <-rotated:
	case <-time.After(time.Minute):
		t.Fatal("the idle file was not rotated")
	}
	require.NoError(t, sealer.SealPending(bg), "the round after the rotation seals the segment")
	v, err := LoadVerifierKey(pub)
	require.NoError(t, err)
	sl, err := LoadSegmentLog(path, v)
	require.NoError(t, err)
	require.Len(t, sl.Segments, 1)
	require.Equal(t, filepath.Base(seg), sl.Segments[0].Name)
	require.Equal(t, int64(6), sl.Segments[0].Count)
	require.NoError(t, sink.Close())
	require.NoError(t, sealer.Close(bg))
	require.Empty(t, rotErrs)
	res := checkTrail(t, path, pub)
	require.Empty(t, res.Failures)
	require.Equal(t, int64(6), res.Sealed)
	require.Zero(t, res.Unsealed)
}

// Each attack on a rotated, sealed trail is found by the trail check.
func TestTrailAttacks(t *testing.T) {
	for _, tc := range []struct {
		name   string
		attack func(t *testing.T, path string, segs []filesink.Segment)
		want   string
	}{
		{"segment dropped", func(t *testing.T, _ string, segs []filesink.Segment) {
			require.NoError(t, os.Remove(segs[2].Path))
		}, "is missing, and no retention record says it was removed"},
		{"segments swapped", func(t *testing.T, _ string, segs []filesink.Segment) {
			a, b := segs[1].Path, segs[3].Path
			require.NoError(t, os.Rename(a, a+".x"))
			require.NoError(t, os.Rename(b, a))
			require.NoError(t, os.Rename(a+".x", b))
		}, "do not match the root hash"},
		{"line appended to a rotated segment", func(t *testing.T, _ string, segs []filesink.Segment) {
			appendLocked(t, segs[1].Path, "{\"n\":9999}\n")
		}, "holds 9 lines, its signed segment record 8"},
		{"line appended to a compressed segment", func(t *testing.T, _ string, segs []filesink.Segment) {
			rewriteZstd(t, segs[2].Path+".zst", func(b []byte) []byte { return append(b, "{\"n\":9999}\n"...) })
			require.NoError(t, os.Remove(segs[2].Path))
		}, "holds 9 lines, its signed segment record 8"},
		{"line edited in a compressed segment", func(t *testing.T, _ string, segs []filesink.Segment) {
			rewriteZstd(t, segs[2].Path+".zst", func(b []byte) []byte { return bytes.Replace(b, []byte(`"n":`), []byte(`"N":`), 1) })
			require.NoError(t, os.Remove(segs[2].Path))
		}, "do not match the root hash"},
		{"plain copy edited beside its compressed segment", func(t *testing.T, _ string, segs []filesink.Segment) {
			b, err := os.ReadFile(segs[2].Path)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(segs[2].Path, bytes.Replace(b, []byte(`"n":`), []byte(`"N":`), 1), 0o600))
		}, "a plain copy of compressed segment"},
		{"active file cut back", func(t *testing.T, path string, _ []filesink.Segment) {
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(path, data[:bytes.IndexByte(data, '\n')+1], 0o600))
		}, "cut off the end"},
		{"newest segment and active file removed", func(t *testing.T, path string, segs []filesink.Segment) {
			require.NoError(t, os.Remove(path))
			require.NoError(t, os.Remove(segs[len(segs)-1].Path))
		}, "is missing"},
		{"foreign segment slipped in", func(t *testing.T, path string, segs []filesink.Segment) {
			name := strings.Replace(segs[1].Path, fmt.Sprintf("-%06d.", segs[1].Seq), fmt.Sprintf("-%06d5.", segs[1].Seq), 1)
			require.NoError(t, os.WriteFile(name, []byte(lines(1, 2)), 0o600))
		}, "do not match the root hash"},
		{"segment replaced by a symbolic link", func(t *testing.T, path string, segs []filesink.Segment) {
			elsewhere := filepath.Join(t.TempDir(), "seg")
			require.NoError(t, os.Rename(segs[2].Path, elsewhere))
			require.NoError(t, os.Symlink(elsewhere, segs[2].Path))
		}, "is a symbolic link, not followed"},
		{"segment records removed, the lines whole", func(t *testing.T, path string, _ []filesink.Segment) {
			require.NoError(t, os.Remove(SegmentsPath(path)))
		}, "which no segment record names, ends at line 12 of the log, but 100 lines were sealed"},
		{"segment records removed and a segment dropped", func(t *testing.T, path string, segs []filesink.Segment) {
			require.NoError(t, os.Remove(SegmentsPath(path)))
			require.NoError(t, os.Remove(segs[0].Path))
		}, "do not match the root hash"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, pub, _ := rotatedTrail(t, 100, false, 0)
			segs, err := filesink.Segments(path)
			require.NoError(t, err)
			require.Greater(t, len(segs), 4)
			if strings.Contains(tc.name, "compressed") {
				// The segment compressed beside its plain file.
				raw, err := os.ReadFile(segs[2].Path)
				require.NoError(t, err)
				writeZstdFile(t, segs[2].Path+".zst", raw)
			}
			tc.attack(t, path, segs)
			res := checkTrail(t, path, pub)
			require.NotEmpty(t, res.Failures, "attack not detected")
			require.Contains(t, strings.Join(res.Failures, "\n"), tc.want)
		})
	}
}

// A crash between compressing a segment and removing its plain copy
// leaves both; while they are equal the trail verifies.
// After a bad segment, the segments that follow are checked from their
// own signed start, so only the bad one is named, and the checkpoints
// after it are still checked against the lines.
func TestTrailNamesOnlyTheBadSegment(t *testing.T) {
	for _, tc := range []struct {
		name   string
		attack func(t *testing.T, segs []filesink.Segment)
	}{
		{"lines reordered", func(t *testing.T, segs []filesink.Segment) {
			b, err := os.ReadFile(segs[1].Path)
			require.NoError(t, err)
			ls := bytes.SplitAfter(b, []byte("\n"))
			ls[0], ls[1] = ls[1], ls[0]
			require.NoError(t, os.WriteFile(segs[1].Path, bytes.Join(ls, nil), 0o600))
		}},
		{"replaced by a copy of the next", func(t *testing.T, segs []filesink.Segment) {
			b, err := os.ReadFile(segs[2].Path)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(segs[1].Path, b, 0o600))
		}},
		{"line repeated", func(t *testing.T, segs []filesink.Segment) {
			b, err := os.ReadFile(segs[1].Path)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(segs[1].Path, append(b, b[:bytes.IndexByte(b, '\n')+1]...), 0o600))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, pub, _ := rotatedTrail(t, 100, false, 0)
			segs, err := filesink.Segments(path)
			require.NoError(t, err)
			require.Greater(t, len(segs), 4)
			tc.attack(t, segs)
			res := checkTrail(t, path, pub)
			require.NotEmpty(t, res.Failures, "attack not detected")
			for _, f := range res.Failures {
				require.True(t, strings.HasPrefix(f, segs[1].Path+":"), "a failure names another file: %s", f)
			}
			require.EqualValues(t, 100, res.Sealed, "the checkpoints after the bad segment are checked")
			require.Zero(t, res.Unsealed)
			proven := map[string]bool{}
			for _, p := range res.Proofs {
				proven[p.Path] = true
			}
			require.False(t, proven[segs[1].Path])
			for _, s := range segs[2:] {
				require.True(t, proven[s.Path], "%s is intact", s.Path)
			}
		})
	}
}

func TestTrailWithAnEqualPlainCopyVerifies(t *testing.T) {
	path, pub, _ := rotatedTrail(t, 100, false, 0)
	segs, err := filesink.Segments(path)
	require.NoError(t, err)
	raw, err := os.ReadFile(segs[2].Path)
	require.NoError(t, err)
	writeZstdFile(t, segs[2].Path+".zst", raw)
	res := checkTrail(t, path, pub)
	require.Empty(t, res.Failures)
	require.Equal(t, int64(100), res.Lines)
}

// Retention leaves a trail that still verifies: the signed records say
// which segments went, and the oldest one kept verifies alone from its
// signed compact range.
func TestRetainedTrailVerifies(t *testing.T) {
	path, pub, _ := rotatedTrail(t, 200, true, 3)
	segs, err := filesink.Segments(path)
	require.NoError(t, err)
	require.Len(t, segs, 3)
	v, err := LoadVerifierKey(pub)
	require.NoError(t, err)
	tr, err := OpenTrail(path, v)
	require.NoError(t, err)
	require.Positive(t, tr.Retired)
	res := checkTrail(t, path, pub)
	require.Empty(t, res.Failures)
	require.Positive(t, res.First)
	require.Equal(t, int64(200), res.First+res.Lines)
	require.Equal(t, int64(200), res.Sealed)

	// Removing one more by hand is not retention.
	require.NoError(t, os.Remove(segs[0].Path))
	res = checkTrail(t, path, pub)
	require.Contains(t, strings.Join(res.Failures, "\n"), "no retention record says it was removed")
}

func writeZstdFile(t *testing.T, name string, data []byte) {
	t.Helper()
	var b bytes.Buffer
	enc, err := zstd.NewWriter(&b)
	require.NoError(t, err)
	_, err = enc.Write(data)
	require.NoError(t, err)
	require.NoError(t, enc.Close())
	require.NoError(t, os.WriteFile(name, b.Bytes(), 0o600))
}

func rewriteZstd(t *testing.T, name string, edit func([]byte) []byte) {
	t.Helper()
	writeZstdFile(t, name, edit(readZstdFile(t, name)))
}

// readZstdFile returns the decompressed content of the zstd file name.
func readZstdFile(t testing.TB, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(name)
	require.NoError(t, err)
	dec, err := zstd.NewReader(bytes.NewReader(raw))
	require.NoError(t, err)
	data, err := io.ReadAll(dec)
	dec.Close()
	require.NoError(t, err)
	return data
}

// A file that holds lines but lost every sidecar (moved aside, sidecars
// removed, moved back) is refused at start, naming the file; a new file is
// not.
func TestStartRefusesAFileWithoutHistory(t *testing.T) {
	k, _ := testKeys(t, "test")
	path := auditPath(t)
	s := newSealer(t, k)
	require.NoError(t, s.SealAtStart(bg, path), "no file yet: a new log")
	appendLocked(t, path, lines(1, 3))
	require.NoError(t, s.Seal(bg, path))
	for _, sc := range []string{StorePath(path), CheckpointsPath(path)} {
		require.NoError(t, os.Remove(sc))
	}
	err := newSealer(t, k).SealAtStart(bg, path)
	require.ErrorIs(t, err, ErrNoHistory)
	require.ErrorContains(t, err, path)
	require.ErrorContains(t, err, "sandboxaudit log reset")
	_, statErr := os.Lstat(CheckpointsPath(path))
	require.True(t, os.IsNotExist(statErr), "a refused start wrote a sidecar")
}

// The likeliest file without a history is one written before integrity was
// turned on (the quick start's, say): the refusal names that case first, so
// an operator does not read it as tampering, and gives the command.
func TestStartRefusalNamesAFileWrittenWithoutIntegrity(t *testing.T) {
	k, _ := testKeys(t, "test")
	path := auditPath(t)
	appendLocked(t, path, lines(1, 2))
	err := newSealer(t, k).SealAtStart(bg, path)
	require.ErrorIs(t, err, ErrNoHistory)
	require.ErrorContains(t, err, "written before integrity was turned on")
	require.ErrorContains(t, err, "sandboxaudit log reset --signing-key KEY "+path)
}

// A file cut back while the collector was stopped, sidecars kept, is
// refused at start.
// At start, a rotated log whose checkpoints sidecar was removed is
// refused (its segment records are signed history), and a recorded
// segment missing without a retention record is an ERROR naming it.
func TestStartChecksTheSegmentRecords(t *testing.T) {
	t.Run("checkpoints removed", func(t *testing.T) {
		path, _, k := rotatedTrail(t, 100, false, 0)
		require.NoError(t, os.Remove(CheckpointsPath(path)))
		s, logs := observedSealer(t, k, zapcore.ErrorLevel)
		err := s.SealAtStart(bg, path)
		require.ErrorIs(t, err, ErrNoHistory)
		require.ErrorContains(t, err, CheckpointsPath(path)+" is missing or empty")
		require.ErrorContains(t, err, "sandboxaudit log reset")
		require.Equal(t, 1, logs.FilterMessage("integrity: file not sealed").Len())
		_, statErr := os.Lstat(CheckpointsPath(path))
		require.True(t, os.IsNotExist(statErr), "a refused start wrote a checkpoint")
	})
	t.Run("segments sidecar removed", func(t *testing.T) {
		path, _, k := rotatedTrail(t, 100, false, 0)
		segs, err := filesink.Segments(path)
		require.NoError(t, err)
		require.NoError(t, os.Remove(SegmentsPath(path)))
		err = newSealer(t, k).SealAtStart(bg, path)
		require.ErrorIs(t, err, ErrTampered)
		require.ErrorContains(t, err, "the closed segment "+filepath.Base(segs[0].Plain)+", which no segment record names, ends at line ")
		require.ErrorContains(t, err, "events.jsonl.segments removed or cut")
	})
	t.Run("segment missing", func(t *testing.T) {
		path, _, k := rotatedTrail(t, 100, false, 0)
		segs, err := filesink.Segments(path)
		require.NoError(t, err)
		require.NoError(t, os.Remove(segs[1].Path))
		s, logs := observedSealer(t, k, zapcore.ErrorLevel)
		require.NoError(t, s.SealAtStart(bg, path))
		missing := logs.FilterMessage("integrity: a closed segment the log records is missing, and no retention record says it was removed").All()
		require.Len(t, missing, 1)
		require.Equal(t, segs[1].Plain, missing[0].ContextMap()["segment"])
	})
	t.Run("retention's removals are no error", func(t *testing.T) {
		path, _, k := rotatedTrail(t, 100, false, 2)
		s, logs := observedSealer(t, k, zapcore.ErrorLevel)
		require.NoError(t, s.SealAtStart(bg, path))
		require.Zero(t, logs.Len(), "%v", logs.All())
	})
}

func TestStartRefusesACutBackTrail(t *testing.T) {
	path, _, k := rotatedTrail(t, 100, false, 0)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data[:bytes.IndexByte(data, '\n')+1], 0o600))
	err = newSealer(t, k).SealAtStart(bg, path)
	require.ErrorIs(t, err, ErrTampered)
}

// A collector killed right after a rotation's rename, before its sealer
// recorded the segment (and after it had sealed some of the segment's
// lines as the active file's): the restart seals the segment into the log
// and records it, and the trail verifies as one log.
func TestRestartRecordsASegmentRotatedBeforeTheKill(t *testing.T) {
	path, pub, next := restartAfterAnUnsealedRotation(t, lines(100, 103), lines(104, 105))
	v, err := LoadVerifierKey(pub)
	require.NoError(t, err)
	sl, err := LoadSegmentLog(path, v)
	require.NoError(t, err)
	require.Equal(t, filepath.Base(next), sl.Segments[len(sl.Segments)-1].Name)
	require.Equal(t, int64(104), sl.End())
}

// A segment whose last line is torn (a writer that had the path open before
// the rotation was killed mid-line) has the line cut off and kept beside it
// when it is sealed, so the trail holds whole lines and verifies.
func TestSealCutsATornLineOffASegment(t *testing.T) {
	const torn = `{"n":104,"to`
	_, _, next := restartAfterAnUnsealedRotation(t, lines(100, 103)+torn, lines(105, 106))
	seg, err := os.ReadFile(next)
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(string(seg), lines(99, 103)), "%q", seg)
	kept, err := filepath.Glob(next + fsutil.TornSuffix + "*")
	require.NoError(t, err)
	require.Len(t, kept, 1)
	b, err := os.ReadFile(kept[0])
	require.NoError(t, err)
	require.Equal(t, torn, string(b))
}

// restartAfterAnUnsealedRotation writes a rotated trail of 100 lines, then,
// as a collector killed before its next seal would leave it, appends before
// to the active file, renames it to the next segment as the sink does and
// appends after to a new active file. A new sealer's start seals it all,
// and the trail must verify with 106 lines sealed. It returns the audit
// path, the public key and the new segment.
func restartAfterAnUnsealedRotation(t *testing.T, before, after string) (path, pub, next string) {
	t.Helper()
	path, pub, k := rotatedTrail(t, 100, false, 0)
	segs, err := filesink.Segments(path)
	require.NoError(t, err)
	last := segs[len(segs)-1]
	appendLocked(t, path, before)
	next = strings.Replace(last.Path, fmt.Sprintf("-%06d.", last.Seq), fmt.Sprintf("-%06d.", last.Seq+1), 1)
	require.NoError(t, os.Rename(path, next))
	appendLocked(t, path, after)

	s := newSealer(t, k)
	require.NoError(t, s.SealAtStart(bg, path))
	require.NoError(t, s.Close(bg))
	res := checkTrail(t, path, pub)
	require.Empty(t, res.Failures)
	require.Equal(t, int64(106), res.Lines)
	require.Equal(t, int64(106), res.Sealed)
	return path, pub, next
}
