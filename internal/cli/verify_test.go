package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/conformance"
)

// goodSession is two sessions' operations as a collector writes them: spans
// interleave and end out of order, so seqs are not monotonic in the file.
func goodSession() string {
	s1, f1 := op(sessionA, "start", "00f067aa0ba902b7", 1, 2)
	s2, f2 := op(sessionA, "exec", "sandbox_op_0af7651916cd43dd8448eb211c80319c", 3, 6)
	s3, f3 := op(sessionA, "read", "53995c3f42cd8ad8", 4, 5)
	s3.ParentSpanID = auditevent.Ptr("00f067aa0ba902b7")
	f3.ParentSpanID = s3.ParentSpanID
	b1, g1 := op(sessionB, "write", "00f067aa0ba902b7", 1, 2) // same span id, other session
	b1.TraceID, g1.TraceID = nil, nil
	f2.OK = false
	f2.ErrorCode = auditevent.Ptr("exec_nonzero")
	f2.ErrorType = auditevent.Ptr("ExecNonZeroError")
	return canonLines(s1, f1, s2, b1, s3, f3, g1, f2)
}

func TestVerifyGood(t *testing.T) {
	p := writeFile(t, "audit.jsonl", goodSession())
	r := run(t, "", "verify", p)
	assert.Equal(t, exitOK, r.code, r.stdout+r.stderr)
	assert.Equal(t, "files=1 lines=8 events=8 sessions=2 open=0 problems=0 duplicates=0 missing=0\nOK\n", r.stdout)
}

func TestVerifyReferenceLines(t *testing.T) {
	// Every line the reference wrote for an encode vector is canonical; many
	// share ids, so only the line-level checks are meaningful here: collect
	// the problems and make sure none is about the line itself.
	vectors, err := conformance.LoadAll()
	require.NoError(t, err)
	for _, v := range vectors {
		if v.Kind != "encode" {
			continue
		}
		exp, err := v.ExpectString()
		require.NoError(t, err)
		p := writeFile(t, "one.jsonl", exp)
		r := run(t, "", "verify", "--allow-open", p)
		for _, l := range strings.Split(r.stdout, "\n") {
			assert.NotContains(t, l, "not canonical", v.Name)
			assert.NotContains(t, l, "newline", v.Name)
		}
	}
}

func TestVerifySplitFilesOutOfOrder(t *testing.T) {
	// A finish may be met before its start: rotated files given in any
	// order, or a span that ended before its parent.
	s, f := op(sessionA, "exec", "span-1", 1, 2)
	p1 := writeFile(t, "b.jsonl", canonLines(f))
	p2 := writeFile(t, "a.jsonl", canonLines(s))
	r := run(t, "", "verify", p1, p2)
	assert.Equal(t, exitOK, r.code, r.stdout)
	assert.Contains(t, r.stdout, "files=2 lines=2 events=2 sessions=1 open=0 problems=0 duplicates=0 missing=0")
}

