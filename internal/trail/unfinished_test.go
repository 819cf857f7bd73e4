package trail

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readPairs reads a trail with opts, returning each operation's two lines
// ("missing" for an event it lacks), and the pairer it used.
func readPairs(t *testing.T, path string, opts Options) ([]string, Stats, *pairer) {
	t.Helper()
	opts.KeepLines = true
	var pr *pairer
	var got []string
	st, err := readOps(context.Background(), []string{path}, opts, func(o *Op) error {
		for _, e := range []*Event{o.Start, o.Finish} {
			if e == nil {
				got = append(got, "missing\n")
			} else {
				got = append(got, string(e.Line))
			}
		}
		return nil
	}, func(p *pairer) { pr = p })
	require.NoError(t, err)
	return got, st, pr
}

// readSessionsBudgeted sums the sessions of the trail at path with a 64 KiB
// budget, returning how many operations it held at once.
func readSessionsBudgeted(t *testing.T, path string) ([]Session, Stats, int) {
	t.Helper()
	var held int
	got, st, err := readSessions(context.Background(), []string{path}, Options{RunBytes: 64 << 10, TempDir: t.TempDir()}, &sessionSeams{held: &held})
	require.NoError(t, err)
	return got, st, held
}

// A trail of starts alone (a writer that crashed, or a hostile one) is
// not held in memory operation by operation: the operations in flight stay
// within a budget, and show's output is the in-memory read's.
func TestStartsWithoutFinishesAreNotAllHeld(t *testing.T) {
	_, content := writeTrail(t, 3, 3000)
	starts, _ := splitPhases(content)
	p := writeLinesFile(t, starts)
	want, wantSt, inMem := readPairs(t, p, Options{})
	require.Equal(t, 3000, inMem.peakInflight, "the in-memory read holds every start")

	got, st, pr := readPairs(t, p, Options{RunBytes: 64 << 10, TempDir: t.TempDir()})
	assert.Equal(t, want, got)
	assert.Equal(t, wantSt, st)
	assert.Equal(t, int64(3000), st.Open)
	// 16 KiB at 64 bytes an operation: 256.
	assert.LessOrEqual(t, pr.peakInflight, 257, "operations in flight held at once")
}

// Starts read long before their finishes (every start, then every
// finish) still pair with them once they left memory, copies of either
// included.
func TestStartsReadBeforeTheirFinishesPairAcrossTheBudget(t *testing.T) {
	_, content := writeTrail(t, 3, 3000)
	starts, finishes := splitPhases(content)
	for name, lines := range map[string][][]string{
		"starts, then finishes":                {starts, finishes},
		"starts twice, then finishes":          {starts, starts, finishes},
		"starts, then finishes twice":          {starts, finishes, finishes},
		"starts, then finishes, then starts":   {starts, finishes, starts},
		"finishes, then starts, then finishes": {finishes, starts, finishes},
	} {
		t.Run(name, func(t *testing.T) {
			q := writeLinesFile(t, lines...)
			want, wantSt, _ := readPairs(t, q, Options{})
			got, st, pr := readPairs(t, q, Options{RunBytes: 64 << 10, TempDir: t.TempDir()})
			assert.Equal(t, want, got)
			assert.Equal(t, wantSt, st)
			assert.Equal(t, int64(3000), st.Ops)
			assert.Zero(t, st.Open)
			assert.LessOrEqual(t, pr.peakInflight, 257)
		})
	}
}

// sessions sums a trail of starts alone without holding them all: past a
// budget it reads the trail again as show does, with the same sums.
func TestSessionsOfStartsWithoutFinishesAreNotAllHeld(t *testing.T) {
	_, content := writeTrail(t, 3, 3000)
	starts, _ := splitPhases(content)
	p := writeLinesFile(t, starts)
	var inMem int
	want, wantSt, err := readSessions(context.Background(), []string{p}, Options{}, &sessionSeams{held: &inMem})
	require.NoError(t, err)
	require.Len(t, want, 3)
	require.Equal(t, 3000, inMem, "the in-memory read holds every start")
	got, st, held := readSessionsBudgeted(t, p)
	assert.Equal(t, want, got)
	assert.Equal(t, wantSt.Lines, st.Lines)
	assert.LessOrEqual(t, held, 200, "operations held at once (the budget allows 128)")
	for _, s := range got {
		assert.Equal(t, int64(1000), s.Ops)
		assert.Equal(t, int64(1000), s.Open)
	}
}
