package cli

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// floodSegment writes a compressed segment of blank lines, then lines of
// random text, cut short: a few kilobytes that decompress to thousands of
// bad lines and then to damage.
func floodSegment(t *testing.T, dir string) string {
	t.Helper()
	var plain strings.Builder
	plain.WriteString(strings.Repeat("\n", 3000))
	rng := rand.New(rand.NewPCG(1, 2))
	for range 4000 {
		for range 60 {
			plain.WriteByte(byte('a' + rng.IntN(26)))
		}
		plain.WriteByte('\n')
	}
	var buf bytes.Buffer
	w, err := zstd.NewWriter(&buf)
	require.NoError(t, err)
	_, err = w.Write([]byte(plain.String()))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	p := filepath.Join(dir, "events-20261206T010000Z-000001.jsonl.zst")
	require.NoError(t, os.WriteFile(p, buf.Bytes()[:buf.Len()-200], 0o600))
	return p
}

// A compressed segment of a few kilobytes can decompress to billions of
// bad lines: the reading tools name the first maxListedProblems of a file,
// as verify does, then count the rest, and still name the damage.
func TestReadersNameAThousandBadLinesOfAFileThenCountThem(t *testing.T) {
	dir := t.TempDir()
	seg := floodSegment(t, dir)
	s, f := op(sessionA, "exec", "span-1", 1, 2)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "events.jsonl"), []byte(canonLines(s, f)), 0o600))
	for _, cmd := range []string{"show", "sessions"} {
		r := run(t, "", cmd, dir)
		require.Equal(t, exitProblems, r.code, r.stderr)
		named := strings.Count(r.stderr, ": not an audit event: ") + strings.Count(r.stderr, ": blank line\n")
		assert.Equal(t, maxListedProblems, named, "%s: lines named", cmd)
		assert.True(t, strings.Contains(r.stderr, cmd+": "+seg+": more than 1000 lines are not audit events: the others are counted, not named\n"), cmd)
		assert.True(t, strings.Contains(r.stderr, "the compressed segment cannot be read to its end"), cmd)
		assert.Regexp(t, cmd+`: \d+ lines are not audit events and were left out\n$`, r.stderr)
		assert.Less(t, strings.Count(r.stderr, "\n"), maxListedProblems+10, cmd)
	}
	_, stop := serving(t, dir)
	code, stderr := stop()
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, maxListedProblems, strings.Count(stderr, ": not an audit event: ")+strings.Count(stderr, ": blank line\n"), "serve")
	assert.True(t, strings.Contains(stderr, "the compressed segment cannot be read to its end"), "serve")
}

// A file of lines each after a torn piece warns of the first
// maxListedProblems, then reads the others without naming them.
func TestReadersNameAThousandTornPiecesOfAFile(t *testing.T) {
	bs, _ := op(sessionB, "exec", "b000000000000001", 1, 2)
	bs.Data = tornData()
	torn := canonLines(bs)[:90]
	var b strings.Builder
	const n = maxListedProblems + 100
	for i := range n {
		s, f := op(sessionA, "exec", fmt.Sprintf("a%015d", i), int64(2*i+1), int64(2*i+2))
		b.WriteString(torn + canonLines(s) + canonLines(f))
	}
	p := writeFile(t, "events.jsonl", b.String())
	for _, cmd := range []string{"show", "sessions"} {
		r := run(t, "", cmd, p)
		require.Equal(t, exitOK, r.code, r.stderr)
		assert.Equal(t, maxListedProblems, strings.Count(r.stderr, "warning: a torn piece"), cmd)
		assert.True(t, strings.Contains(r.stderr, cmd+": "+p+": more than 1000 lines begin with a piece cut short: the others are read too, not named\n"), cmd)
	}
	r := run(t, "", "sessions", "--output", "jsonl", p)
	assert.Contains(t, r.stdout, fmt.Sprintf(`"operations":%d,`, n))
}
