package sandboxauditexporter

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// A marker is longer than a short cut, so redaction can make a line longer
// than its event: max_line_bytes bounds the line as written, redacted.
// Here 300 one-byte matches make 300 markers, a line of some 7,800 bytes
// from an event of some 600.
func TestRedactedLineOverMaxLineBytesIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	cfg := syncConfig()
	withFile(cfg, path, auditevent.PolicyOverride{Redact: auditevent.RedactOverride{Patterns: []string{"x"}}})
	cfg.MaxLineBytes = 4096
	te := startExporters(t, cfg)

	ld := buildAuditLogs()
	big := strings.Replace(execStartJSON(), `"cwd":"/w"`, `"cwd":"`+strings.Repeat("x", 300)+`"`, 1)
	require.Less(t, len(big), 1024)
	ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Body().SetStr(big)
	err := te.logs.ConsumeLogs(context.Background(), ld)
	require.Error(t, err)
	var tl *auditevent.TooLongError
	require.True(t, errors.As(err, &tl), "%v", err)
	assert.Equal(t, "data", tl.Field)
	assert.Greater(t, tl.Size, 4096)
	_, statErr := os.Stat(path)
	assert.True(t, os.IsNotExist(statErr), "nothing was written")

	// A line that redaction keeps within the limit is written.
	require.NoError(t, te.logs.ConsumeLogs(context.Background(), buildAuditLogs()))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, line := range strings.SplitAfter(string(b), "\n") {
		assert.LessOrEqual(t, len(line), 4096)
	}
}
