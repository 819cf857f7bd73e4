package trail

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// repeatedTrails are a trail's lines with copies of some of them, as
// at-least-once delivery writes them, and how many copies each holds.
func repeatedTrails(t *testing.T, content []byte) map[string][]string {
	t.Helper()
	in := strings.SplitAfter(string(content), "\n")
	in = in[:len(in)-1]
	isFinish := func(l string) bool { return strings.Contains(l, `"phase":"finish"`) }
	var finishAgain, finishTwiceFirst []string
	for _, l := range in {
		finishAgain = append(finishAgain, l)
		if isFinish(l) {
			finishAgain = append(finishAgain, l) // a resent finish, its start already paired
		}
	}
	rev := slices.Clone(in)
	slices.Reverse(rev)
	for _, l := range rev {
		finishTwiceFirst = append(finishTwiceFirst, l)
		if isFinish(l) {
			finishTwiceFirst = append(finishTwiceFirst, l) // both copies before the start
		}
	}
	return map[string][]string{
		"the whole trail again":         append(slices.Clone(in), in...),
		"each finish again":             finishAgain,
		"each finish twice, then start": finishTwiceFirst,
	}
}

// TestRepeatedLinesAreShownOnce reads trails holding exact copies of
// their lines: the same operations as without the copies, each line once,
// and every copy counted.
func TestRepeatedLinesAreShownOnce(t *testing.T) {
	p, content := writeTrail(t, 3, 60)
	want, wantSt := readLines(t, []string{p}, Options{})
	for name, lines := range repeatedTrails(t, content) {
		t.Run(name, func(t *testing.T) {
			q := writeLinesFile(t, lines)
			for _, opts := range []Options{{}, {RunBytes: 4 << 10, TempDir: t.TempDir()}} {
				got, st := readLines(t, []string{q}, opts)
				assert.True(t, slices.Equal(want, got), "got %d line(s), want the trail's %d, each once and in order", len(got), len(want))
				assert.Equal(t, wantSt.Ops, st.Ops)
				assert.Equal(t, wantSt.Failed, st.Failed)
				assert.Zero(t, st.Open)
				assert.Equal(t, int64(len(lines)-len(want)), st.Duplicates)
			}
		})
	}
}

// TestRepeatedLinesAreCountedOnceInSessions sums up the same trails:
// the same sums as without the copies.
func TestRepeatedLinesAreCountedOnceInSessions(t *testing.T) {
	p, content := writeTrail(t, 3, 60)
	want, _, err := ReadSessions(context.Background(), []string{p}, Options{})
	require.NoError(t, err)
	for name, lines := range repeatedTrails(t, content) {
		t.Run(name, func(t *testing.T) {
			q := writeLinesFile(t, lines)
			got, _, err := ReadSessions(context.Background(), []string{q}, Options{})
			require.NoError(t, err)
			assert.Equal(t, want, got)
			in := strings.NewReader(strings.Join(lines, ""))
			got, _, err = ReadSessions(context.Background(), []string{StdinName}, Options{Stdin: in})
			require.NoError(t, err)
			assert.Equal(t, want, got, "from standard input")
		})
	}
}

// TestSessionsFromStandardInputWithoutATemporaryFile: standard input is
// kept for a second read in a temporary file; when it cannot be written,
// a trail that needs no second read is still summed, and one that does is
// refused, naming standard input.
func TestSessionsFromStandardInputWithoutATemporaryFile(t *testing.T) {
	_, content := writeTrail(t, 2, 10)
	opts := Options{TempDir: filepath.Join(t.TempDir(), "missing")}
	opts.Stdin = strings.NewReader(string(content))
	list, _, err := ReadSessions(context.Background(), []string{StdinName}, opts)
	require.NoError(t, err)
	assert.Len(t, list, 2)
	opts.Stdin = strings.NewReader(string(content) + string(content))
	_, _, err = ReadSessions(context.Background(), []string{StdinName}, opts)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "standard input")
}
