package integrity

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
)

// twoWriters is a path written by two collectors' file sinks, both
// rotating past 100 bytes: mine, whose sealer seals the log, and other,
// whose sealer does not own it, so it only writes (and rotates).
type twoWriters struct {
	path        string
	sealer      *Sealer
	mine, other *filesink.Sink
	n           int // the next line's number
}

func newTwoWriters(t *testing.T, k *Keys, sealer *Sealer) *twoWriters {
	t.Helper()
	w := &twoWriters{path: filepath.Join(t.TempDir(), "events.jsonl"), sealer: sealer}
	var err error
	w.mine, err = filesink.New(filesink.Options{Path: w.path, Rotation: reportedRotation(sealer),
		OnWrite: sealer.Wrote, OnReplaced: sealer.Replaced, OnRotatedByOther: sealer.RotatedByOther, OnOpened: sealer.Opened,
		BeforeCreate: sealer.SealNew})
	require.NoError(t, err)
	require.NoError(t, sealer.SealAtStart(bg, w.path))
	sealer.Watch(w.path)
	w.other, err = filesink.New(filesink.Options{Path: w.path, Rotation: &filesink.Rotation{MaxBytes: 100}})
	require.NoError(t, err)
	return w
}

func (w *twoWriters) write(t *testing.T, sink *filesink.Sink) {
	t.Helper()
	require.NoError(t, sink.WriteBatch(bg, "s", []byte(lines(w.n, w.n+3))))
	w.n += 4
}

// Two collectors write one templated path: one seals a session's file,
// the other only writes to it, and rotates it under the writers' flock
// as the sealing collector's own sink would. The sealing collector's sink
// found the file it appended to gone from the path and reported it moved
// away: the sealer logged an ERROR and sealed the path no more in this
// process. It is a rotation, sealed as one.
func TestRotationByAnotherWriterIsSealedAsARotation(t *testing.T) {
	k, pub := testKeys(t, "test")
	sealer, logs := observedSealer(t, k, zapcore.InfoLevel)
	w := newTwoWriters(t, k, sealer)
	for round := range 6 {
		w.write(t, w.mine)
		w.write(t, w.other)
		w.write(t, w.other)
		w.write(t, w.mine)
		if round%2 == 0 {
			require.NoError(t, sealer.SealPending(bg))
		}
	}
	w.closeQuiet(t, logs)
	require.NotEmpty(t, logs.FilterMessageSnippet("another writer of the path").All())
	w.verify(t, pub)
}

// The other collector rotates the file sealed last, and the files after
// it, while the sealing collector writes nothing: the file sealed last,
// found under a segment name no rotation of its sink made (plain, or
// compressed by the other collector since), tells the sealer that another
// writer rotates the path, and the segments after it are the log's too.
func TestRotationsByAnotherWriterAloneAreSealed(t *testing.T) {
	for _, compressed := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "compressed"}[compressed], func(t *testing.T) {
			k, pub := testKeys(t, "test")
			sealer, logs := observedSealer(t, k, zapcore.InfoLevel)
			w := newTwoWriters(t, k, sealer)
			// The sealing collector's sink rotates once: from then on
			// the sealer takes the segments its sink reports.
			for range 4 {
				w.write(t, w.mine)
				require.NoError(t, sealer.SealPending(bg))
			}
			for range 3 {
				for range 10 {
					w.write(t, w.other)
				}
				if compressed {
					compressUnrecorded(t, w.path, pub)
				}
				require.NoError(t, sealer.SealPending(bg))
			}
			w.closeQuiet(t, logs)
			w.verify(t, pub)
		})
	}
}

// compressUnrecorded compresses the plain segments of path no segment
// record names yet, as the other collector's maintenance would.
func compressUnrecorded(t *testing.T, path, pub string) {
	t.Helper()
	segs, err := filesink.Segments(path)
	require.NoError(t, err)
	v, err := LoadVerifierKey(pub)
	require.NoError(t, err)
	sl, err := LoadSegmentLog(path, v)
	require.NoError(t, err)
	recorded := map[string]bool{}
	for _, r := range sl.Segments {
		recorded[r.Name] = true
	}
	for _, s := range segs {
		if s.Compressed || recorded[filepath.Base(s.Plain)] {
			continue
		}
		require.NoError(t, filesink.CompressFile(bg, s.Plain, s.Path+filesink.ZstdSuffix))
		require.NoError(t, os.Remove(s.Plain))
	}
}