func TestVerifyProblems(t *testing.T) {
	s1, f1 := op(sessionA, "exec", "span-1", 1, 2)
	s2, f2 := op(sessionA, "read", "span-2", 3, 4)
	good := canonLines(s1, f1)

	mut := func(e auditevent.Event, f func(*auditevent.Event)) auditevent.Event {
		f(&e)
		return e
	}
	tests := []struct {
		name    string
		content string
		args    []string
		// line is where the problem is reported, want a piece of the message.
		line int
		want string
	}{
		{"not canonical: spaces", good + strings.Replace(canonLines(s2), `"op":"read"`, `"op": "read"`, 1) + canonLines(f2),
			nil, 3, "not canonical: first difference at byte"},
		{"not canonical: key order", good + `{"version":1,` + strings.TrimPrefix(strings.Replace(canonLines(s2), `,"version":1}`, `}`, 1), `{`) + canonLines(f2),
			nil, 3, "not canonical"},
		{"not canonical: upper-case uuid", strings.Replace(good, s1.EventID.String(), strings.ToUpper(s1.EventID.String()), 1),
			nil, 1, "not canonical"},
		{"undecodable", good + strings.Replace(canonLines(s2), `"seq":3`, `"seq":"3"`, 1) + canonLines(f2), nil, 3, "seq: "},
		{"not json", good + "{oops\n", nil, 3, ""},
		{"blank line", canonLines(s1) + "\n" + canonLines(f1), nil, 2, "blank line"},
		{"torn last line", good + strings.TrimSuffix(canonLines(s2), "\n"), []string{"--allow-open"}, 3, "no newline"},
		{"unknown version", canonLines(mut(s1, func(e *auditevent.Event) { e.Version = 2 }), mut(f1, func(e *auditevent.Event) { e.Version = 2 })),
			nil, 1, "version: 2"},
		{"duplicate seq", canonLines(s1, f1, mut(s2, func(e *auditevent.Event) { e.Seq = 2 }), f2), nil, 3, "seq 2 used twice"},
		{"duplicate line", canonLines(s1, f1, f1), nil, 3, "seq 2 used twice in session " + sessionA.String() + ": duplicate of "},
		{"same seq, other event, duplicates allowed", canonLines(s1, f1, mut(s2, func(e *auditevent.Event) { e.Seq = 2 }), f2),
			[]string{"--allow-duplicates"}, 3, "seq 2 used twice in session " + sessionA.String() + " (first at "},
		{"same seq and event_id, other bytes, duplicates allowed", canonLines(s1, f1, mut(f1, func(e *auditevent.Event) { e.DurationMS = 2.5 })),
			[]string{"--allow-duplicates"}, 3, "same event_id as "},
		{"non-canonical copy, duplicates allowed", canonLines(s1, f1) + strings.Replace(canonLines(f1), `"op":"exec"`, `"op": "exec"`, 1),
			[]string{"--allow-duplicates"}, 3, "but different bytes"},
		{"finish seq below start", canonLines(mut(s1, func(e *auditevent.Event) { e.Seq = 5 }), f1), nil, 2, "finish seq 2 (at "},
		{"finish seq equal start", canonLines(s1, mut(f1, func(e *auditevent.Event) { e.Seq = 1 })), nil, 2, "seq 1 used twice"},
		{"start without finish", good + canonLines(s2), nil, 3, `start without a finish: span_id "span-2"`},
		{"finish without start", good + canonLines(f2), nil, 3, `finish without a start: span_id "span-2"`},
		{"finish without start, open allowed", good + canonLines(f2), []string{"--allow-open"}, 3, `finish without a start`},
		{"second start", canonLines(s1, mut(s1, func(e *auditevent.Event) { e.Seq = 7 }), f1), nil, 2, `second start event for span_id "span-1"`},
		{"op mismatch", canonLines(s1, mut(f1, func(e *auditevent.Event) { e.Op = "write" })), nil, 2, `start op "exec"`},
		{"empty span id", canonLines(mut(s1, func(e *auditevent.Event) { e.SpanID = "" })), []string{"--allow-open"}, 1, "span_id: empty"},
		{"zero span id", canonLines(mut(s1, func(e *auditevent.Event) { e.SpanID = "0000000000000000" }), mut(f1, func(e *auditevent.Event) { e.SpanID = "0000000000000000" })),
			nil, 1, "span_id: all-zero"},
		{"upper-case trace id", canonLines(mut(s1, func(e *auditevent.Event) { e.TraceID = auditevent.Ptr("4BF92F3577B34DA6A3CE929D0E0E4736") }), f1),
			nil, 1, "trace_id: 32-digit hex id in upper case"},
		{"empty trace id", canonLines(mut(s1, func(e *auditevent.Event) { e.TraceID = auditevent.Ptr("") }), f1), nil, 1, "trace_id: empty string"},
		{"self parent", canonLines(mut(s1, func(e *auditevent.Event) { e.ParentSpanID = auditevent.Ptr("span-1") }), f1), nil, 1, "parent_span_id: equals span_id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := writeFile(t, "audit.jsonl", tt.content)
			r := run(t, "", append(append([]string{"verify"}, tt.args...), p)...)
			assert.Equal(t, exitProblems, r.code, r.stdout+r.stderr)
			prefix := fmt.Sprintf("%s:%d: ", p, tt.line)
			found := false
			for _, l := range strings.Split(r.stdout, "\n") {
				if strings.HasPrefix(l, prefix) && strings.Contains(l, tt.want) {
					found = true
				}
			}
			assert.True(t, found, "want a problem at %s containing %q; got:\n%s", prefix, tt.want, r.stdout)
			assert.Contains(t, r.stdout, "\nFAILED\n")
			assert.NotContains(t, r.stdout, "problems=0")
		})
	}
}

