package sandboxauditexporter

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// linesAsLogs is records holding each line in its body, set by setBody,
// under each event name (the Python JsonlOutboxSink's lines as a log
// shipper reads them, named as events by the pipeline or not).
func linesAsLogs(setBody func(pcommon.Value, string), names []string, lines ...string) plog.Logs {
	ld := plog.NewLogs()
	records := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	for i, line := range lines {
		lr := records.AppendEmpty()
		lr.SetEventName(names[i])
		setBody(lr.Body(), line)
	}
	return ld
}

func textBody(v pcommon.Value, line string)  { v.SetStr(line) }
func bytesBody(v pcommon.Value, line string) { v.SetEmptyBytes().FromRaw([]byte(line)) }

// TestLogsBytesBodyWrittenAsText: an event line as bytes (the filelog
// receiver's `encoding: nop`) is written as the same line as text is,
// byte for byte; a line under no audit event name is skipped either way.
func TestLogsBytesBodyWrittenAsText(t *testing.T) {
	names := []string{"sandbox.session.start", "sandbox.session.finish", ""}
	lines := []string{execStartJSON(), execFinishJSON(`"EXEC-OUT"`, `"EXEC-ERR"`), execStartJSON()}
	for _, optIn := range []bool{false, true} {
		written := map[string][]string{}
		for name, set := range map[string]func(pcommon.Value, string){"text": textBody, "bytes": bytesBody} {
			path := filepath.Join(t.TempDir(), "events.jsonl")
			cfg := syncConfig()
			withFile(cfg, path, auditevent.PolicyOverride{IncludeExecOutput: auditevent.Ptr(optIn)})
			te := startExporters(t, cfg)
			require.NoError(t, te.logs.ConsumeLogs(context.Background(), linesAsLogs(set, names, lines...)), name)
			assert.Equal(t, int64(1), te.counter(t, "otelcol_sandboxaudit_exporter_items_skipped", "reason", "not_audit_event"), name)
			written[name] = readLines(t, path)
		}
		finish := execFinishJSON("null", "null")
		if optIn {
			finish = lines[1]
		}
		assert.Equal(t, []string{canonical(t, lines[0]), canonical(t, finish)}, written["text"])
		assert.Equal(t, written["text"], written["bytes"], "include_exec_output: %v", optIn)
	}
}

// TestLogsBytesBodyNotUTF8Refused: bytes that are not UTF-8 cannot be an
// event's JSON line. Named as an event, the record is refused, naming the
// body and never its content; nothing is written.
func TestLogsBytesBodyNotUTF8Refused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	cfg := syncConfig()
	withFile(cfg, path, auditevent.PolicyOverride{})
	te := startExporters(t, cfg)

	line := execFinishJSON(`"SECRET-OUT`+"\xff"+`"`, "null")
	err := te.logs.ConsumeLogs(context.Background(), linesAsLogs(bytesBody, []string{"sandbox.session.finish"}, line))
	require.Error(t, err)
	assert.True(t, consumererror.IsPermanent(err), "%v", err)
	assert.Contains(t, err.Error(), "body: string_unicode")
	assert.NotContains(t, err.Error(), "SECRET")
	assert.Equal(t, int64(1), te.counter(t, "otelcol_sandboxaudit_exporter_items_skipped", "reason", "invalid_event"))
	_, statErr := os.Stat(path)
	assert.True(t, os.IsNotExist(statErr), "nothing was written")
}
