package cli

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/webview"
)

// tornData is the data of the collector's torn line: objects named data
// inside it, and JSON text in a string.
func tornData() auditevent.Data {
	return auditevent.MustParseData(`{"command":["sh","-c","echo {\"data\":{\"x\":1}}"],"data":{"data":{"x":1}}}`)
}

// tornJoin is a file as a collector killed mid-write and a Python
// JsonlOutboxSink sharing the file leave it: the collector's line of
// session B cut after cut bytes, the Python sink's whole line of session A
// (seq 4) written after it without a newline between, then the
// collector's retry of its batch. Line 4 is the joined line.
func tornJoin(cut int) (content, python string, piece int) {
	s1, f1 := op(sessionA, "exec", "a000000000000001", 1, 2)
	s2, f2 := op(sessionA, "write", "a000000000000002", 3, 4)
	bs, bf := op(sessionB, "exec", "b000000000000001", 1, 2)
	bs.Data = tornData()
	torn := canonLines(bs)[:cut]
	return canonLines(s1, f1, s2) + torn + canonLines(f2) + canonLines(bs, bf), canonLines(f2), cut
}

// The Python sink's line after a torn piece is read by show and
// sessions, which warn of the piece by file, line and length and succeed:
// the event is whole, and the piece was never acknowledged.
func TestShowAndSessionsReadTheWholeLineAfterATornPiece(t *testing.T) {
	content, python, piece := tornJoin(90)
	p := writeFile(t, "events.jsonl", content)
	warning := fmt.Sprintf("%s:4: warning: a torn piece of %d bytes (a write cut short) comes before a whole event line", p, piece)

	r := run(t, "", "show", "--output", "jsonl", "--session", sessionA.String(), p)
	assert.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stderr, "show: "+warning)
	assert.NotContains(t, r.stderr, "not an audit event")
	assert.Contains(t, r.stdout, python, "the Python line, whole and unchanged")
	assert.Equal(t, 4, strings.Count(r.stdout, "\n"))

	sessionsReadWhole(t, p, warning, map[string]int{sessionA.String(): 4})
}

// sessionsReadWhole runs sessions on p, which succeeds warning of warning,
// and checks the row of each session in events: its count of events, no
// seq missing, none open.
func sessionsReadWhole(t *testing.T, p, warning string, events map[string]int) {
	t.Helper()
	r := run(t, "", "sessions", "--output", "jsonl", p)
	assert.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stderr, "sessions: "+warning)
	for id, n := range events {
		row := rowOf(t, r.stdout, id)
		assert.Contains(t, row, fmt.Sprintf(`"events":%d`, n))
		assert.Contains(t, row, `"missing_seqs":0`)
		assert.Contains(t, row, `"open":0`)
	}
}

// rowOf is the line of out that names id.
func rowOf(t *testing.T, out, id string) string {
	t.Helper()
	for l := range strings.Lines(out) {
		if strings.Contains(l, id) {
			return l
		}
	}
	t.Fatalf("no row for %s in %q", id, out)
	return ""
}

// serve reads the line as show does, with the same warning on stderr and
// a note on the sessions page.
func TestServeReadsTheWholeLineAfterATornPiece(t *testing.T) {
	content, _, piece := tornJoin(90)
	p := writeFile(t, "events.jsonl", content)
	var stderr bytes.Buffer
	hs := startView(t, webview.Config{Sources: []string{p}, Options: readerOptions("serve", Streams{Stderr: &stderr})})
	assert.Contains(t, stderr.String(), fmt.Sprintf("serve: %s:4: warning: a torn piece of %d bytes", p, piece))

	code, _, body := get(t, hs.URL+"/")
	require.Equal(t, 200, code)
	assert.Contains(t, body, "1 line begins with a write cut short")
	assert.NotContains(t, body, "not an audit event")
	code, _, body = get(t, hs.URL+"/session/"+sessionA.String())
	require.Equal(t, 200, code)
	assert.NotContains(t, body, "missing")
	assert.Contains(t, body, `<span class="open">0 open</span>`, "the write's finish is read")
}

