package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/conformance"
	"github.com/sandboxaudit/sandboxaudit/internal/trail"
)

// encodeVectorLines are the canonical lines the reference wrote for the
// encode vectors.
func encodeVectorLines(t *testing.T) []string {
	t.Helper()
	vs, err := conformance.LoadAll()
	require.NoError(t, err)
	var out []string
	for _, v := range vs {
		if v.Kind != "encode" {
			continue
		}
		s, err := v.ExpectString()
		require.NoError(t, err)
		out = append(out, s)
	}
	require.NotEmpty(t, out)
	return out
}

func TestShowVectorLineUnchanged(t *testing.T) {
	for i, line := range encodeVectorLines(t) {
		p := writeFile(t, "events.jsonl", line)
		r := run(t, "", "show", "--output", "jsonl", p)
		require.Equal(t, exitOK, r.code, "vector %d: %s", i, r.stderr)
		require.Equal(t, line, r.stdout, "vector %d", i)
	}
}

// TestShowVectorTrail reads every encode vector's line as one trail:
// each line comes out once and unchanged, in session and seq order, with
// a repeated line (the same bytes twice) left out and counted.
func TestShowVectorTrail(t *testing.T) {
	in := encodeVectorLines(t)
	p := writeFile(t, "events.jsonl", strings.Join(in, ""))
	r := run(t, "", "show", "--output", "jsonl", p)
	require.Equal(t, exitOK, r.code, r.stderr)
	out := strings.SplitAfter(r.stdout, "\n")
	out = out[:len(out)-1]
	distinct := slices.Compact(slices.Sorted(slices.Values(in)))
	got := slices.Sorted(slices.Values(out))
	require.Equal(t, distinct, slices.Compact(slices.Clone(got)), "every distinct input line, unchanged")
	repeats := len(in) - len(out)
	if repeats > 0 {
		assert.Contains(t, r.stderr, "repeated")
	}
	var prev auditevent.Event
	for i, line := range out {
		ev, err := auditevent.Decode([]byte(line))
		require.NoError(t, err)
		if i > 0 && ev.SessionID == prev.SessionID && ev.Phase == auditevent.PhaseStart && prev.Phase == auditevent.PhaseStart {
			assert.LessOrEqual(t, prev.Seq, ev.Seq, "line %d: starts of a session in seq order", i+1)
		}
		if i > 0 {
			assert.LessOrEqual(t, prev.SessionID.String(), ev.SessionID.String(), "sessions in order")
		}
		prev = ev
	}
}

// writeAheadTrail is two sessions' operations in the order the collector
// writes them: each start ahead, each finish after the next start, and
// the sessions interleaved.
func writeAheadTrail() (file string, want map[uuid.UUID][]string) {
	want = map[uuid.UUID][]string{}
	var b strings.Builder
	type pair struct{ s, f auditevent.Event }
	var ops [2][]pair
	for i, sess := range []uuid.UUID{sessionA, sessionB} {
		// Seqs in the order written: s0=1 s1=2 f0=3 s2=4 f1=5 f2=6.
		seqs := [3][2]int64{{1, 3}, {2, 5}, {4, 6}}
		for k := range 3 {
			s, f := op(sess, "exec", "span"+string(rune('a'+k))+sess.String()[:4], seqs[k][0], seqs[k][1])
			s.Data = auditevent.MustParseData(`{"command":["echo","` + string(rune('x'+k)) + `"]}`)
			f.Data = auditevent.MustParseData(`{"exit_code":0}`)
			ops[i] = append(ops[i], pair{s, f})
			want[sess] = append(want[sess], canonLines(s), canonLines(f))
		}
	}
	for k := range 3 {
		for i := range 2 {
			b.WriteString(canonLines(ops[i][k].s))
			if k > 0 {
				b.WriteString(canonLines(ops[i][k-1].f))
			}
		}
	}
	for i := range 2 {
		b.WriteString(canonLines(ops[i][2].f))
	}
	return b.String(), want
}

