package cli

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// resentWhole is a file whose line 2 holds one event twice: its writer was
// killed after the event's bytes but before its newline, and the event
// was then resent whole on the same physical line.
func resentWhole() string {
	s1, f1 := op(sessionA, "exec", "a000000000000001", 1, 2)
	twice := canonLines(f1)
	return canonLines(s1) + strings.TrimSuffix(twice, "\n") + twice
}

// verify says the line holds the event twice, not that it duplicates
// itself.
func TestVerifySaysALineHoldsAnEventTwice(t *testing.T) {
	p := writeFile(t, "events.jsonl", resentWhole())
	r := run(t, "", "verify", p)
	assert.Equal(t, exitProblems, r.code, r.stdout)
	assert.Contains(t, r.stdout, fmt.Sprintf("%s:2: seq 2 used twice in session %s: the line holds the event twice, "+
		"the whole event line after its piece repeating it (same event_id and bytes;", p, sessionA))
	assert.NotContains(t, r.stdout, fmt.Sprintf("duplicate of %s:2", p))
	assert.Contains(t, r.stdout, "problems=2 duplicates=1 missing=0\n")
}

// A piece and the whole event line after it that share a seq but differ
// are named by their places on the line.
func TestVerifyNamesASeqReusedWithinOneLine(t *testing.T) {
	s1, f1 := op(sessionA, "exec", "a000000000000001", 1, 2)
	resent := f1
	resent.DurationMS++ // the same event_id, other bytes
	p := writeFile(t, "events.jsonl", canonLines(s1)+strings.TrimSuffix(canonLines(f1), "\n")+canonLines(resent))
	r := run(t, "", "verify", p)
	assert.Equal(t, exitProblems, r.code, r.stdout)
	assert.Contains(t, r.stdout, fmt.Sprintf("%s:2: seq 2 used twice in session %s: same event_id as the event line before it on this line but different bytes",
		p, sessionA))
}

// show and sessions count the repeat as a line holding one event twice,
// not as a repeated line.
func TestShowSaysALineHoldsAnEventTwice(t *testing.T) {
	p := writeFile(t, "events.jsonl", resentWhole())
	for cmd, done := range map[string]string{"show": "shown once", "sessions": "counted once"} {
		r := run(t, "", cmd, p)
		assert.Equal(t, exitOK, r.code, r.stderr)
		assert.Contains(t, r.stderr, cmd+": 1 line holds an event twice (its line without its newline, then the same line whole after it), "+done+"\n")
		assert.NotContains(t, r.stderr, "repeated line", done)
	}
}

// Lines holding an event twice are counted apart from repeated lines.
func TestShowCountsLinesHoldingAnEventTwiceApart(t *testing.T) {
	s1, f1 := op(sessionA, "exec", "a000000000000001", 1, 2)
	s2, f2 := op(sessionA, "write", "a000000000000002", 3, 4)
	twice := func(line string) string { return strings.TrimSuffix(line, "\n") + line }
	p := writeFile(t, "events.jsonl", twice(canonLines(s1))+canonLines(f1)+canonLines(f1)+twice(canonLines(s2))+canonLines(f2))
	r := run(t, "", "show", p)
	assert.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stderr, "show: 1 repeated line (the same bytes again, as at-least-once delivery writes them) shown once\n")
	assert.Contains(t, r.stderr, "show: 2 lines hold an event twice (its line without its newline, then the same line whole after it), each shown once\n")
}
