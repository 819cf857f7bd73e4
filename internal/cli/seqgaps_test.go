package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

var sessionC = uuid.MustParse("33333333-4444-4555-8666-777777777777")

// opLines is the lines of one operation per pair of seqs.
func opLines(session uuid.UUID, seqs ...int64) string {
	var evs []auditevent.Event
	for i := 0; i+1 < len(seqs); i += 2 {
		s, f := op(session, "exec", fmt.Sprintf("%s-%d", session.String()[:4], seqs[i]), seqs[i], seqs[i+1])
		evs = append(evs, s, f)
	}
	return canonLines(evs...)
}

// gapFiles writes a trail split across two files: session A misses seqs
// 5–6 in both; session B's lines alternate between the files, so each
// alone misses some, and both together none.
func gapFiles(t *testing.T) (first, second string) {
	t.Helper()
	dir := t.TempDir()
	first = filepath.Join(dir, "gateway-1.jsonl")
	second = filepath.Join(dir, "gateway-2.jsonl")
	writeAt(t, first, opLines(sessionA, 1, 2, 3, 4, 7, 8)+opLines(sessionB, 1, 2, 5, 6))
	writeAt(t, second, opLines(sessionB, 3, 4, 7, 8))
	return first, second
}

func writeAt(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
}

// sessionRows runs sessions --output jsonl and returns its rows by id,
// decoded loosely so the test reads any field.
func sessionRows(t *testing.T, paths ...string) map[string]map[string]any {
	t.Helper()
	r := run(t, "", append([]string{"sessions", "--output", "jsonl"}, paths...)...)
	require.Equal(t, exitOK, r.code, r.stderr)
	rows := map[string]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var row map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &row), line)
		rows[row["session_id"].(string)] = row
	}
	return rows
}

func TestSessionsMissingSeqs(t *testing.T) {
	first, second := gapFiles(t)
	copies := filepath.Join(t.TempDir(), "copies.jsonl")
	// Session C's first operation written twice (at-least-once delivery):
	// sessions then sums on its second pass, which must count holes too.
	writeAt(t, copies, opLines(sessionC, 1, 2)+opLines(sessionC, 1, 2, 3, 4))
	for _, tc := range []struct {
		name  string
		paths []string
		a, b  string // missing_seqs and missing_ranges, as JSON
	}{
		{"together", []string{first, second}, "2 [[5,6]]", "0 []"},
		{"together, with copies", []string{first, second, copies}, "2 [[5,6]]", "0 []"},
		{"first alone", []string{first}, "2 [[5,6]]", "2 [[3,4]]"},
		{"second alone", []string{second}, "", "4 [[1,2],[5,6]]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := sessionRows(t, tc.paths...)
			got := func(id uuid.UUID) string {
				row, ok := rows[id.String()]
				if !ok {
					return ""
				}
				ranges, err := json.Marshal(row["missing_ranges"])
				require.NoError(t, err)
				return fmt.Sprintf("%v %s", row["missing_seqs"], ranges)
			}
			assert.Equal(t, tc.a, got(sessionA), "session A")
			assert.Equal(t, tc.b, got(sessionB), "session B")
			if row, ok := rows[sessionC.String()]; ok {
				assert.Equal(t, 0.0, row["missing_seqs"], "copies are no hole")
			}
		})
	}

	r := run(t, "", "sessions", first, second)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Regexp(t, `(?m)^SESSION +FIRST +LAST +OPS +FAILED +OPEN +MISSING TRACE$`, r.stdout)
	assert.Regexp(t, `(?m)^`+sessionA.String()+` .* +3 +0 +0 +2 4bf92f3577b34da6a3ce929d0e0e4736$`, r.stdout)
	assert.Regexp(t, `(?m)^`+sessionB.String()+` .* +4 +0 +0 +4bf92f3577b34da6a3ce929d0e0e4736$`, r.stdout, "none missing: blank")
}

func TestVerifyMissingSeqs(t *testing.T) {
	first, second := gapFiles(t)
	r := run(t, "", "verify", first, second)
	assert.Equal(t, exitOK, r.code, r.stdout)
	assert.Contains(t, r.stdout, "session "+sessionA.String()+": warning: seqs 5–6 are not in the files read (lost, or in files not given)\n")
	assert.NotContains(t, r.stdout, "session "+sessionB.String(), "B's lines are all there, across the files")
	assert.Contains(t, r.stdout, "problems=0 duplicates=0 missing=2\nOK\n")

	r = run(t, "", "verify", "--require-contiguous", first, second)
	assert.Equal(t, exitProblems, r.code, r.stdout)
	assert.Contains(t, r.stdout, "session "+sessionA.String()+": seqs 5–6 are not in the files read (lost, or in files not given)\n")
	assert.Contains(t, r.stdout, "problems=1 duplicates=0 missing=2\nFAILED\n")

	r = run(t, "", "verify", "--require-contiguous", second)
	assert.Equal(t, exitProblems, r.code, r.stdout)
	assert.Contains(t, r.stdout, "session "+sessionB.String()+": seqs 1–2, 5–6 are not in the files read")
	assert.Contains(t, r.stdout, "problems=1 duplicates=0 missing=4\n")

	// Copies of a line are no hole; a single seq reads as one.
	copies := filepath.Join(t.TempDir(), "copies.jsonl")
	writeAt(t, copies, opLines(sessionC, 1, 2)+opLines(sessionC, 1, 2, 4, 5))
	r = run(t, "", "verify", "--allow-duplicates", "--require-contiguous", copies)
	assert.Equal(t, exitProblems, r.code, r.stdout)
	assert.Contains(t, r.stdout, "session "+sessionC.String()+": seq 3 is not in the files read")
	assert.Contains(t, r.stdout, "problems=1 duplicates=2 missing=1\n")
}

// A session of 100,000 events with every other seq missing: the count is
// exact, the ranges named and kept are the first few.
func TestMissingSeqsBounded(t *testing.T) {
	const events = 100_000
	var b strings.Builder
	for i := range int64(events / 2) {
		b.WriteString(opLines(sessionA, 4*i+1, 4*i+3))
	}
	p := filepath.Join(t.TempDir(), "holes.jsonl")
	writeAt(t, p, b.String())
	const missing = events - 1 // 2, 4, …, 199998

	row := sessionRows(t, p)[sessionA.String()]
	require.NotNil(t, row)
	assert.Equal(t, float64(missing), row["missing_seqs"])
	ranges, err := json.Marshal(row["missing_ranges"])
	require.NoError(t, err)
	assert.Equal(t, "[[2,2],[4,4],[6,6],[8,8],[10,10]]", string(ranges))

	r := run(t, "", "verify", "--require-contiguous", p)
	assert.Equal(t, exitProblems, r.code)
	assert.Contains(t, r.stdout, fmt.Sprintf("session %s: seqs 2, 4, 6, 8, 10 and %d more (%d in all) are not in the files read", sessionA, missing-5, missing))
	assert.Contains(t, r.stdout, fmt.Sprintf("problems=1 duplicates=0 missing=%d\n", missing))
}

// With --key, a session whose first seqs were in segments retention
// removed is a note, not a problem even with --require-contiguous: the
// signed log records the removal.
func TestVerifyMissingSeqsAfterRetention(t *testing.T) {
	path, _, pub, _ := retainedFixture(t, 30, 4)
	r := run(t, "", "verify", "--key", pub, "--require-contiguous", filepath.Dir(path))
	assert.Equal(t, exitOK, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "note: seqs 1–")
	assert.Contains(t, r.stdout, "they were in a segment retention removed")
}
