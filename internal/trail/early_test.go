package trail

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// splitPhases returns a trail's start lines and finish lines.
func splitPhases(content []byte) (starts, finishes []string) {
	lines := strings.SplitAfter(string(content), "\n")
	for _, l := range lines[:len(lines)-1] {
		if strings.Contains(l, `"phase":"finish"`) {
			finishes = append(finishes, l)
		} else {
			starts = append(starts, l)
		}
	}
	return starts, finishes
}

func writeLinesFile(t *testing.T, lines ...[]string) string {
	t.Helper()
	var b strings.Builder
	for _, ls := range lines {
		for _, l := range ls {
			b.WriteString(l)
		}
	}
	return writeFile(t, t.TempDir(), "events.jsonl", []byte(b.String()))
}

// A trail of finishes alone (their starts in a segment not read) is not
// held in memory finish by finish while it is read: the finishes waiting
// for a start stay within a budget, and no finish leaves an entry behind.
func TestFinishesWithoutStartsAreNotAllHeld(t *testing.T) {
	_, content := writeTrail(t, 3, 3000)
	_, finishes := splitPhases(content)
	p := writeLinesFile(t, finishes)
	want, _ := readLines(t, []string{p}, Options{})
	require.Len(t, want, 3000)

	var pr *pairer
	var got []string
	st, err := readOps(context.Background(), []string{p}, Options{KeepLines: true, RunBytes: 64 << 10, TempDir: t.TempDir()}, func(o *Op) error {
		assert.Nil(t, o.Start)
		got = append(got, string(o.Finish.Line))
		return nil
	}, func(p *pairer) { pr = p })
	require.NoError(t, err)
	assert.Equal(t, int64(3000), st.Ops)
	assert.Equal(t, want, got)
	// 16 KiB of records of ~450 bytes: a few dozen at most.
	assert.Less(t, pr.peak, 100, "finishes held at once")
	assert.Empty(t, pr.alone)
}

// Finishes read long before their starts (every finish, then every
// start) still pair with them when they passed the budget, copies of them
// included.
func TestFinishesReadBeforeTheirStartsPairAcrossTheBudget(t *testing.T) {
	p, content := writeTrail(t, 3, 3000)
	want, _ := readLines(t, []string{p}, Options{})
	starts, finishes := splitPhases(content)
	for name, lines := range map[string][][]string{
		"finishes, then starts":                {finishes, starts},
		"finishes, then starts, then finishes": {finishes, starts, finishes},
		"finishes twice, then starts":          {finishes, finishes, starts},
		"starts, then finishes, then finishes": {starts, finishes, finishes},
	} {
		t.Run(name, func(t *testing.T) {
			q := writeLinesFile(t, lines...)
			got, st, pr := readPairs(t, q, Options{RunBytes: 64 << 10, TempDir: t.TempDir()})
			assert.Equal(t, want, got)
			assert.Equal(t, int64(3000), st.Ops)
			assert.Zero(t, st.Open)
			assert.Less(t, pr.peak, 100)
		})
	}
}

// sessions sums a trail of finishes alone without holding them all: past
// a budget it reads the trail again as show does, with the same sums.
func TestSessionsOfFinishesWithoutStartsAreNotAllHeld(t *testing.T) {
	_, content := writeTrail(t, 3, 3000)
	_, finishes := splitPhases(content)
	p := writeLinesFile(t, finishes)
	want, wantSt, err := ReadSessions(context.Background(), []string{p}, Options{})
	require.NoError(t, err)
	require.Len(t, want, 3)
	got, st, held := readSessionsBudgeted(t, p)
	assert.Equal(t, want, got)
	assert.Equal(t, wantSt.Lines, st.Lines)
	assert.LessOrEqual(t, held, 200, "finishes held at once (the budget allows 128)")
	for _, s := range got {
		assert.Equal(t, int64(1000), s.Ops)
	}
}