func TestShowPairsInSeqOrder(t *testing.T) {
	content, want := writeAheadTrail()
	p := writeFile(t, "events.jsonl", content)
	r := run(t, "", "show", "--output", "jsonl", p)
	require.Equal(t, exitOK, r.code, r.stderr)
	first, second := sessionA, sessionB
	if second.String() < first.String() {
		first, second = second, first
	}
	assert.Equal(t, strings.Join(want[first], "")+strings.Join(want[second], ""), r.stdout)

	tbl := run(t, "", "show", p)
	require.Equal(t, exitOK, tbl.code, tbl.stderr)
	assert.Contains(t, tbl.stdout, "session "+sessionA.String()+"  trace 4bf92f3577b34da6a3ce929d0e0e4736")
	assert.Contains(t, tbl.stdout, "echo x")
	assert.Contains(t, tbl.stdout, "6 operations: 0 failed, 0 open")
	assert.NotContains(t, tbl.stdout, "\x1b[", "no color off a terminal")
	rows := 0
	for _, l := range strings.Split(tbl.stdout, "\n") {
		if strings.HasPrefix(l, "2026-03-14T15:09:26.535897Z") {
			rows++
			assert.Regexp(t, `^2026-03-14T15:09:26\.535897Z +[124] exec +echo [xyz] +ok +0 +1\.5ms$`, l)
		}
	}
	assert.Equal(t, 6, rows)
}

func TestShowStdinAndPipeIntoVerify(t *testing.T) {
	content, _ := writeAheadTrail()
	r := run(t, content, "show", "--output", "jsonl", "-")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.ElementsMatch(t, strings.SplitAfter(content, "\n"), strings.SplitAfter(r.stdout, "\n"))
	v := run(t, r.stdout, "verify", "-")
	assert.Equal(t, exitOK, v.code, v.stdout+v.stderr)
	c := run(t, r.stdout, "canon")
	assert.Equal(t, r.stdout, c.stdout)
}

// failingTrail has an ok exec, a failed exec, an open write and a finish
// without its start.
func failingTrail(t *testing.T) (string, [4][2]auditevent.Event) {
	t.Helper()
	var ops [4][2]auditevent.Event
	at := time.Date(2026, 3, 14, 15, 0, 0, 0, time.UTC)
	for i, name := range []string{"exec", "exec", "write", "read"} {
		s, f := op(sessionA, name, "span-"+string(rune('0'+i)), int64(2*i+1), int64(2*i+2))
		s.TS = auditevent.TimestampFromTime(at.Add(time.Duration(i) * time.Hour))
		f.TS = s.TS
		ops[i] = [2]auditevent.Event{s, f}
	}
	ops[0][0].Data = auditevent.MustParseData(`{"command":["ls","/tmp"]}`)
	ops[1][0].Data = auditevent.MustParseData(`{"command":["make","café"]}`)
	ops[1][1].OK, ops[1][1].ErrorCode = false, auditevent.Ptr("exec_nonzero")
	ops[1][1].Data = auditevent.MustParseData(`{"exit_code":2}`)
	ops[1][0].TraceID = auditevent.Ptr("0af7651916cd43dd8448eb211c80319c")
	ops[1][1].TraceID = ops[1][0].TraceID
	ops[2][0].Data = auditevent.MustParseData(`{"path":"/workspace/out.txt"}`)
	ops[3][1].Data = auditevent.MustParseData(`{"path":"/etc/hosts"}`)
	content := canonLines(ops[0][0], ops[0][1], ops[1][0], ops[1][1], ops[2][0], ops[3][1])
	return writeFile(t, "events.jsonl", content), ops
}