// verify counts the Python sink's event, so its seq is not missing, and
// reports the torn piece as a problem in its own words: a file at rest
// holds whole lines, and any torn piece left in one fails verify, the
// collector's own included.
func TestVerifyNamesATornPieceAndCountsTheEventAfterIt(t *testing.T) {
	content, _, piece := tornJoin(90)
	p := writeFile(t, "events.jsonl", content)
	r := run(t, "", "verify", p)
	assert.Equal(t, exitProblems, r.code, r.stdout)
	assert.Contains(t, r.stdout, fmt.Sprintf("%s:4: a torn piece of %d bytes followed by a whole event line (session %s, seq 4)", p, piece, sessionA))
	assert.Contains(t, r.stdout, "files=1 lines=6 events=6 sessions=2 open=0 problems=1 duplicates=0 missing=0\n")
	assert.NotContains(t, r.stdout, "JSON")
}

// verify's second look for repeated seqs reads the line after a torn
// piece as the first pass did: a later copy of it is its duplicate, and a
// later line reusing its seq is named as such.
func TestVerifyTellsARepeatOfTheLineAfterATornPiece(t *testing.T) {
	content, python, _ := tornJoin(90)
	p := writeFile(t, "events.jsonl", content+python)
	r := run(t, "", "verify", p)
	assert.Contains(t, r.stdout, fmt.Sprintf("%s:7: seq 4 used twice in session %s: duplicate of %s:4 ", p, sessionA, p))
	assert.Contains(t, r.stdout, "problems=2 duplicates=1 missing=0\n", r.stdout)

	_, f2 := op(sessionA, "write", "a000000000000002", 3, 4)
	f2.EventID = sessionB // another event with seq 4
	p = writeFile(t, "events.jsonl", content+canonLines(f2))
	r = run(t, "", "verify", "--allow-duplicates", p)
	assert.Contains(t, r.stdout, fmt.Sprintf("%s:7: seq 4 used twice in session %s (first at %s:4, ", p, sessionA, p))
	assert.Contains(t, r.stdout, "duplicates=0 ")
}

// With --key the line signed is the physical one, piece and all: the
// integrity check passes, the piece is reported, the event is counted.
func TestVerifyKeySignsTheJoinedLineWhole(t *testing.T) {
	content, _, _ := tornJoin(90)
	path, pub := sealedOnce(t, content)
	r := run(t, "", "verify", "--key", pub, path)
	assert.Equal(t, exitProblems, r.code, r.stdout)
	assert.Contains(t, r.stdout, ":4: a torn piece of 90 bytes followed by a whole event line")
	assert.Contains(t, r.stdout, "problems=1 ")
	assert.Contains(t, r.stdout, "missing=0\n")
	assert.Contains(t, r.stdout, "integrity: lines=6 sealed=6 unsealed=0 checkpoints=1\n")
	assert.NotContains(t, r.stdout, "integrity: line ")
}

// sealedOnce is an audit file holding content, appended under flock and
// sealed once with a new key, and the verifier key of its log.
func sealedOnce(t *testing.T, content string) (path, pub string) {
	t.Helper()
	key, pub := keyFiles(t, "cli-test")
	path = filepath.Join(t.TempDir(), "audit.jsonl")
	appendFlocked(t, path, content)
	require.NoError(t, sealWith(t, path, key))
	return path, pub
}

// The line recovered is the Python sink's whole line, never a part of the
// torn piece: pieces cut inside a nested object named data, and inside a
// string holding JSON, give back the same line.
func TestTheLineRecoveredIsTheWholeLine(t *testing.T) {
	bs, _ := op(sessionB, "exec", "b000000000000001", 1, 2)
	bs.Data = tornData()
	whole := canonLines(bs)
	for _, at := range []string{`"data":{"data":{"x"`, `"echo {\"data\":{`} {
		require.Contains(t, whole, at)
		cut := strings.Index(whole, at) + len(at)
		content, python, _ := tornJoin(cut)
		p := writeFile(t, "events.jsonl", content)
		r := run(t, "", "show", "--output", "jsonl", "--session", sessionA.String(), p)
		assert.Equal(t, exitOK, r.code, r.stderr)
		assert.Contains(t, r.stderr, fmt.Sprintf(":4: warning: a torn piece of %d bytes", cut), at)
		assert.Contains(t, r.stdout, "\n"+python, at)
	}
}

