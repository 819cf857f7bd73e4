package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
)

// A line removed from the newest closed segment made verify blame the
// active file, whose lines are intact: "the log's first N lines (up to
// line 1 of events.jsonl) do not match", then "M lines after the newest
// checkpoint are not sealed (a forged line appended … reads the same)".
// The lines after a bad segment are checked from the tree its signed
// record ends with, as the lines after a gap are.
func TestVerifyTrailResumesAfterTheNewestSegmentFails(t *testing.T) {
	path, _, pub, _ := rotatedFixture(t, 40)
	segs, err := filesink.Segments(path)
	require.NoError(t, err)
	active, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NotEmpty(t, active, "the fixture's active file holds lines")
	newest := segs[len(segs)-1].Path
	data := decompress(t, newest)
	compressTo(t, newest, data[:bytes.LastIndexByte(data[:len(data)-1], '\n')+1])

	res := run(t, "", "verify", "--key", pub, filepath.Dir(path))
	require.Equal(t, exitProblems, res.code, res.stdout)
	require.Contains(t, res.stdout, filepath.Base(newest)+": holds ")
	require.NotContains(t, res.stdout, path+": the log's first", res.stdout)
	require.NotContains(t, res.stdout, "after the newest checkpoint", res.stdout)
	m := regexp.MustCompile(`trail segments=\d+ retired=0 first_line=1 lines=(\d+) sealed=(\d+) unsealed=0 `).FindStringSubmatch(res.stdout)
	require.NotNil(t, m, res.stdout)
	lines, _ := strconv.Atoi(m[1])
	sealed, _ := strconv.Atoi(m[2])
	require.Equal(t, lines+1, sealed, "every line but the removed one is in the newest checkpoint: %s", res.stdout)
}