func TestVerifyAllowOpen(t *testing.T) {
	s1, f1 := op(sessionA, "exec", "span-1", 1, 2)
	s2, _ := op(sessionA, "exec", "span-2", 3, 4)
	p := writeFile(t, "live.jsonl", canonLines(s1, f1, s2))

	r := run(t, "", "verify", p)
	assert.Equal(t, exitProblems, r.code)
	assert.Contains(t, r.stdout, "open=1 problems=1 duplicates=0 missing=0")

	// The flag may follow the file name.
	r = run(t, "", "verify", p, "--allow-open")
	assert.Equal(t, exitOK, r.code, r.stdout)
	assert.Contains(t, r.stdout, "files=1 lines=3 events=3 sessions=1 open=1 problems=0 duplicates=0 missing=0\nOK\n")
}

func TestVerifyStdinAndErrors(t *testing.T) {
	r := run(t, goodSession(), "verify", "-")
	assert.Equal(t, exitOK, r.code, r.stdout)

	r = run(t, "", "verify", filepath.Join(t.TempDir(), "missing.jsonl"))
	assert.Equal(t, exitProblems, r.code)
	assert.Contains(t, r.stderr, "missing.jsonl")

	r = run(t, "", "verify")
	assert.Equal(t, exitUsage, r.code)
	r = run(t, "", "verify", "--no-such-flag", "x")
	assert.Equal(t, exitUsage, r.code)
}

// dupFiles is one session split over two files where the second file
// repeats three events of the first: a start whose finish came before it, a
// start whose finish comes after it, and a finish.
func dupFiles(t *testing.T) (a, b string) {
	s1, f1 := op(sessionA, "exec", "span-1", 1, 2)
	s2, f2 := op(sessionA, "read", "span-2", 3, 4)
	a = writeFile(t, "a.jsonl", canonLines(s1, f1, s2))
	b = writeFile(t, "b.jsonl", canonLines(s1, s2, f2, f1))
	return a, b
}

func TestVerifyDuplicatesAllowed(t *testing.T) {
	a, b := dupFiles(t)
	// The flag may follow the file names. A copied start is neither a second
	// start nor a start left open, and a copied finish is not one without a
	// start.
	r := run(t, "", "verify", a, b, "--allow-duplicates")
	assert.Equal(t, exitOK, r.code, r.stdout)
	assert.Equal(t, "files=2 lines=7 events=7 sessions=1 open=0 problems=0 duplicates=3 missing=0\nOK\n", r.stdout)

	// Three copies of one start: two duplicates, still one pair.
	s1, f1 := op(sessionA, "exec", "span-1", 1, 2)
	p := writeFile(t, "triple.jsonl", canonLines(s1, s1, f1, s1))
	r = run(t, "", "verify", "--allow-duplicates", p)
	assert.Equal(t, exitOK, r.code, r.stdout)
	assert.Equal(t, "files=1 lines=4 events=4 sessions=1 open=0 problems=0 duplicates=2 missing=0\nOK\n", r.stdout)
}

func TestVerifyDuplicatesReported(t *testing.T) {
	a, b := dupFiles(t)
	r := run(t, "", "verify", a, b)
	assert.Equal(t, exitProblems, r.code, r.stdout)
	// One problem per copy, naming the line it copies; nothing about pairing.
	want := []string{b + ":1: seq 1 used twice", b + ":2: seq 3 used twice", b + ":4: seq 2 used twice"}
	of := []string{a + ":1", a + ":3", a + ":2"}
	got := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	require.Len(t, got, len(want)+2, r.stdout)
	for i, w := range want {
		assert.True(t, strings.HasPrefix(got[i], w), "line %d: want prefix %q, got %q", i, w, got[i])
		assert.Contains(t, got[i], "duplicate of "+of[i]+" ")
		assert.Contains(t, got[i], "--allow-duplicates")
	}
	assert.Equal(t, "files=2 lines=7 events=7 sessions=1 open=0 problems=3 duplicates=3 missing=0", got[3])
	assert.Equal(t, "FAILED", got[4])
}

