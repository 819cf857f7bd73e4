package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Copies of one line wait as one repeat, whatever their number: a 23 KB
// compressed segment holds a million copies, each once kept apart.
func TestVerifyKeepsCopiesOfOneLineOnce(t *testing.T) {
	s, f := op(sessionA, "exec", "a000000000000001", 1, 2)
	line := canonLines(s)
	n := maxListedProblems + 500
	v := newVerifier(io.Discard, verifyOptions{})
	require.NoError(t, v.verifyReader(context.Background(), "copies.jsonl", strings.NewReader(strings.Repeat(line, n)+canonLines(f))))
	require.Equal(t, 1, len(v.repeats), "the copies wait as one repeat")

	p := writeFile(t, "copies.jsonl", strings.Repeat(line, n)+canonLines(f))
	r := run(t, "", "verify", p)
	require.Equal(t, exitProblems, r.code, r.stderr)
	require.Contains(t, r.stdout, p+":2: seq 1 used twice in session "+sessionA.String()+": duplicate of "+p+":1 ")
	require.Contains(t, r.stdout, fmt.Sprintf("open=0 problems=%d duplicates=%d missing=0\n", n-1, n-1))
	r = run(t, "", "verify", "--allow-duplicates", p)
	require.Equal(t, exitOK, r.code, r.stdout)
	require.Contains(t, r.stdout, fmt.Sprintf("open=0 problems=0 duplicates=%d missing=0\n", n-1))
}

// Copies of a line that reuses a seq, beyond those kept, count as the kept
// ones settle: each reuse, and each a second start of its span.
func TestVerifyCountsEveryCopyOfAReuse(t *testing.T) {
	s, f := op(sessionA, "exec", "a000000000000001", 1, 2)
	other := s
	other.EventID = sessionB // another event under seq 1
	n := maxListedProblems + 500
	p := writeFile(t, "reuse.jsonl", canonLines(s, f)+strings.Repeat(canonLines(other), n))
	r := run(t, "", "verify", p)
	require.Equal(t, exitProblems, r.code, r.stderr)
	// n reuses, n-1 second starts, and the copy left open.
	require.Contains(t, r.stdout, fmt.Sprintf("open=1 problems=%d duplicates=0 missing=0\n", 2*n))
}
