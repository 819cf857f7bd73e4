package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
)

// dropRetentionRecord removes the i-th retention record (0: the oldest)
// from path's segments sidecar, and returns the segment it named.
func dropRetentionRecord(t *testing.T, path string, i int) string {
	t.Helper()
	b, err := os.ReadFile(integrity.SegmentsPath(path))
	require.NoError(t, err)
	head := []byte("sandboxaudit retention v1\n")
	at := 0
	for range i + 1 {
		n := bytes.Index(b[at:], head)
		require.GreaterOrEqual(t, n, 0, "the fixture has %d retention records", i+1)
		at += n + len(head)
	}
	start := at - len(head)
	sig := start + bytes.Index(b[start:], []byte("\n\n\u2014 ")) + 2
	end := sig + bytes.Index(b[sig:], []byte("\n\n")) + 2
	name := bytes.SplitN(b[at:], []byte("\n"), 3)[1] // origin, then the segment's name
	require.NoError(t, os.WriteFile(integrity.SegmentsPath(path), append(b[:start:start], b[end:]...), 0o600))
	return string(name)
}

// A segment removed by hand among those retention removed (its retention
// record removed too) was counted in "lines A-B of the log were removed
// by retention": the range ran from the first retired line to the last,
// over the lines no retention record names.
func TestVerifyRetentionClaimsOnlyItsLines(t *testing.T) {
	path, _, pub, _ := retainedFixture(t, 30, 4)
	name := dropRetentionRecord(t, path, 1)
	res := run(t, "", "verify", "--key", pub, filepath.Dir(path))
	require.Equal(t, exitProblems, res.code, res.stdout)
	missing := regexp.MustCompile(regexp.QuoteMeta(name) + ` \(lines (\d+)-(\d+) of the log\) is missing, and no retention record says it was removed`).
		FindStringSubmatch(res.stdout)
	require.NotNil(t, missing, res.stdout)
	claim := regexp.MustCompile(`integrity: lines ([\d, -]+) of the log were removed by retention`).FindStringSubmatch(res.stdout)
	require.NotNil(t, claim, res.stdout)
	a, _ := strconv.Atoi(missing[1])
	b, _ := strconv.Atoi(missing[2])
	require.True(t, strings.HasPrefix(claim[1], fmt.Sprintf("1-%d, %d-", a-1, b+1)),
		"retention claims only the lines before and after the missing segment's: %s", res.stdout)
}

// The oldest segment retention kept, removed by hand, left its sessions'
// seqs as a note "they were in a segment retention removed".
func TestVerifyMissingSeqsOfAHandRemovedSegmentAreNoNote(t *testing.T) {
	path, _, pub, _ := retainedFixture(t, 30, 4)
	segs, err := filesink.Segments(path)
	require.NoError(t, err)
	require.NoError(t, os.Remove(segs[0].Path))
	res := run(t, "", "verify", "--key", pub, filepath.Dir(path))
	require.Equal(t, exitProblems, res.code, res.stdout)
	require.Contains(t, res.stdout, "is missing, and no retention record says it was removed")
	require.NotContains(t, res.stdout, "they were in a segment retention removed", res.stdout)
}
