package sandboxauditexporter

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// buildAuditLogs makes records the way docs/format.md describes them, by
// hand: an exec start, an exec finish with raw output in bytes attributes,
// an ordinary log line, and a finish record whose body is not a valid event.
func buildAuditLogs() plog.Logs {
	ld := plog.NewLogs()
	records := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()

	start := records.AppendEmpty()
	start.SetEventName("sandbox.session.start")
	start.SetSeverityNumber(plog.SeverityNumberInfo)
	start.Body().SetStr(execStartJSON())
	start.Attributes().PutStr("sandbox.session.id", sessionA)
	start.Attributes().PutStr("sandbox.operation", "exec")

	finish := records.AppendEmpty()
	finish.SetEventName("sandbox.session.finish")
	finish.SetSeverityNumber(plog.SeverityNumberInfo)
	finish.Body().SetStr(execFinishJSON("null", "null"))
	finish.Attributes().PutEmptyBytes("sandbox.exec.stdout_bytes").FromRaw([]byte("hello\n"))
	finish.Attributes().PutEmptyBytes("sandbox.exec.stderr_bytes").FromRaw([]byte("warn\xff"))

	plain := records.AppendEmpty()
	plain.Body().SetStr("GET /healthz 200")
	plain.SetTimestamp(pcommon.NewTimestampFromTime(execStart))

	bad := records.AppendEmpty()
	bad.SetEventName("sandbox.session.finish")
	bad.Body().SetStr(`{"version":1,"phase":"finish","op":"exec","seq":2,"span_id":"x",` +
		`"session_id":"TOP-SECRET-not-a-uuid","ok":true,"duration_ms":1.0}`)
	return ld
}

func TestLogsToFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	cfg := syncConfig()
	withFile(cfg, path, auditevent.PolicyOverride{})
	core, logs := observer.New(zapcore.DebugLevel)
	te := startExportersWithLogger(t, cfg, zap.New(core))

	require.NoError(t, te.logs.ConsumeLogs(context.Background(), buildAuditLogs()))

	assert.Equal(t, []string{
		canonical(t, execStartJSON()),
		canonical(t, execFinishJSON("null", "null")),
	}, readLines(t, path))
	assert.Equal(t, int64(2), te.counter(t, "otelcol_sandboxaudit_exporter_events_written", "sink", "file"))
	assert.Equal(t, int64(1), te.counter(t, "otelcol_sandboxaudit_exporter_items_skipped", "reason", "not_audit_event"))
	assert.Equal(t, int64(1), te.counter(t, "otelcol_sandboxaudit_exporter_items_skipped", "reason", "invalid_event"))

	warned := logs.FilterLevelExact(zapcore.WarnLevel).All()
	require.Len(t, warned, 1)
	assert.Equal(t, "session_id: uuid_parsing", warned[0].ContextMap()["first"])
	for _, entry := range logs.All() {
		assert.NotContains(t, entry.Message, "SECRET")
		for _, v := range entry.ContextMap() {
			assert.NotContains(t, fmt.Sprint(v), "SECRET")
		}
	}
}

func TestLogsExecOutputOptIn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	cfg := syncConfig()
	withFile(cfg, path, auditevent.PolicyOverride{IncludeExecOutput: auditevent.Ptr(true)})
	te := startExporters(t, cfg)

	require.NoError(t, te.logs.ConsumeLogs(context.Background(), buildAuditLogs()))

	assert.Equal(t, []string{
		canonical(t, execStartJSON()),
		canonical(t, execFinishJSON(`"hello\n"`, `"warn\ufffd"`)),
	}, readLines(t, path))
}
