package integrity

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
)

// On a rotated log, line N of the active file or of a closed segment is
// proven at its own leaf, not at leaf N-1 of the log.
func TestProveALineOfARotatedLog(t *testing.T) {
	for _, compress := range []bool{false, true} {
		t.Run(fmt.Sprintf("compress=%v", compress), func(t *testing.T) {
			const total = 30
			path, _, k := rotatedTrail(t, total, compress, 0)
			segs, err := filesink.Segments(path)
			require.NoError(t, err)
			require.Greater(t, len(segs), 1)
			files := []string{}
			for _, s := range segs {
				files = append(files, s.Path)
			}
			next := 0 // the log's next line, lines(next, next)
			for _, file := range append(files, path) {
				for line := int64(1); ; line++ {
					b, err := Prove(file, line)
					if err != nil {
						require.ErrorContains(t, err, "covers line", "%s line %d", file, line)
						break
					}
					parsed, err := ParseBundle(b.Format())
					require.NoError(t, err)
					cp, err := VerifyBundle(parsed, k.Verifier)
					require.NoError(t, err, "%s line %d", file, line)
					require.Equal(t, int64(total), cp.N)
					require.Equal(t, lines(next, next), string(parsed.Record), "%s line %d", file, line)
					next++
				}
			}
			require.Equal(t, total, next, "every line of the log proven once")
		})
	}
}

// A segment the segments sidecar does not name cannot be placed in the
// log, nor the active file after it: prove says so rather than that a
// line does not match.
func TestProveRefusesASegmentNoRecordNames(t *testing.T) {
	path, _, _ := rotatedTrail(t, 30, false, 0)
	segs, err := filesink.Segments(path)
	require.NoError(t, err)
	planted := plantNextSegment(t, segs[len(segs)-1])
	_, err = Prove(planted, 1)
	require.ErrorContains(t, err, "no record in "+SegmentsPath(path)+" names it")
	require.False(t, strings.Contains(err.Error(), "does not match"), err.Error())
	// The active file's lines come after it, at leaves not known yet.
	_, err = Prove(path, 1)
	require.ErrorContains(t, err, filepath.Base(planted)+", rotated before this file's lines, is not recorded in")
}

// A file no checkpoint covers a line of is worded so, not as lines 1-0.
func TestProveAFileNoCheckpointCovers(t *testing.T) {
	k, _ := testKeys(t, "test")
	path := auditPath(t)
	appendLocked(t, path, "")
	require.NoError(t, newSealer(t, k).Seal(bg, path))
	_, err := Prove(path, 1)
	require.EqualError(t, err, "line 1: the newest checkpoint covers none of this file's lines")
}

// After retention removed the oldest segments, the active file's lines
// still sit after every recorded segment, the removed ones included.
func TestProveAfterRetention(t *testing.T) {
	const total = 40
	path, _, k := rotatedTrail(t, total, false, 2)
	segs, err := filesink.Segments(path)
	require.NoError(t, err)
	require.Len(t, segs, 2)
	sl, err := LoadSegmentLog(path, k.Verifier)
	require.NoError(t, err)
	require.NotEmpty(t, sl.Retired)
	first := sl.End()
	b, err := Prove(path, 1)
	require.NoError(t, err)
	require.Equal(t, first, b.First)
	_, err = VerifyBundle(b, k.Verifier)
	require.NoError(t, err)
	require.Equal(t, lines(int(first), int(first)), string(b.Record))
}

// A bundle's errors name its lines as they are numbered with a first-leaf
// line, which bundles of a rotated log carry.
func TestParseBundleNumbersLinesAfterFirstLeaf(t *testing.T) {
	_, err := ParseBundle([]byte("sandboxaudit inclusion proof v1\nline 2\nfirst-leaf 8\nproof x\n"))
	require.ErrorContains(t, err, `line 4 must be "proof K"`)
	_, err = ParseBundle([]byte("sandboxaudit inclusion proof v1\nline 2\nproof x\n"))
	require.ErrorContains(t, err, `line 3 must be "proof K"`)
}
