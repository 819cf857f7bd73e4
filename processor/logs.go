package sandboxauditprocessor // import "github.com/sandboxaudit/sandboxaudit/processor"

import (
	"context"
	"errors"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sandboxaudit/sandboxaudit/internal/logmap"
	"github.com/sandboxaudit/sandboxaudit/internal/redact"
	"github.com/sandboxaudit/sandboxaudit/internal/spanmap"
	"github.com/sandboxaudit/sandboxaudit/semconv"
)

// processLogs applies the policy to each record of ld (applyRecord).
func (p *spanPolicy) processLogs(ctx context.Context, ld plog.Logs) (plog.Logs, error) {
	var cuts redact.Counts
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		sls := rls.At(i).ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			records := sls.At(j).LogRecords()
			for k := 0; k < records.Len(); k++ {
				p.applyRecord(records.At(k), &cuts)
			}
		}
	}
	p.count(ctx, &cuts)
	return ld, nil
}

// applyRecord applies the payload policy to one log record as the exporter
// applies it to the event the record holds (docs/format.md, "Inside the
// collector"): the body becomes the line the exporter writes, which holds
// the output the policy lets through, so the raw output attributes go.
// A record named as an audit event that does not map gets no line from the
// exporter: its body is emptied and its exec output removed. Any other
// record is treated as a span: the policy applies to the payload attributes
// it carries under their sandbox names, without exec output, which reaches
// no audit line.
func (p *spanPolicy) applyRecord(lr plog.LogRecord, cuts *redact.Counts) {
	attrs := lr.Attributes()
	e, _, err := logmap.FromLogRecord(lr)
	if err == nil {
		pol := p.policies.Get(e.Op)
		line := pol.AppendLine(nil, &e, cuts)
		lr.Body().SetStr(string(line[:len(line)-1]))
		spanmap.KeepLastCopies(attrs)
		attrs.Remove(semconv.AttrExecStdoutBytes)
		attrs.Remove(semconv.AttrExecStderrBytes)
		applyAttrs(attrs, pol, cuts)
		return
	}
	named := !errors.Is(err, logmap.ErrNotAuditEvent) || isEventName(lr.EventName())
	k := readKeys(attrs)
	if !named && !k.governed {
		return
	}
	if named {
		pcommon.NewValueEmpty().CopyTo(lr.Body())
	}
	spanmap.KeepLastCopies(attrs)
	pol := p.policies.Get(k.op)
	pol.IncludeExecOutput = false
	applyAttrs(attrs, pol, cuts)
}

func isEventName(name string) bool {
	return name == semconv.EventSessionStart || name == semconv.EventSessionFinish
}