func TestVerifyUsageMentionsAllowDuplicates(t *testing.T) {
	r := run(t, "", "help")
	assert.Contains(t, r.stdout, "verify [--allow-open] [--allow-duplicates] [--require-contiguous] FILE|DIR...")
	r = run(t, "", "verify", "-h")
	assert.Equal(t, exitOK, r.code)
	assert.Contains(t, r.stderr, "-allow-duplicates")
}

// TestVerifyRepeatsFarApart: the copy and the reuse are told apart against
// the first line even when thousands of lines lie between (the first pass
// keeps ranges of seqs, not lines), in a file and on stdin.
func TestVerifyRepeatsFarApart(t *testing.T) {
	in := benchInput(3000) // seqs 1..6000, one session
	s1, _ := op(sessionA, "exec", "span-0", 1, 2)
	reuse := s1
	reuse.EventID = uuid.MustParse("99999999-9999-4999-8999-999999999999")
	body := in + canonLines(s1, reuse)
	path := writeFile(t, "far.jsonl", body)
	for _, args := range [][]string{{"verify", path}, {"verify", "-"}} {
		r := run(t, body, args...)
		where := path
		if args[1] == "-" {
			where = stdinName
		}
		assert.Equal(t, exitProblems, r.code, r.stdout)
		assert.Contains(t, r.stdout, where+":6001: seq 1 used twice in session "+sessionA.String()+": duplicate of "+where+":1 ")
		assert.Contains(t, r.stdout, where+":6002: seq 1 used twice in session "+sessionA.String()+" (first at "+where+":1, event_id ")
		// The reuse is paired like a first line: span-0 is complete, so it
		// is a start left open; the exact copy takes no part.
		assert.Contains(t, r.stdout, where+":6002: start without a finish: span_id \"span-0\"")
		assert.Contains(t, r.stdout, "lines=6002 events=6002 sessions=1 open=1 problems=3 duplicates=1 missing=0\nFAILED\n")
	}
}

// TestVerifyRepeatFirstLineGone: when the file changes between the two
// reads, the reuse is still reported, without guessing its kind.
func TestVerifyRepeatFirstLineGone(t *testing.T) {
	s1, f1 := op(sessionA, "exec", "span-1", 1, 2)
	path := writeFile(t, "gone.jsonl", canonLines(s1, f1, s1))
	var out strings.Builder
	v := newVerifier(&out, verifyOptions{})
	require.NoError(t, v.verifyPath(context.Background(), path, nil))
	require.NoError(t, os.Truncate(path, 0))
	require.NoError(t, v.settleRepeats(context.Background()))
	assert.Equal(t, 0, v.finish().Duplicates)
	assert.Contains(t, out.String(), path+":3: seq 1 used twice in session "+sessionA.String()+" (the first line with it could not be read again)")
}

// A FIFO named as a file is refused at once: opening it waited for a writer
// (a second pass waited for ever, past SIGTERM). A pipe is read as - instead.
func TestFilesMustBeRegular(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	require.NoError(t, unix.Mkfifo(fifo, 0o600))
	for _, args := range [][]string{
		{"verify", fifo},
		{"verify", "--allow-duplicates", fifo},
	} {
		r := run(t, "", args...)
		assert.NotEqual(t, 0, r.code, "%v", args)
		assert.Contains(t, r.stdout+r.stderr, "not a regular file", "%v", args)
	}
}

// A file of many bad lines lists the first maxListedProblems of them and
// counts the rest: a small compressed segment can hold billions.
func TestVerifyListsABoundedNumberOfProblemsPerFile(t *testing.T) {
	a := writeFile(t, "a.jsonl", strings.Repeat("\n", maxListedProblems+500))
	b := writeFile(t, "b.jsonl", "\n\n")
	r := run(t, "", "verify", a, b)
	require.Equal(t, exitProblems, r.code, r.stderr)
	require.Equal(t, maxListedProblems+1, strings.Count(r.stdout, a+":"), "the first problems, then one line for the rest")
	require.Contains(t, r.stdout, fmt.Sprintf("%s: more than %d problems: the others are counted in problems=, not listed\n", a, maxListedProblems))
	require.Contains(t, r.stdout, b+":1: blank line\n"+b+":2: blank line\n", "each file has its own bound")
	require.Contains(t, r.stdout, fmt.Sprintf("problems=%d ", maxListedProblems+502))
}
