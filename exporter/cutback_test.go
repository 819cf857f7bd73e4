package sandboxauditexporter

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// TestAuditFileCutBackIsAnError: the audit file cut back by another
// process below lines the collector acknowledged is logged at ERROR with
// both sizes, and the next batch is written whole.
func TestAuditFileCutBackIsAnError(t *testing.T) {
	path, size, cutTo, logs := cutBackUnder(t, func(int64) int64 { return 0 })

	cut := logs.FilterLevelExact(zapcore.ErrorLevel).FilterMessageSnippet("cut back by another process").All()
	require.Len(t, cut, 1)
	fields := cut[0].ContextMap()
	assert.Equal(t, path, fields["path"])
	assert.Equal(t, size, fields["bytes_before"])
	assert.Equal(t, cutTo, fields["bytes_now"])
	require.Len(t, readLines(t, path), 1)
}

// anotherStart is a record of an exec start after buildAuditLogs's.
func anotherStart() plog.Logs {
	ld := plog.NewLogs()
	r := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	r.SetEventName("sandbox.session.start")
	body := strings.Replace(execStartJSON(), `"seq":1`, `"seq":3`, 1)
	r.Body().SetStr(strings.Replace(body, "0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e", "0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6f", 1))
	return ld
}

// TestATornLineACutLeftIsNotCalledAKilledWriters: the torn line a cut
// inside an acknowledged line leaves is cut off with a WARN that names the
// cut, not a writer killed before its line was acknowledged.
func TestATornLineACutLeftIsNotCalledAKilledWriters(t *testing.T) {
	_, _, _, logs := cutBackUnder(t, func(size int64) int64 { return size - 5 })

	torn := logs.FilterLevelExact(zapcore.WarnLevel).FilterMessageSnippet("torn last line").All()
	require.Len(t, torn, 1)
	assert.Contains(t, torn[0].Message, "left by the cut below acknowledged lines")
	assert.NotContains(t, torn[0].Message, "never acknowledged")
}

// cutBackUnder writes buildAuditLogs through an exporter to a file, cuts
// the file back to cut(its size) and writes anotherStart. It returns the
// file, its size before the cut, the size cut to and the exporter's logs.
func cutBackUnder(t *testing.T, cut func(size int64) int64) (path string, size, cutTo int64, logs *observer.ObservedLogs) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "events.jsonl")
	cfg := createDefaultConfig().(*Config)
	withFile(cfg, path, auditevent.PolicyOverride{})
	core, logs := observer.New(zapcore.InfoLevel)
	te := startExportersWithLogger(t, cfg, zap.New(core))
	ctx := context.Background()
	require.NoError(t, te.logs.ConsumeLogs(ctx, buildAuditLogs()))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	size, cutTo = fi.Size(), cut(fi.Size())
	require.NoError(t, os.Truncate(path, cutTo))
	require.NoError(t, te.logs.ConsumeLogs(ctx, anotherStart()))
	return path, size, cutTo, logs
}
