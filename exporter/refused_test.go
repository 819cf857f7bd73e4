package sandboxauditexporter

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/plog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// TestAllRefusedBatchFailsPermanently: a batch whose sandbox items were
// all refused (here the lone malformed record of buildAuditLogs, or a
// sandbox span with a bad session id) wrote nothing, so the push fails
// permanently, naming the field and never its value: a DeliverySync
// write-ahead caller learns that its start was not recorded. A batch with
// anything written still succeeds (TestLogsToFile, TestTracesToFile).
func TestAllRefusedBatchFailsPermanently(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	cfg := syncConfig()
	withFile(cfg, path, auditevent.PolicyOverride{})
	te := startExporters(t, cfg)

	ld := plog.NewLogs()
	buildAuditLogs().ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(3).CopyTo(
		ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty())
	err := te.logs.ConsumeLogs(context.Background(), ld)
	require.Error(t, err)
	assert.True(t, consumererror.IsPermanent(err), "%v", err)
	assert.Contains(t, err.Error(), "session_id: uuid_parsing")
	assert.NotContains(t, err.Error(), "SECRET")
	st, ok := status.FromError(err)
	require.True(t, ok, "a gRPC status the OTLP receiver answers with")
	assert.Equal(t, codes.InvalidArgument, st.Code(), "400 over OTLP/HTTP, not a 500")

	bad := sampleSpans()[1]
	bad.attrs["sandbox.session.id"] = "TOP-SECRET-session"
	err = te.traces.ConsumeTraces(context.Background(), buildTraces(t, bad))
	require.Error(t, err)
	assert.True(t, consumererror.IsPermanent(err), "%v", err)
	assert.Contains(t, err.Error(), "sandbox.session.id")
	assert.NotContains(t, err.Error(), "SECRET")

	_, statErr := os.Stat(path)
	assert.True(t, os.IsNotExist(statErr), "nothing was written")
}

// TestNamedRecordWithoutTextBodyIsRefused: a record named as an audit event
// whose body is not its line as text (a map of its fields here) is a
// malformed event, not an ordinary log record: a batch of only such records
// wrote nothing and fails permanently, naming the body, rather than
// answering success for records that were skipped.
func TestNamedRecordWithoutTextBodyIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	cfg := syncConfig()
	withFile(cfg, path, auditevent.PolicyOverride{})
	te := startExporters(t, cfg)

	ld := plog.NewLogs()
	lr := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.SetEventName("sandbox.session.start")
	lr.Body().SetEmptyMap().PutStr("op", "exec")
	err := te.logs.ConsumeLogs(context.Background(), ld)
	require.Error(t, err)
	assert.True(t, consumererror.IsPermanent(err), "%v", err)
	assert.Contains(t, err.Error(), "body: string_type")
	assert.Equal(t, int64(1), te.counter(t, "otelcol_sandboxaudit_exporter_items_skipped", "reason", "invalid_event"))

	_, statErr := os.Stat(path)
	assert.True(t, os.IsNotExist(statErr), "nothing was written")
}
