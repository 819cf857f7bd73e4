package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// TestGrepFindsALongCommandWhole: --grep reads a command as the table
// shows it, but whole: arguments past the first KiB (where the command the
// table carries is cut) are found, and the "…" that ends a cut command is
// not the command's, so it is not found. Both table and jsonl outputs.
func TestGrepFindsALongCommandWhole(t *testing.T) {
	command, err := json.Marshal([]string{"env", "SCRIPT=" + strings.Repeat("x", 1100), "rm", "-rf", "/workspace"})
	require.NoError(t, err)
	long, longF := op(sessionA, "exec", "span-1", 1, 2)
	long.Data = auditevent.MustParseData(`{"command":` + string(command) + `,"shell":false}`)
	p := writeFile(t, "events.jsonl", canonLines(long, longF))
	for _, output := range []string{"jsonl", "table"} {
		r := run(t, "", "show", "--output", output, "--grep", "rm -rf /workspace", p)
		require.Equal(t, exitOK, r.code, r.stderr)
		if output == "jsonl" {
			assert.Equal(t, canonLines(long, longF), r.stdout, output)
		} else {
			assert.Contains(t, r.stdout, "env SCRIPT=xxx", output)
		}
		r = run(t, "", "show", "--output", output, "--grep", "x…", p)
		require.Equal(t, exitOK, r.code, r.stderr)
		if output == "jsonl" {
			assert.Empty(t, r.stdout, output)
		} else {
			assert.NotContains(t, r.stdout, "env SCRIPT=", output)
		}
	}
}
