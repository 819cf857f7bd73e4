package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/trail"
)

// longTraceTrail writes a trail of n sessions, each of one operation in a
// trace of idBytes bytes of its own; repeat writes the first line twice,
// so sessions reads the trail a second time (a seq used twice).
func longTraceTrail(t *testing.T, n, idBytes int, repeat bool) string {
	t.Helper()
	var b strings.Builder
	for k := range n {
		s, f := op(uuid.NewSHA1(sessionA, []byte{byte(k), byte(k >> 8)}), "exec", "span", 1, 2)
		trace := fmt.Sprintf("%d-%s", k, strings.Repeat("t", idBytes))
		s.TraceID, f.TraceID = &trace, &trace
		lines := canonLines(s, f)
		if repeat && k == 0 {
			lines = canonLines(s, s, f)
		}
		b.WriteString(lines)
	}
	return writeFile(t, "events.jsonl", b.String())
}

// sessions keeps one entry per session, and that entry does not grow with
// the session's trace id (the receiver takes an id of megabytes), in its
// first pass and in the second it makes when a seq repeats: a trail of
// many sessions, each with a long id, cannot take memory in proportion to
// the trail.
func TestSessionsDoNotHoldLongTraceIDs(t *testing.T) {
	const sessions, idBytes = 64, 256 << 10
	for _, repeat := range []bool{false, true} {
		p := longTraceTrail(t, sessions, idBytes, repeat)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		list, st, err := trail.ReadSessions(context.Background(), []string{p}, trail.Options{})
		runtime.GC()
		runtime.ReadMemStats(&after)
		require.NoError(t, err)
		require.Len(t, list, sessions)
		assert.Equal(t, int64(0), st.Bad)
		held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
		assert.Less(t, held, int64(sessions*idBytes/4), "repeat %v: %d sessions with %d-byte trace ids hold %d bytes", repeat, sessions, idBytes, held)
		for _, s := range list {
			require.NotNil(t, s.LongTrace, "repeat %v", repeat)
			assert.Equal(t, trail.MaxTraceIDChars, len(s.TraceID))
		}
		runtime.KeepAlive(list)
	}
}

// sessions --output jsonl writes a trace id over trail.MaxTraceIDChars
// characters as its beginning, with the whole id's length and SHA-256: a
// script can still tell two ids apart and match one it holds. A usual id
// is written as it is, with neither field; the table cuts both to its
// column.
func TestSessionsPrintLongTraceIDs(t *testing.T) {
	long := "4bf92f35" + strings.Repeat("é", 3000)
	s, f := op(sessionA, "exec", "span", 1, 2)
	s.TraceID, f.TraceID = &long, &long
	s2, f2 := op(sessionB, "exec", "span", 1, 2)
	p := writeFile(t, "events.jsonl", canonLines(s, f, s2, f2))

	r := run(t, "", "sessions", "--output", "jsonl", p)
	require.Equal(t, exitOK, r.code, r.stderr)
	rows := map[string]map[string]any{}
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var row map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &row))
		rows[row["session_id"].(string)] = row
	}
	a, b := rows[sessionA.String()], rows[sessionB.String()]
	sum := sha256.Sum256([]byte(long))
	assert.True(t, a["trace_id"] == "4bf92f35"+strings.Repeat("é", trail.MaxTraceIDChars-8), "trace_id is the id's first %d characters", trail.MaxTraceIDChars)
	assert.Equal(t, float64(len(long)), a["trace_id_bytes"])
	assert.Equal(t, hex.EncodeToString(sum[:]), a["trace_id_sha256"])
	assert.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", b["trace_id"])
	assert.NotContains(t, b, "trace_id_bytes")
	assert.NotContains(t, b, "trace_id_sha256")
	assert.Contains(t, r.stdout, `"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","missing_seqs":0`)

	r = run(t, "", "sessions", p)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, " 4bf92f35"+strings.Repeat("é", 23)+"…\n")
	assert.Contains(t, r.stdout, " 4bf92f3577b34da6a3ce929d0e0e4736\n")
}
