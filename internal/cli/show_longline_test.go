package cli

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// The collector writes lines up to its max_line_bytes, 24 MiB by default:
// the reading tools read such a line as an event, as verify does, rather
// than calling it bad.
func TestShowReadsALineAsLongAsTheCollectorWrites(t *testing.T) {
	s, f := op(sessionA, "write", "span-1", 1, 2)
	s.Data = auditevent.MustParseData(`{"content":"` + strings.Repeat("x", 24<<20-2048) + `","path":"/big"}`)
	content := canonLines(s, f)
	require.Greater(t, len(content), 24<<20-4096)
	p := writeFile(t, "events.jsonl", content)

	r := run(t, "", "show", "--output", "jsonl", p)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.True(t, r.stdout == content, "the lines unchanged")
	r = run(t, "", "sessions", p)
	require.Equal(t, exitOK, r.code, r.stderr)
	r = run(t, "", "verify", p)
	require.Equal(t, exitOK, r.code, r.stderr)
}
