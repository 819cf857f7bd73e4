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

	// A file that is not a segment, gone, is still an error.
	require.NoError(t, os.Remove(filepath.Join(dir, "events.jsonl")))
	_, err = ReadOps(context.Background(), sources, opts, func(*Op) error { return nil })
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
