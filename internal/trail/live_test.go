package trail

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A live trail's closed segment is compressed while the tools read the
// segments before it: listed plain, it is gone by the time it is opened,
// with the same lines in its .zst beside it. The read goes on with the
// .zst, as if it had been listed so.
func TestASegmentCompressedAfterTheListingIsReadFromItsZst(t *testing.T) {
	dir := t.TempDir()
	_, first := writeTrail(t, 2, 40)
	_, second := writeTrail(t, 3, 30)
	plain := filepath.Join(dir, "events-20261206T061500Z-000001.jsonl")
	require.NoError(t, os.WriteFile(plain, first, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "events.jsonl"), second, 0o600))
	sources, err := Expand([]string{dir})
	require.NoError(t, err)
	require.Equal(t, []string{plain, filepath.Join(dir, "events.jsonl")}, sources)

	require.NoError(t, os.WriteFile(plain+".zst", compress(t, first), 0o600))
	require.NoError(t, os.Remove(plain))

	var bads []string
	opts := Options{Bad: func(source string, _ int64, reason string) { bads = append(bads, source+": "+reason) }}
	lines, st := readLines(t, sources, opts)
	assert.Empty(t, bads)
	want, wst := readLines(t, []string{plain + ".zst", sources[1]}, Options{})
	assert.Equal(t, wst, st)
	assert.True(t, slices.Equal(want, lines), "the lines as if the .zst had been listed")
	_, sst, err := ReadSessions(context.Background(), sources, opts)
	require.NoError(t, err)
	assert.Equal(t, int64(0), sst.Bad)

	// A file with no segment beside it, gone, is still an error.
	alone, _ := writeTrail(t, 1, 1)
	require.NoError(t, os.Remove(alone))
	_, err = ReadOps(context.Background(), []string{alone}, opts, func(*Op) error { return nil })
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// A trail's directory named on the command line through a symbolic link
// (/var/log/sandbox pointing at a data disk) is read as the directory;
// links inside it are still left out.
func TestALinkToATrailDirectoryNamedOnTheCommandLineIsRead(t *testing.T) {
	dir := t.TempDir()
	p, _ := writeTrail(t, 1, 3)
	content, err := os.ReadFile(p)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "events.jsonl"), content, 0o600))
	require.NoError(t, os.Symlink(p, filepath.Join(dir, "other.jsonl")))
	link := filepath.Join(t.TempDir(), "audit")
	require.NoError(t, os.Symlink(dir, link))

	sources, err := Expand([]string{link})
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(link, "events.jsonl")}, sources)
}

// The active file rotated away between the listing and its opening, the
// next one not created yet: its lines are in the newest closed segment
// (compressed or not), which is read in its place.
func TestAnActiveFileRotatedAfterTheListingIsReadFromItsSegment(t *testing.T) {
	dir := t.TempDir()
	_, first := writeTrail(t, 2, 40)
	_, second := writeTrail(t, 3, 30)
	seg1 := filepath.Join(dir, "events-20261206T061500Z-000001.jsonl")
	active := filepath.Join(dir, "events.jsonl")
	require.NoError(t, os.WriteFile(seg1, first, 0o600))
	require.NoError(t, os.WriteFile(active, second, 0o600))
	sources, err := Expand([]string{dir})
	require.NoError(t, err)
	want, wst := readLines(t, sources, Options{})

	for _, compressed := range []bool{false, true} {
		seg2 := filepath.Join(dir, "events-20261206T061501Z-000002.jsonl")
		require.NoError(t, os.Rename(active, seg2))
		if compressed {
			require.NoError(t, os.WriteFile(seg2+".zst", compress(t, second), 0o600))
			require.NoError(t, os.Remove(seg2))
		}
		lines, st := readLines(t, sources, Options{})
		assert.Equal(t, wst, st, "compressed %v", compressed)
		assert.True(t, slices.Equal(want, lines), "compressed %v: the lines the active file held", compressed)
		if compressed {
			require.NoError(t, os.Remove(seg2+".zst"))
		} else {
			require.NoError(t, os.Remove(seg2))
		}
		require.NoError(t, os.WriteFile(active, second, 0o600))
	}
}

// A {session_id} path puts every session's audit file and segments side
// by side in one directory: each file gets its own segments, in rotation
// order, a segment found plain and compressed once (compressed), and the
// directory is listed once for them all.
func TestSegmentsOfManyAuditFilesInOneDirectory(t *testing.T) {
	dir := t.TempDir()
	var want []string
	for _, s := range []string{"a", "b", "c"} {
		for _, n := range []string{s + "-20261206T010000Z-000001.jsonl", s + "-20261206T010000Z-000001.jsonl.zst",
			s + "-20261206T020000Z-000002.jsonl", s + "-20261206T000000Z-1000000.jsonl.zst", s + ".jsonl"} {
			require.NoError(t, os.WriteFile(filepath.Join(dir, n), nil, 0o600))
		}
		want = append(want, s+"-20261206T010000Z-000001.jsonl.zst", s+"-20261206T020000Z-000002.jsonl",
			s+"-20261206T000000Z-1000000.jsonl.zst", s+".jsonl")
	}
	got, err := Segments(dir)
	require.NoError(t, err)
	for i := range got {
		got[i], _ = filepath.Rel(dir, got[i])
	}
	assert.Equal(t, want, got)
}