func (w *twoWriters) close(t *testing.T) {
	t.Helper()
	require.NoError(t, w.other.Close())
	require.NoError(t, w.mine.Close())
	require.NoError(t, w.sealer.Close(bg))
}

// closeQuiet closes both sinks and checks that nothing was logged at
// ERROR or above.
func (w *twoWriters) closeQuiet(t *testing.T, logs *observer.ObservedLogs) {
	t.Helper()
	w.close(t)
	for _, e := range logs.All() {
		require.Less(t, e.Level, zapcore.ErrorLevel, "logged: %s %v", e.Message, e.ContextMap())
	}
}

// verify checks that the trail, and each segment alone, verifies, with
// every line written sealed.
func (w *twoWriters) verify(t *testing.T, pub string) {
	t.Helper()
	segs, err := filesink.Segments(w.path)
	require.NoError(t, err)
	require.Greater(t, len(segs), 2)
	v, err := LoadVerifierKey(pub)
	require.NoError(t, err)
	sl, err := LoadSegmentLog(w.path, v)
	require.NoError(t, err)
	require.Len(t, sl.Segments, len(segs), "every segment is recorded")
	tr, err := OpenTrail(w.path, v)
	require.NoError(t, err)
	require.Empty(t, tr.Problems)
	res := streamTrail(t, tr, v)
	require.Empty(t, res.Failures)
	require.EqualValues(t, w.n, res.Sealed, "every line is sealed")
	for _, s := range segs {
		require.Empty(t, checkAlone(t, s.Path, pub).Failures, s.Path)
	}
}

// The other collector rotates the file sealed last just as a round turns
// from the closed segments to the active file: the round opens the new
// file at the path, and the segment before it is the file it held. It
// was passed over as foreign, and the new file's first line was checked
// against the segment's hash: the log was refused as tampered with.
func TestRotationByAnotherWriterAsARoundOpensTheActiveFile(t *testing.T) {
	k, pub := testKeys(t, "test")
	sealer, logs := observedSealer(t, k, zapcore.InfoLevel)
	armed := false
	var w *twoWriters
	sealer.set.beforeActive = func() {
		if !armed {
			return
		}
		armed = false
		before, err := filesink.Segments(w.path)
		require.NoError(t, err)
		for range 10 {
			w.write(t, w.other)
			if segs, err := filesink.Segments(w.path); err == nil && len(segs) > len(before) {
				return
			}
		}
		t.Fatal("the other collector's sink did not rotate")
	}
	w = newTwoWriters(t, k, sealer)
	// The sealing collector's sink rotates once: from then on the sealer
	// takes the segments its sink reports.
	for range 4 {
		w.write(t, w.mine)
		require.NoError(t, sealer.SealPending(bg))
	}
	armed = true
	require.NoError(t, sealer.SealPending(bg))
	require.False(t, armed)
	for range 3 {
		w.write(t, w.other)
		require.NoError(t, sealer.SealPending(bg))
	}
	w.closeQuiet(t, logs)
	w.verify(t, pub)
}