func TestShowFilters(t *testing.T) {
	p, ops := failingTrail(t)
	jl := func(args ...string) string {
		t.Helper()
		r := run(t, "", append(append([]string{"show", "--output", "jsonl"}, args...), p)...)
		require.Equal(t, exitOK, r.code, r.stderr)
		return r.stdout
	}
	okOp := canonLines(ops[0][0], ops[0][1])
	failed := canonLines(ops[1][0], ops[1][1])
	open := canonLines(ops[2][0])
	orphan := canonLines(ops[3][1])
	all := okOp + failed + open + orphan
	assert.Equal(t, all, jl())
	assert.Equal(t, failed, jl("--failed"))
	assert.Equal(t, failed, jl("--trace", "0af7651916cd43dd8448eb211c80319c"))
	assert.Equal(t, open, jl("--span", "span-2"))
	assert.Equal(t, okOp+failed, jl("--op", "exec"))
	assert.Equal(t, orphan, jl("--op", "read"))
	assert.Equal(t, all, jl("--session", strings.ToUpper(sessionA.String())))
	assert.Empty(t, jl("--session", sessionB.String()))
	assert.Equal(t, failed+open+orphan, jl("--since", "2026-03-14T16:00:00Z"))
	assert.Equal(t, okOp+failed, jl("--until", "2026-03-14T18:00:00+01:00"))
	assert.Equal(t, failed, jl("--since", "2026-03-14T16:00:00Z", "--until", "2026-03-14T16:00:00.000001Z"))
	assert.Equal(t, failed, jl("--grep", "café"), "as typed: the line holds caf\\u00e9")
	assert.Equal(t, failed, jl("--grep", `caf\u00e9`), "as escaped")
	assert.Equal(t, open, jl("--grep", "/workspace/out"))
	assert.Equal(t, failed, jl("--grep", "make café"), "a command as the table shows it")
	assert.Empty(t, jl("--grep", "ls /tmpx"))
	assert.Empty(t, jl("--since", "2h"), "2026 is long ago... or not, but these ts are")
	assert.Equal(t, all, jl("--since", "2026-03-14"))

	var parsed []map[string]any
	r := run(t, "", "show", "--output", "json", p)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &parsed))
	require.Len(t, parsed, 4)
	assert.Equal(t, true, parsed[1]["failed"])
	assert.Equal(t, true, parsed[2]["open"])
	assert.Nil(t, parsed[2]["finish"])
	assert.Nil(t, parsed[3]["start"])
	assert.Equal(t, "0af7651916cd43dd8448eb211c80319c", parsed[1]["trace_id"])

	for _, bad := range [][]string{{"--session", "nope"}, {"--op", "explode"}, {"--since", "yesterday"}, {"--output", "xml"}} {
		r := run(t, "", append(append([]string{"show"}, bad...), p)...)
		assert.Equal(t, exitUsage, r.code, "%v", bad)
		assert.Contains(t, r.stderr, bad[0], "the flag is named")
	}
}

func TestShowTableOpenFailedAndOrphan(t *testing.T) {
	p, _ := failingTrail(t)
	r := run(t, "", "show", p)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Regexp(t, `(?m)^2026-03-14T16:00:00Z +3 exec +make café +FAIL exec_nonzero +2 +1\.5ms$`, r.stdout)
	assert.Regexp(t, `(?m)^2026-03-14T17:00:00Z +5 write +/workspace/out\.txt +OPEN \(no finish\)$`, r.stdout)
	assert.Regexp(t, `(?m)^2026-03-14T18:00:00Z +8 read +/etc/hosts +NO START \(finish only\) +1\.5ms$`, r.stdout)
	assert.Contains(t, r.stdout, "4 operations: 1 failed, 1 open")
}

func TestShowCutsAndEscapesFields(t *testing.T) {
	s, f := op(sessionA, "exec", "span-x", 1, 2)
	long := strings.Repeat("a", 100)
	s.Data = auditevent.MustParseData(`{"command":["sh","-c","printf '\u001b[2J\u001b]0;pwned\u0007' ` + long + `"]}`)
	p := writeFile(t, "events.jsonl", canonLines(s, f))
	r := run(t, "", "show", p)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.NotContains(t, r.stdout, "\x1b", "no escape reaches the terminal")
	assert.NotContains(t, r.stdout, "\a")
	assert.Contains(t, r.stdout, `printf '\x1b[2J\x1b]0;pwned\x07`)
	assert.Contains(t, r.stdout, "…", "a long field is cut visibly")
	assert.NotContains(t, r.stdout, long)
}

