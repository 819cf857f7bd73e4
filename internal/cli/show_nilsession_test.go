package cli

import (
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The nil UUID is a session id like any other: --session with it keeps
// that session only, not every session.
func TestShowSessionFilterForTheNilUUID(t *testing.T) {
	s, f := op(uuid.Nil, "exec", "span-nil", 1, 2)
	s2, f2 := op(sessionA, "exec", "span-a", 1, 2)
	p := writeFile(t, "events.jsonl", canonLines(s, f, s2, f2))
	r := run(t, "", "show", "--session", uuid.Nil.String(), "--output", "jsonl", p)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Equal(t, canonLines(s, f), r.stdout)
	r = run(t, "", "show", "--session", uuid.Nil.String(), "--output", "jsonl", writeFile(t, "a.jsonl", canonLines(s2, f2)))
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Empty(t, strings.TrimSpace(r.stdout))
}
