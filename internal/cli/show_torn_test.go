package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A writer mid-append leaves the active file's last line without its
// newline and not yet JSON: show skips it, says so, and succeeds. The
// same bytes anywhere else (mid-file, or ending a closed segment, which
// nothing appends to) are a bad line.
func TestShowSkipsAnIncompleteLastLineOfALiveFile(t *testing.T) {
	s1, f1 := op(sessionA, "exec", "a000000000000001", 1, 2)
	s2, f2 := op(sessionA, "write", "a000000000000002", 3, 4)
	whole := canonLines(s1, f1, s2)
	torn := canonLines(f2)[:40] // no newline, not JSON

	dir := t.TempDir()
	active := filepath.Join(dir, "events.jsonl")
	require.NoError(t, os.WriteFile(active, []byte(whole+torn), 0o600))
	for _, args := range [][]string{{"show", active}, {"show", dir}, {"sessions", active}} {
		r := run(t, "", args...)
		assert.Equal(t, exitOK, r.code, "%v: %s", args, r.stderr)
		assert.Contains(t, r.stderr, active+":4: skipped an incomplete last line", "%v", args)
		assert.NotContains(t, r.stderr, "not an audit event", "%v", args)
	}
	r := run(t, whole+torn, "show", "--output", "jsonl", "-")
	assert.Equal(t, exitOK, r.code, r.stderr)
	assert.Equal(t, whole, r.stdout)
	assert.Contains(t, r.stderr, "-:4: skipped an incomplete last line")

	// Mid-file: an error.
	mid := writeFile(t, "mid.jsonl", whole+torn+"\n"+canonLines(f2))
	r = run(t, "", "show", mid)
	assert.Equal(t, exitProblems, r.code, r.stderr)
	assert.Contains(t, r.stderr, mid+":4: not an audit event")

	// The last line of a closed segment: an error too.
	seg := filepath.Join(dir, "events-20260314T150926Z-000001.jsonl")
	require.NoError(t, os.WriteFile(seg, []byte(whole+torn), 0o600))
	require.NoError(t, os.WriteFile(active, []byte(canonLines(f2)), 0o600))
	r = run(t, "", "show", dir)
	assert.Equal(t, exitProblems, r.code, r.stderr)
	assert.Contains(t, r.stderr, seg+":4: not an audit event")
	assert.False(t, strings.Contains(r.stderr, "incomplete"), r.stderr)
}

// TestIncompleteLastLineIsWhatIsNoEvent: the last line of a live file
// without its newline is left out with a note whenever it is not an event,
// JSON or not, by show and sessions alike; a whole event without its
// newline is read as one.
func TestIncompleteLastLineIsWhatIsNoEvent(t *testing.T) {
	s1, f1 := op(sessionA, "exec", "a000000000000001", 1, 2)
	whole := canonLines(s1)
	for _, cmd := range []string{"show", "sessions"} {
		json := writeFile(t, cmd+"-json.jsonl", whole+`{"a":1}`)
		r := run(t, "", cmd, json)
		assert.Equal(t, exitOK, r.code, r.stderr)
		assert.Contains(t, r.stderr, cmd+": "+json+":2: skipped an incomplete last line")

		event := writeFile(t, cmd+"-event.jsonl", whole+strings.TrimSuffix(canonLines(f1), "\n"))
		r = run(t, "", cmd, "--output", "jsonl", event)
		assert.Equal(t, exitOK, r.code, r.stderr)
		assert.Empty(t, r.stderr)
		if cmd == "show" {
			assert.Equal(t, canonLines(s1, f1), r.stdout, "the finish without its newline is read")
		} else {
			assert.Contains(t, r.stdout, `"open":0`, "the finish without its newline closes the operation")
		}
	}
}
