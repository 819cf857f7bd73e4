package trail

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeTrail(t *testing.T, sessions, ops int) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	_, err := genTrail(&buf, sessions, ops)
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), "events.jsonl")
	require.NoError(t, os.WriteFile(p, buf.Bytes(), 0o600))
	return p, buf.Bytes()
}

// readLines returns the operations' lines in the order ReadOps gives them.
func readLines(t *testing.T, sources []string, opts Options) ([]string, Stats) {
	t.Helper()
	opts.KeepLines = true
	var out []string
	st, err := ReadOps(context.Background(), sources, opts, func(o *Op) error {
		for _, e := range []*Event{o.Start, o.Finish} {
			if e != nil {
				out = append(out, string(e.Line))
			}
		}
		return nil
	})
	require.NoError(t, err)
	return out, st
}

// TestSpilledRunsMergeAsInMemory sorts the same trail in memory and with
// a budget so small that it spills dozens of runs: the same output, in
// session and seq order, every line once.
func TestSpilledRunsMergeAsInMemory(t *testing.T) {
	p, content := writeTrail(t, 7, 3000)
	inMem, st := readLines(t, []string{p}, Options{})
	assert.Equal(t, int64(3000), st.Ops)
	spilled, _ := readLines(t, []string{p}, Options{RunBytes: 64 << 10, TempDir: t.TempDir()})
	assert.Equal(t, inMem, spilled)
	in := strings.SplitAfter(string(content), "\n")
	in = in[:len(in)-1]
	assert.ElementsMatch(t, in, inMem)
	var prevSession string
	var prevSeq int64
	for i, l := range inMem {
		session := l[strings.Index(l, `"session_id":"`)+14:][:36]
		if i%2 == 0 && session == prevSession {
			seq := seqOf(l)
			assert.Greater(t, seq, prevSeq, "line %d", i)
			prevSeq = seq
		}
		if session != prevSession {
			assert.Greater(t, session, prevSession)
			prevSession, prevSeq = session, seqOf(l)
		}
	}
	ents, err := os.ReadDir(os.TempDir())
	require.NoError(t, err)
	for _, e := range ents {
		assert.False(t, strings.HasPrefix(e.Name(), "sandboxaudit-sort-"), "runs are unlinked: %s", e.Name())
	}
}

func seqOf(l string) int64 {
	s := l[strings.Index(l, `"seq":`)+6:]
	var n int64
	for _, c := range s {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int64(c-'0')
	}
	return n
}

// TestFinishBeforeStart reads a trail whose lines are reversed (segments
// given in the wrong order): every finish still finds its start.
func TestFinishBeforeStart(t *testing.T) {
	_, content := writeTrail(t, 3, 50)
	in := strings.SplitAfter(string(content), "\n")
	in = in[:len(in)-1]
	rev := slices.Clone(in)
	slices.Reverse(rev)
	p := filepath.Join(t.TempDir(), "rev.jsonl")
	require.NoError(t, os.WriteFile(p, []byte(strings.Join(rev, "")), 0o600))
	q := filepath.Join(t.TempDir(), "fwd.jsonl")
	require.NoError(t, os.WriteFile(q, content, 0o600))
	got, st := readLines(t, []string{p}, Options{})
	want, _ := readLines(t, []string{q}, Options{})
	assert.Equal(t, want, got)
	assert.Zero(t, st.Open)
	assert.Equal(t, int64(50), st.Ops)
}

func TestSegmentsOrder(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "6f1c2a8e"), 0o700))
	for _, n := range []string{"events.jsonl", "events-20261206T020000Z-000002.jsonl", "events-20261206T010000Z-000001.jsonl.zst",
		"events-20261206T030000Z-000003.jsonl.zst.tmp", "events.jsonl.tlog", "events.jsonl.checkpoints", "events.jsonl.segments",
		"notes.txt", "other-20261205T000000Z-000001.jsonl.zst", "6f1c2a8e/events.jsonl"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), nil, 0o600))
	}
	require.NoError(t, os.Symlink(filepath.Join(dir, "events.jsonl"), filepath.Join(dir, "link.jsonl")))
	got, err := Segments(dir)
	require.NoError(t, err)
	for i := range got {
		got[i], _ = filepath.Rel(dir, got[i])
	}
	assert.Equal(t, []string{"6f1c2a8e/events.jsonl",
		"events-20261206T010000Z-000001.jsonl.zst", "events-20261206T020000Z-000002.jsonl", "events.jsonl",
		"other-20261205T000000Z-000001.jsonl.zst"}, got, "other.jsonl is gone (retention), its segment stays")
}

func TestSessionsSums(t *testing.T) {
	p, _ := writeTrail(t, 4, 40)
	list, st, err := ReadSessions(context.Background(), []string{p}, Options{})
	require.NoError(t, err)
	assert.Equal(t, int64(80), st.Lines)
	require.Len(t, list, 4)
	for _, s := range list {
		assert.Equal(t, int64(10), s.Ops)
		assert.Equal(t, int64(20), s.Events)
		assert.Equal(t, int64(1), s.Failures, "k=3 of 0..9 fails")
		assert.Zero(t, s.Open)
	}
}

// TestStopMidMerge stops reading in the middle of merging spilled runs:
// the caller's error comes back, and the merging goroutine ends.
func TestStopMidMerge(t *testing.T) {
	p, _ := writeTrail(t, 7, 3000)
	stop := errors.New("enough")
	for _, after := range []int{1, 10, 2999} {
		n := 0
		_, err := ReadOps(context.Background(), []string{p}, Options{RunBytes: 64 << 10, TempDir: t.TempDir()}, func(*Op) error {
			n++
			if n == after {
				return stop
			}
			return nil
		})
		require.ErrorIs(t, err, stop)
		assert.Equal(t, after, n)
	}
}

// TestSkipWhat reads the same trail with and without SkipWhat: the same
// operations, only What empty, and What read without it.
func TestSkipWhat(t *testing.T) {
	p, _ := writeTrail(t, 3, 200)
	read := func(opts Options) []Op {
		var ops []Op
		_, err := ReadOps(context.Background(), []string{p}, opts, func(o *Op) error {
			c := *o
			c.Start, c.Finish = nil, nil
			ops = append(ops, c)
			return nil
		})
		require.NoError(t, err)
		return ops
	}
	full, skipped := read(Options{}), read(Options{SkipWhat: true})
	require.Len(t, skipped, len(full))
	for i := range full {
		assert.NotEmpty(t, full[i].What)
		assert.Empty(t, skipped[i].What)
		full[i].What = ""
	}
	assert.Equal(t, full, skipped)
}