// The sealing collector's sink rotates, and the other collector rotates
// the new file before the sealer's next round and before the sink writes
// to it again: the segment is neither reported nor the file sealed last.
// It was passed over as foreign, the file after it sealed in its place,
// and the log refused once the sink reported it. It is the file the sink
// opened at the path: another writer's rotation of a file of the log.
func TestRotationByAnotherWriterOfTheSinksNewFile(t *testing.T) {
	k, pub := testKeys(t, "test")
	sealer, logs := observedSealer(t, k, zapcore.InfoLevel)
	w := newTwoWriters(t, k, sealer)
	w.write(t, w.mine)
	require.NoError(t, sealer.SealPending(bg))
	untilRotated := func(sink *filesink.Sink) {
		t.Helper()
		before, err := filesink.Segments(w.path)
		require.NoError(t, err)
		for range 10 {
			w.write(t, sink)
			if segs, err := filesink.Segments(w.path); err == nil && len(segs) > len(before) {
				return
			}
		}
		t.Fatal("the sink did not rotate")
	}
	untilRotated(w.mine)
	untilRotated(w.other)
	require.NoError(t, sealer.SealPending(bg))
	for range 3 {
		w.write(t, w.mine)
		w.write(t, w.other)
		require.NoError(t, sealer.SealPending(bg))
	}
	w.closeQuiet(t, logs)
	w.verify(t, pub)
}

// A templated path makes a file per session: what the sealer keeps of the
// paths another writer rotated stays within the idle bound too.
func TestPathsRotatedByAnotherWriterKeepTheIdleBound(t *testing.T) {
	k, _ := testKeys(t, "test")
	s, _ := lockingSealer(t, k)
	dir := t.TempDir()
	const perRound = 100
	const files = maxIdleLogs + perRound
	for done := 0; done < files; {
		for range min(perRound, files-done) {
			p := sessionFile(dir, done)
			appendLocked(t, p, lines(1, 3))
			seg := filepath.Join(dir, fmt.Sprintf("s%06d-20200101T000000Z-000001.jsonl", done))
			require.NoError(t, os.Rename(p, seg))
			s.RotatedByOther(p, seg)
			done++
		}
		require.NoError(t, s.SealPending(bg))
	}
	require.LessOrEqual(t, len(s.logs), maxIdleLogs)
	require.LessOrEqual(t, len(s.rotatedByOthers), maxIdleLogs)
	require.LessOrEqual(t, len(s.rotations), maxIdleLogs)
	require.NoError(t, s.Close(bg))
}

// The collector that only writes a path (another holds its owner lock)
// reports its sink's rotations, and the other's, that it never records:
// it keeps none of them from one round to the next.
func TestRotationsOfALogOwnedElsewhereAreNotKept(t *testing.T) {
	k, _ := testKeys(t, "test")
	path, owner, _ := sealedLog(t, k, 3)
	defer func() { require.NoError(t, owner.Close(bg)) }()
	s, _ := lockingSealer(t, k)
	for i := range 3 {
		s.Rotated(path, filepath.Join(filepath.Dir(path), fmt.Sprintf("mine-%d", i)))
		s.RotatedByOther(path, filepath.Join(filepath.Dir(path), fmt.Sprintf("other-%d", i)))
		require.ErrorIs(t, s.SealPending(bg), ErrLogOwned)
	}
	require.Empty(t, s.reportedRotations(path))
	require.NoError(t, s.Close(bg))
}

// The other writer appends after this collector's sink last wrote to the
// path and rotates on: a round seals a path its sink wrote or a rotation
// was reported for, and a session's file is not watched as a plain path
// is, so nothing made a round take those lines. The last round, at Close,
// takes every path another writer rotates too.
func TestTheLastRoundSealsWhatAnotherWriterAppended(t *testing.T) {
	k, pub := testKeys(t, "test")
	sealer, logs := observedSealer(t, k, zapcore.InfoLevel)
	w := newTwoWriters(t, k, sealer)
	sealer.mu.Lock()
	delete(sealer.watched, w.path) // as a {session_id} file
	sealer.mu.Unlock()
	w.write(t, w.mine)
	for range 10 { // until the other rotates the file mine wrote
		w.write(t, w.other)
		if segs, err := filesink.Segments(w.path); err == nil && len(segs) > 0 {
			break
		}
	}
	w.write(t, w.mine) // finds it rotated by the other
	require.NoError(t, sealer.SealPending(bg))
	require.NotEmpty(t, logs.FilterMessageSnippet("another writer of the path").All())
	for range 4 { // rotating on, and lines after its last rotation
		w.write(t, w.other)
	}
	w.closeQuiet(t, logs)
	w.verify(t, pub)
}
