package sandboxauditexporter

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// earlyExecFinish is the finish record a DeliverySyncFinish session sends
// for the exec span of sampleSpans before the operation returns.
func earlyExecFinish() plog.Logs {
	ld := plog.NewLogs()
	r := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	r.SetEventName("sandbox.session.finish")
	r.Body().SetStr(execFinishJSON("null", "null"))
	r.Attributes().PutStr("sandbox.session.id", sessionA)
	r.Attributes().PutStr("sandbox.operation", "exec")
	return ld
}

func TestFinishSentAheadIsWrittenOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	cfg := syncConfig()
	withFile(cfg, path, auditevent.PolicyOverride{})
	te := startExporters(t, cfg)
	ctx := context.Background()
	require.NoError(t, te.logs.ConsumeLogs(ctx, earlyExecStart()))
	require.NoError(t, te.logs.ConsumeLogs(ctx, earlyExecFinish()))
	require.NoError(t, te.traces.ConsumeTraces(ctx, buildTraces(t, sampleSpans()[0])))
	assert.Equal(t, []string{
		canonical(t, execStartJSON()),
		canonical(t, execFinishJSON("null", "null")),
	}, readLines(t, path), "the span's copies of both events are left out")
}

func TestFinishesAreNotWindowedWithoutAFinishAhead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	cfg := syncConfig()
	withFile(cfg, path, auditevent.PolicyOverride{})
	te := startExporters(t, cfg)
	ctx := context.Background()
	require.NoError(t, te.traces.ConsumeTraces(ctx, buildTraces(t, sampleSpans()[0])))
	require.NoError(t, te.traces.ConsumeTraces(ctx, buildTraces(t, sampleSpans()[0])))
	lines := readLines(t, path)
	require.Len(t, lines, 3, "the resent span's finish is written again: only starts are windowed")
	assert.Equal(t, lines[1], lines[2])
}

// A sync session's start and finish records sent again (a direct export
// resent on a new connection) are written once each.
func TestResentStartAndFinishRecordsAreWrittenOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	cfg := syncConfig()
	withFile(cfg, path, auditevent.PolicyOverride{})
	te := startExporters(t, cfg)
	ctx := context.Background()
	for range 2 {
		require.NoError(t, te.logs.ConsumeLogs(ctx, earlyExecStart()))
	}
	for range 2 {
		require.NoError(t, te.logs.ConsumeLogs(ctx, earlyExecFinish()))
	}
	assert.Equal(t, []string{
		canonical(t, execStartJSON()),
		canonical(t, execFinishJSON("null", "null")),
	}, readLines(t, path))
}