// A line that holds no whole canonical event line after its start is
// reported as before: junk with braces, a torn piece followed by a line
// that is not canonical, a megabyte of braces.
func TestALineWithoutAWholeLineIsStillBad(t *testing.T) {
	s1, f1 := op(sessionA, "exec", "a000000000000001", 1, 2)
	spaced := strings.Replace(canonLines(f1), `"op":"exec"`, `"op": "exec"`, 1)
	for name, bad := range map[string]string{
		"junk":              `junk {"a":1} {"data":{}}` + "\n",
		"not canonical":     canonLines(s1)[:40] + spaced,
		"braces":            strings.Repeat("{", 1<<20) + "}\n",
		"starts of a line":  strings.Repeat(`{"data":{`, 1<<16) + "}\n",
		"a line with a gap": canonLines(s1)[:40] + strings.Replace(canonLines(f1), `{"data":{}`, `{"data":{} `, 1),
	} {
		p := writeFile(t, "events.jsonl", canonLines(s1)+bad)
		r := run(t, "", "show", p)
		assert.Equal(t, exitProblems, r.code, name)
		assert.Contains(t, r.stderr, p+":2: not an audit event", name)
		assert.NotContains(t, r.stderr, "torn piece", name)
		r = run(t, "", "verify", p)
		assert.Equal(t, exitProblems, r.code, name)
		assert.NotContains(t, r.stdout, "torn piece", name)
		assert.Contains(t, r.stdout, "events=1 ", name)
	}
}

// unended is a file where a writer was killed after the bytes of its line
// of session B (seq 1) but before its newline, and another writer then
// appended its whole line of session A (seq 4): line 4 holds both events.
func unended() (content, first string) {
	s1, f1 := op(sessionA, "exec", "a000000000000001", 1, 2)
	s2, f2 := op(sessionA, "write", "a000000000000002", 3, 4)
	bs, bf := op(sessionB, "exec", "b000000000000001", 1, 2)
	bs.Data = tornData()
	first = canonLines(bs)
	return canonLines(s1, f1, s2) + strings.TrimSuffix(first, "\n") + canonLines(f2) + canonLines(bf), first
}

// A line that joins an event line without its newline to a whole event
// line holds two events: show and sessions read both, warn of the line,
// and succeed; show's jsonl gives the first its newline.
func TestShowAndSessionsReadAnEventLineThatLostItsNewline(t *testing.T) {
	content, first := unended()
	p := writeFile(t, "events.jsonl", content)
	warning := fmt.Sprintf("%s:4: warning: an event line of %d bytes without its newline (a write cut short) comes before a whole event line; both events are read",
		p, len(first)-1)

	r := run(t, "", "show", "--output", "jsonl", p)
	assert.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stderr, "show: "+warning)
	assert.NotContains(t, r.stderr, "torn piece")
	assert.Contains(t, r.stdout, first, "the first line, given its newline")
	assert.Equal(t, 6, strings.Count(r.stdout, "\n"))

	sessionsReadWhole(t, p, warning, map[string]int{sessionA.String(): 4, sessionB.String(): 2})

	var stderr bytes.Buffer
	hs := startView(t, webview.Config{Sources: []string{p}, Options: readerOptions("serve", Streams{Stderr: &stderr})})
	assert.Contains(t, stderr.String(), "serve: "+warning)
	code, _, body := get(t, hs.URL+"/session/"+sessionB.String())
	require.Equal(t, 200, code)
	assert.Contains(t, body, `<span class="open">0 open</span>`, "the start is read")
}