func TestShowBadLinesNamedNotQuoted(t *testing.T) {
	s, f := op(sessionA, "exec", "span-x", 1, 2)
	secret := "hunter2-\x1b[31m-<script>"
	content := canonLines(s) + "{\"op\":\"" + secret + "\"}\n" + "not json " + secret + "\n\n" + canonLines(f)
	p := writeFile(t, "events.jsonl", content)
	r := run(t, "", "show", "--output", "jsonl", p)
	assert.Equal(t, exitProblems, r.code)
	assert.Equal(t, canonLines(s, f), r.stdout, "the good lines still come out")
	assert.Contains(t, r.stderr, p+":2: not an audit event")
	assert.Contains(t, r.stderr, p+":3: not an audit event")
	assert.Contains(t, r.stderr, p+":4: blank line")
	assert.NotContains(t, r.stderr, "hunter2")
	assert.NotContains(t, r.stderr, "\x1b")
	assert.Contains(t, r.stderr, "3 lines are not audit events and were left out")

	st := run(t, content, "sessions", "-")
	assert.Equal(t, exitProblems, st.code)
	assert.Contains(t, st.stderr, "-:2: not an audit event")
	assert.NotContains(t, st.stderr, "hunter2")
}

// zstdFile compresses content into path as one zstd frame.
func zstdFile(t *testing.T, path, content string) {
	t.Helper()
	var buf bytes.Buffer
	w, err := zstd.NewWriter(&buf)
	require.NoError(t, err)
	_, err = w.Write([]byte(content))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o600))
}

// TestShowDirectoryOfSegments reads a trail's directory: a compressed
// rotated segment, a plain one and the active file, in that order, with
// the sidecars beside them left alone; the same as the lines in one file.
func TestShowDirectoryOfSegments(t *testing.T) {
	content, _ := writeAheadTrail()
	all := strings.SplitAfter(content, "\n")
	all = all[:len(all)-1]
	dir := t.TempDir()
	zstdFile(t, filepath.Join(dir, "events-20261206T010000Z-000001.jsonl.zst"), strings.Join(all[:5], ""))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "events-20261206T020000Z-000002.jsonl"), []byte(strings.Join(all[5:9], "")), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "events.jsonl"), []byte(strings.Join(all[9:], "")), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "events.jsonl.checkpoints"), []byte("not lines\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "events.jsonl.tlog"), []byte{0, 1, 2}, 0o600))

	whole := run(t, "", "show", "--output", "jsonl", writeFile(t, "one.jsonl", content))
	r := run(t, "", "show", "--output", "jsonl", dir)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Equal(t, whole.stdout, r.stdout)

	// A compressed file named without .zst is still read as zstd.
	zp := filepath.Join(t.TempDir(), "events.jsonl")
	zstdFile(t, zp, content)
	z := run(t, "", "show", "--output", "jsonl", zp)
	assert.Equal(t, whole.stdout, z.stdout)

	ss := run(t, "", "sessions", dir)
	require.Equal(t, exitOK, ss.code, ss.stderr)
	assert.Contains(t, ss.stdout, "2 sessions")
}

func TestSessions(t *testing.T) {
	p, _ := failingTrail(t)
	content, _ := writeAheadTrail()
	q := writeFile(t, "b.jsonl", content)
	r := run(t, "", "sessions", "--output", "jsonl", p, q)
	require.Equal(t, exitOK, r.code, r.stderr)
	rows := map[string]sessionJSON{}
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var s sessionJSON
		require.NoError(t, json.Unmarshal([]byte(l), &s))
		rows[s.SessionID] = s
	}
	require.Len(t, rows, 2)
	a := rows[sessionA.String()]
	// sessionA: failingTrail's 4 operations and writeAheadTrail's 3.
	assert.Equal(t, int64(7), a.Operations)
	assert.Equal(t, int64(1), a.Failures)
	assert.Equal(t, int64(1), a.Open)
	assert.Equal(t, "2026-03-14T15:00:00Z", a.First)
	assert.Equal(t, "2026-03-14T18:00:00Z", a.Last)
	b := rows[sessionB.String()]
	assert.Equal(t, int64(3), b.Operations)
	assert.Equal(t, int64(0), b.Open)
	require.NotNil(t, b.TraceID)
	assert.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", *b.TraceID)

	tbl := run(t, "", "sessions", p)
	require.Equal(t, exitOK, tbl.code, tbl.stderr)
	// MISSING: the open write's finish (6) and the read's start (7).
	assert.Regexp(t, `(?m)^SESSION +FIRST +LAST +OPS +FAILED +OPEN +MISSING TRACE$`, tbl.stdout)
	assert.Regexp(t, `(?m)^`+sessionA.String()+` 2026-03-14T15:00:00Z +2026-03-14T18:00:00Z +4 +1 +1 +2 4bf92f3577b34da6a3ce929d0e0e4736$`, tbl.stdout)
}

