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
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/plog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// An event whose line, escapes included, would pass max_line_bytes is
// refused with the whole push before anything is written: a permanent
// InvalidArgument error (a 400 over OTLP) naming the field and the limit,
// with the size error kept for errors.As, counted by reason. Over the
// traces path the span's data is refused before it is canonicalized.
func TestEventOverMaxLineBytesIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	cfg := syncConfig()
	withFile(cfg, path, auditevent.PolicyOverride{})
	cfg.MaxLineBytes = 4096
	te := startExporters(t, cfg)

	// Data already canonical (700 DEL bytes written \u007f) is kept as it
	// is decoded, and its line counted before it is written.
	ld := buildAuditLogs()
	big := strings.Replace(execStartJSON(), `"cwd":"/w"`, `"cwd":"`+strings.Repeat(`\u007f`, 700)+`"`, 1)
	ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Body().SetStr(big)
	err := te.logs.ConsumeLogs(context.Background(), ld)
	require.Error(t, err)
	assert.True(t, consumererror.IsPermanent(err))
	st, ok := status.FromError(err)
	require.True(t, ok)
	assert.Equal(t, codes.InvalidArgument, st.Code())
	var tl *auditevent.TooLongError
	require.True(t, errors.As(err, &tl), "%v", err)
	assert.Equal(t, "data", tl.Field)
	assert.Contains(t, err.Error(), "max_line_bytes (4096 bytes)")
	_, statErr := os.Stat(path)
	assert.True(t, os.IsNotExist(statErr), "nothing was written")
	assert.Equal(t, int64(2), te.counter(t, "otelcol_sandboxaudit_exporter_items_skipped", "reason", "line_too_long"))

	// Data to canonicalize (700 raw DEL bytes: 700 bytes in the record,
	// 4,200 in a line) is refused while it is decoded, before its text is
	// built.
	raw := strings.Replace(execStartJSON(), `"cwd":"/w"`, `"cwd":"`+strings.Repeat("\x7f", 700)+`"`, 1)
	require.Less(t, len(raw), 4096)
	ld = buildAuditLogs()
	records := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
	records.At(0).Body().SetStr(raw)
	records.RemoveIf(func(lr plog.LogRecord) bool { return lr.Body().Str() != raw })
	err = te.logs.ConsumeLogs(context.Background(), ld)
	require.Error(t, err)
	st, _ = status.FromError(err)
	assert.Equal(t, codes.InvalidArgument, st.Code())
	require.True(t, errors.As(err, &tl), "%v", err)
	assert.Contains(t, err.Error(), "data: the event's line would be over max_line_bytes (4096 bytes)")
	assert.Equal(t, int64(3), te.counter(t, "otelcol_sandboxaudit_exporter_items_skipped", "reason", "line_too_long"))

	spans := sampleSpans()[:1]
	spans[0].attrs["sandbox.start_data"] = `{"cwd":"` + strings.Repeat("\x7f", 700) + `"}`
	err = te.traces.ConsumeTraces(context.Background(), buildTraces(t, spans...))
	require.Error(t, err)
	st, _ = status.FromError(err)
	assert.Equal(t, codes.InvalidArgument, st.Code())
	assert.Contains(t, err.Error(), "sandbox.start_data: the event's line would be over max_line_bytes (4096 bytes)")
	assert.Equal(t, int64(4), te.counter(t, "otelcol_sandboxaudit_exporter_items_skipped", "reason", "line_too_long"))

	// Within the limit, written as before.
	require.NoError(t, te.logs.ConsumeLogs(context.Background(), buildAuditLogs()))
	assert.Len(t, readLines(t, path), 2)
}

func TestMaxLineBytesIsValidated(t *testing.T) {
	cfg := syncConfig()
	withFile(cfg, filepath.Join(t.TempDir(), "e.jsonl"), auditevent.PolicyOverride{})
	cfg.MaxLineBytes = 10
	require.ErrorContains(t, confmap.Validate(cfg), "max_line_bytes: must be at least 1024")
	assert.Equal(t, 24<<20, createDefaultConfig().(*Config).MaxLineBytes)
}