// verify counts both events of the line, and reports it as a problem (a
// file at rest holds one event a line); lines= counts physical lines, the
// leaves --key checks, so events= is one more. Its second look for
// repeated seqs reads the first event too: a later copy of it is its
// duplicate.
func TestVerifyCountsBothEventsOfALineThatLostItsNewline(t *testing.T) {
	content, first := unended()
	p := writeFile(t, "events.jsonl", content)
	r := run(t, "", "verify", p)
	assert.Equal(t, exitProblems, r.code, r.stdout)
	assert.Contains(t, r.stdout, fmt.Sprintf("%s:4: an event line without its newline (session %s, seq 1) followed by a whole event line (session %s, seq 4)",
		p, sessionB, sessionA))
	assert.Contains(t, r.stdout, "files=1 lines=5 events=6 sessions=2 open=0 problems=1 duplicates=0 missing=0\n")
	assert.NotContains(t, r.stdout, "torn piece")

	p = writeFile(t, "events.jsonl", content+first)
	r = run(t, "", "verify", p)
	assert.Contains(t, r.stdout, fmt.Sprintf("%s:6: seq 1 used twice in session %s: duplicate of %s:4 ", p, sessionB, p))
	assert.Contains(t, r.stdout, "problems=2 duplicates=1 missing=0\n", r.stdout)
}

// With --key the leaf is the physical line, both events and all: the
// integrity check passes over the line whole, and counts it once.
func TestVerifyKeySignsALineOfTwoEventsWhole(t *testing.T) {
	content, _ := unended()
	path, pub := sealedOnce(t, content)
	r := run(t, "", "verify", "--key", pub, path)
	assert.Equal(t, exitProblems, r.code, r.stdout)
	assert.Contains(t, r.stdout, ":4: an event line without its newline")
	assert.Contains(t, r.stdout, "lines=5 events=6 ")
	assert.Contains(t, r.stdout, "problems=1 ")
	assert.Contains(t, r.stdout, "integrity: lines=5 sealed=5 unsealed=0 checkpoints=1\n")
	assert.NotContains(t, r.stdout, "integrity: line ")
}

// An event line without its newline followed by the same line whole is
// one event written twice, not two writers' events: each command's
// warning says so, and show shows it once.
func TestTheSameEventTwiceOnALineIsWordedAsOne(t *testing.T) {
	s1, f1 := op(sessionA, "exec", "a000000000000001", 1, 2)
	finish := canonLines(f1)
	p := writeFile(t, "events.jsonl", canonLines(s1)+strings.TrimSuffix(finish, "\n")+finish)
	warning := fmt.Sprintf("%s:2: warning: an event line of %d bytes without its newline (a write cut short) "+
		"comes before the same event line whole; it is one event, read once\n", p, len(finish)-1)
	for cmd, done := range map[string]string{"show": "shown once", "sessions": "counted once"} {
		r := run(t, "", cmd, "--output", "jsonl", p)
		assert.Equal(t, exitOK, r.code, r.stderr)
		assert.Contains(t, r.stderr, cmd+": "+warning)
		assert.NotContains(t, r.stderr, "both events")
		assert.Contains(t, r.stderr, "1 line holds an event twice (its line without its newline, then the same line whole after it), "+done)
		if cmd == "show" {
			assert.Equal(t, 1, strings.Count(r.stdout, finish), "shown once")
		}
	}

	var stderr bytes.Buffer
	startView(t, webview.Config{Sources: []string{p}, Options: readerOptions("serve", Streams{Stderr: &stderr})})
	assert.Contains(t, stderr.String(), "serve: "+warning)

	r := run(t, "", "verify", p)
	assert.Equal(t, exitProblems, r.code, r.stdout)
	assert.Contains(t, r.stdout, fmt.Sprintf("%s:2: an event line without its newline followed by the same event line whole (session %s, seq 2): "+
		"a writer killed before its newline, then the same event resent; it is one event, read twice\n", p, sessionA))
	assert.NotContains(t, r.stdout, "both events")
	assert.Contains(t, r.stdout, "events=3 ")
}
