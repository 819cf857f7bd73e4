package sandboxauditprocessor // import "github.com/sandboxaudit/sandboxaudit/processor"

import (
	"context"
	"errors"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sandboxaudit/sandboxaudit/internal/logmap"
	"github.com/sandboxaudit/sandboxaudit/internal/payloadpolicy"
	"github.com/sandboxaudit/sandboxaudit/internal/redact"
	"github.com/sandboxaudit/sandboxaudit/internal/spanmap"
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
// the output the policy lets through, so the output attributes, raw or
// text, go. A record named as an audit event that does not map gets no
// line from the exporter: its body is emptied and its exec output removed.
// Any other record the policy governs (readKeys) is treated as a span: the
// policy applies to the payload attributes it carries under their sandbox
// names, without exec output, which reaches no audit line; secrets in its
// text body are cut.
func (p *spanPolicy) applyRecord(lr plog.LogRecord, cuts *redact.Counts) {
	attrs := lr.Attributes()
	e, _, err := logmap.FromLogRecord(lr)
	var pol payloadpolicy.Policy
	switch {
	case err == nil:
		pol = p.policies.Get(e.Op)
		line := pol.AppendLine(nil, &e, cuts)
		lr.Body().SetStr(string(line[:len(line)-1]))
	case errors.Is(err, logmap.ErrNotAuditEvent):
		k := readKeys(attrs)
		if !k.governed {
			return
		}
		pol = p.policies.Get(k.op)
		redactBody(lr.Body(), pol.Redactor, cuts)
	default:
		pcommon.NewValueEmpty().CopyTo(lr.Body())
		pol = p.policies.Get(readKeys(attrs).op)
	}
	spanmap.KeepLastCopies(attrs)
	pol.IncludeExecOutput = false
	applyAttrs(attrs, pol, cuts)
}

// redactBody cuts secrets from a text body that reaches the backend with
// no audit line made of it, as from a data attribute.
func redactBody(body pcommon.Value, r *redact.Redactor, cuts *redact.Counts) {
	if r != nil && body.Type() == pcommon.ValueTypeStr {
		redactJSONText(body, r, cuts)
	}
}
