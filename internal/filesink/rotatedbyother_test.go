package filesink

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// hooked is a sink at path rotating past 100 bytes that records what it
// reports to OnReplaced and OnRotatedByOther.
type hooked struct {
	sink             *Sink
	replaced, others []string
}

func newHooked(t *testing.T, path string) *hooked {
	t.Helper()
	h := &hooked{}
	var err error
	h.sink, err = New(Options{Path: path, Rotation: &Rotation{MaxBytes: 100},
		OnReplaced:       func(p string, _ int64) { h.replaced = append(h.replaced, p) },
		OnRotatedByOther: func(_, seg string) { h.others = append(h.others, filepath.Base(seg)) }})
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.sink.Close() })
	return h
}

// rotateUnder makes other (a second collector's sink) rotate the file
// mine appended to last, and returns the segment it made of it.
func rotateUnder(t *testing.T, path string, mine *hooked, other *Sink) Segment {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, mine.sink.WriteBatch(ctx, "s", []byte("{\"a\":1}\n")))
	for i := 0; i < 20; i++ {
		require.NoError(t, other.WriteBatch(ctx, "s", []byte("{\"b\":\"0123456789\"}\n")))
		if segs, err := Segments(path); err == nil && len(segs) > 0 {
			return segs[0]
		}
	}
	t.Fatal("the other sink did not rotate")
	return Segment{}
}

// Another writer of the path rotated the file the sink appended to: it
// is reported as that rotation's segment, plain or already compressed,
// never as a file moved away.
func TestFileRotatedByAnotherWriterIsReportedAsItsSegment(t *testing.T) {
	for _, compressed := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "events.jsonl")
		mine := newHooked(t, path)
		other, err := New(Options{Path: path, Rotation: &Rotation{MaxBytes: 100}})
		require.NoError(t, err)
		seg := rotateUnder(t, path, mine, other)
		require.NoError(t, other.Close())
		if compressed {
			require.NoError(t, CompressFile(context.Background(), seg.Plain, seg.Plain+ZstdSuffix))
			require.NoError(t, os.Remove(seg.Plain))
		}
		require.NoError(t, mine.sink.WriteBatch(context.Background(), "s", []byte("{\"a\":2}\n")))
		require.Empty(t, mine.replaced, "compressed: %v", compressed)
		require.Equal(t, []string{filepath.Base(seg.Plain)}, mine.others, "compressed: %v", compressed)
	}
}

// A file moved out of the directory, or replaced, is no rotation.
func TestFileMovedAwayIsNotTakenForARotation(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "events.jsonl")
	mine := newHooked(t, path)
	ctx := context.Background()
	require.NoError(t, mine.sink.WriteBatch(ctx, "s", []byte("{\"a\":1}\n")))
	require.NoError(t, os.Rename(path, filepath.Join(t.TempDir(), "away.jsonl")))
	require.NoError(t, mine.sink.WriteBatch(ctx, "s", []byte("{\"a\":2}\n")))
	// A copy under a segment name is another file.
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "events-20261206T061500Z-000001.jsonl"), data, 0o600))
	require.NoError(t, os.Remove(path))
	require.NoError(t, mine.sink.WriteBatch(ctx, "s", []byte("{\"a\":3}\n")))
	require.Equal(t, []string{path, path}, mine.replaced)
	require.Empty(t, mine.others)
}

// A file cut back below the lines the sink appended, then given a segment
// name (plain, or compressed with its plain name removed), is no rotation:
// a rotation renames a file whole.
func TestFileCutBackUnderASegmentNameIsNotTakenForARotation(t *testing.T) {
	for _, compressed := range []bool{false, true} {
		dir := t.TempDir()
		path := filepath.Join(dir, "events.jsonl")
		mine := newHooked(t, path)
		ctx := context.Background()
		require.NoError(t, mine.sink.WriteBatch(ctx, "s", []byte("{\"a\":1}\n{\"a\":2}\n")))
		require.NoError(t, os.Truncate(path, int64(len("{\"a\":1}\n"))))
		seg := filepath.Join(dir, "events-20261206T061500Z-000001.jsonl")
		require.NoError(t, os.Rename(path, seg))
		if compressed {
			require.NoError(t, CompressFile(ctx, seg, seg+ZstdSuffix))
			require.NoError(t, os.Remove(seg))
		}
		require.NoError(t, mine.sink.WriteBatch(ctx, "s", []byte("{\"a\":3}\n")))
		require.Equal(t, []string{path}, mine.replaced, "compressed: %v", compressed)
		require.Empty(t, mine.others, "compressed: %v", compressed)
	}
}