// TestShowTableRow checks the cells of a row: cut with "…" at their
// width, padded, escaped, and aligned right for numbers.
func TestShowTableRow(t *testing.T) {
	long := strings.Repeat("x", 50)
	for _, c := range []struct {
		name string
		op   trail.Op
		want string
	}{
		{"ok", trail.Op{Op: "exec", What: "ls -la",
			Start:  &trail.Event{Seq: 1, TS: "2026-03-14T15:00:00Z"},
			Finish: &trail.Event{Seq: 2, OK: true, Exit: "0", DurationMS: 250.125}},
			"2026-03-14T15:00:00Z              1 exec                 ls -la                                       ok                               0    250.1ms"},
		{"cut and failed", trail.Op{Op: "exec", What: long,
			Start:  &trail.Event{Seq: 12345678, TS: "2026-03-14T15:00:00.123456+05:30"},
			Finish: &trail.Event{Seq: 12345679, ErrorCode: "exec_nonzero", Exit: "123456", DurationMS: 61_000}},
			"2026-03-14T15:00:00.123456… 123456… exec                 " + long[:43] + "… FAIL exec_nonzero            1234…       1.0m"},
		{"escaped, open", trail.Op{Op: "write", What: "café\x1b[2J",
			Start: &trail.Event{Seq: 7, TS: "2026-03-14T15:00:00Z"}},
			"2026-03-14T15:00:00Z              7 write                café\\x1b[2J                                  OPEN (no finish)"},
		{"backslash and zero-width space", trail.Op{Op: "exec", What: `printf '\x1b'` + " rm\u200b",
			Start: &trail.Event{Seq: 9, TS: "2026-03-14T15:00:00Z"}},
			"2026-03-14T15:00:00Z              9 exec                 printf '\\\\x1b' rm\\u200b                      OPEN (no finish)"},
		{"backslash alone", trail.Op{Op: "exec", What: `printf '\x1b'`,
			Start: &trail.Event{Seq: 9, TS: "2026-03-14T15:00:00Z"}},
			"2026-03-14T15:00:00Z              9 exec                 printf '\\\\x1b'                               OPEN (no finish)"},
		{"cut before an escape", trail.Op{Op: "exec", What: strings.Repeat("y", 40) + "\u00adz\x1bzzz",
			Start:  &trail.Event{Seq: 10, TS: "2026-03-14T15:00:00Z"},
			Finish: &trail.Event{Seq: 11, ErrorCode: "exec_nonzero", Exit: "12\x1b", DurationMS: 1}},
			"2026-03-14T15:00:00Z             10 exec                 " + strings.Repeat("y", 40) + "…    FAIL exec_nonzero              12…      1.0ms"},
		{"finish only", trail.Op{Op: "read", What: "/etc/hosts",
			Finish: &trail.Event{Seq: 8, TS: "2026-03-14T15:00:00Z", OK: true, DurationMS: 1500}},
			"2026-03-14T15:00:00Z              8 read                 /etc/hosts                                   NO START (finish only)                  1.50s"},
	} {
		var out bytes.Buffer
		w := &tableWriter{any: true}
		w.reset(bufio.NewWriter(&out))
		require.NoError(t, w.op(&c.op))
		require.NoError(t, w.w.Flush())
		assert.Equal(t, c.want+"\n", out.String(), c.name)
	}
}
