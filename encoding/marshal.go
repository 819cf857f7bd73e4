package sandboxauditencoding // import "github.com/sandboxaudit/sandboxaudit/encoding"

import (
	"context"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/logfield"
	"github.com/sandboxaudit/sandboxaudit/internal/logmap"
	"github.com/sandboxaudit/sandboxaudit/internal/redact"
)

// MarshalTraces writes the start and finish events of every sandbox span in
// td as canonical lines, spans in order, under the extension's payload
// policy. Other spans are skipped and counted; malformed sandbox spans are
// skipped, counted and logged (attribute names only). It never fails: an
// error would make the kafka exporter drop the whole batch, valid spans
// included. A batch without sandbox spans gives an empty message.
func (e *encodingExtension) MarshalTraces(td ptrace.Traces) ([]byte, error) {
	ep := e.getEvents()
	defer e.putEvents(ep)
	events, st := e.mapper.AppendTraces((*ep)[:0], td)
	*ep = events

	ctx := context.Background()
	e.telemetry.skipped(ctx, reasonNotSandboxSpan, st.NotSandbox)
	e.telemetry.skipped(ctx, reasonInvalidSpan, st.Invalid)
	logfield.SpanStats(e.logger, st)
	logfield.SeqEvictions(e.logger, e.telemetry.seqSessionsEvicted(ctx, e.mapper.SeqEvictions()))
	return e.appendLines(ctx, events), nil
}

// MarshalLogs writes the audit event records in ld (docs/format.md, "Inside
// the collector") as canonical lines, in order, under the extension's
// payload policy; raw exec output in the records' bytes attributes is what
// include_exec_output decodes. Other records are skipped and counted;
// records that claim to be audit events but do not decode are skipped,
// counted and logged (field and error type only). Like MarshalTraces it
// never fails.
func (e *encodingExtension) MarshalLogs(ld plog.Logs) ([]byte, error) {
	ep := e.getEvents()
	defer e.putEvents(ep)
	events, st := logmap.AppendLogs((*ep)[:0], ld)
	*ep = events

	ctx := context.Background()
	e.telemetry.skipped(ctx, reasonNotAuditEvent, st.NotAudit)
	e.telemetry.skipped(ctx, reasonInvalidEvent, st.Invalid)
	logfield.RecordStats(e.logger, st)
	return e.appendLines(ctx, events), nil
}

// appendLines encodes events into a new buffer: the caller (a Kafka
// producer) keeps it until the broker acknowledged it, so it is not pooled.
func (e *encodingExtension) appendLines(ctx context.Context, events []auditevent.Event) []byte {
	if len(events) == 0 {
		return []byte{}
	}
	buf := make([]byte, 0, 512*len(events))
	var cuts redact.Counts
	for i := range events {
		buf = e.policies.Get(events[i].Op).AppendLine(buf, &events[i], &cuts)
	}
	e.telemetry.redacted(ctx, &cuts)
	e.telemetry.tb.SandboxauditEncodingEventsMarshaled.Add(ctx, int64(len(events)))
	return buf
}
