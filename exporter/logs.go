package sandboxauditexporter // import "github.com/sandboxaudit/sandboxaudit/exporter"

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sandboxaudit/sandboxaudit/internal/logfield"
	"github.com/sandboxaudit/sandboxaudit/internal/logmap"
)

// pushLogs writes the records that are audit events (docs/format.md, "Inside
// the collector"). Other records are skipped and counted; records that claim
// to be audit events but do not decode are skipped, counted and logged.
func (e *auditExporter) pushLogs(ctx context.Context, ld plog.Logs) error {
	ep := e.eventBufs.get()
	defer e.eventBufs.put(ep)

	events, st := logmap.AppendLogsLimit((*ep)[:0], ld, e.cfg.MaxLineBytes)
	*ep = events
	e.telemetry.skipped(ctx, reasonNotAuditEvent, st.NotAudit)
	e.telemetry.skipped(ctx, reasonInvalidEvent, st.Invalid-st.TooLong)
	e.telemetry.skipped(ctx, reasonLineTooLong, st.TooLong)
	logfield.RecordStats(e.logger, st)
	if st.Invalid > 0 && len(events) == 0 {
		msg := fmt.Sprintf("%d audit event records refused, none written; first: %s", st.Invalid, logfield.EventFieldText(st.FirstInvalid))
		return allRefused(msg, st.FirstInvalid)
	}
	e.starts.finishAhead(events)
	return e.writeEvents(ctx, events)
}
