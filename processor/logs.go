package sandboxauditprocessor // import "github.com/sandboxaudit/sandboxaudit/processor"

import (
	"context"
	"errors"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
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
// Any other record is treated as a span the exporter writes no line for:
// a body that is an event line becomes that line without exec output;
// otherwise, when the policy governs the record (readKeys), the payload
// attributes it carries under their sandbox names get the policy without
// exec output, and its text body loses its output members and secrets.
func (p *spanPolicy) applyRecord(lr plog.LogRecord, cuts *redact.Counts) {
	attrs := lr.Attributes()
	e, _, err := logmap.FromLogRecord(lr)
	var pol payloadpolicy.Policy
	switch {
	case err == nil:
		pol = p.policies.Get(e.Op)
		setLine(lr.Body(), pol, &e, cuts)
	case errors.Is(err, logmap.ErrNotAuditEvent):
		e, holds := logmap.ReadEventInBody(lr)
		if holds == logmap.BodyEvent {
			pol = p.policies.Get(e.Op)
			pol.IncludeExecOutput = false
			setLine(lr.Body(), pol, &e, cuts)
			break
		}
		k := readKeys(attrs)
		if !k.governed {
			if holds == logmap.BodyNotDecoded {
				cutBrokenLine(lr.Body(), p.policies.Get(k.op).Redactor, cuts)
			}
			return
		}
		pol = p.policies.Get(k.op)
		applyBody(lr.Body(), pol.Redactor, cuts)
	default:
		pcommon.NewValueEmpty().CopyTo(lr.Body())
		pol = p.policies.Get(readKeys(attrs).op)
	}
	spanmap.KeepLastCopies(attrs)
	pol.IncludeExecOutput = false
	applyAttrs(attrs, pol, cuts)
}

// setLine sets body to the line the exporter writes of e under pol,
// without the newline. A body of bytes stays bytes, as it does when cut
// (applyBody): the backend gets the type the shipper sent.
func setLine(body pcommon.Value, pol payloadpolicy.Policy, e *auditevent.Event, cuts *redact.Counts) {
	line := pol.AppendLine(nil, e, cuts)
	line = line[:len(line)-1]
	if body.Type() == pcommon.ValueTypeBytes {
		body.Bytes().FromRaw(line)
		return
	}
	body.SetStr(string(line))
}

// applyBody applies the policy without exec output to a body that reaches
// the backend with no audit line made of it: a JSON object or a map loses
// its top-level stdout and stderr members, where an event holds its
// output, and secrets are cut from text (or bytes) as from a data
// attribute, and from a map's or a list's strings and bytes at every depth
// as from a JSON body's.
func applyBody(body pcommon.Value, r *redact.Redactor, cuts *redact.Counts) {
	switch body.Type() {
	case pcommon.ValueTypeMap:
		// The fields as a map, as a logging bridge sends a structured
		// message: its output goes, and its strings are cut as the same
		// members of a JSON body.
		body.Map().RemoveIf(func(k string, _ pcommon.Value) bool { return k == "stdout" || k == "stderr" })
		fallthrough
	case pcommon.ValueTypeSlice:
		if r != nil {
			redactTree(body, r, cuts)
		}
	case pcommon.ValueTypeStr, pcommon.ValueTypeBytes:
		// A backend shows bytes base64-encoded, hiding nothing: they are
		// cut as the text they hold, and stay bytes, as the bytes in a map
		// body do (redactTree).
		cutTextBody(body, func(s string) (string, bool) { return cutText(s, r, cuts) })
	}
}

// cutTextBody sets a text or bytes body to what cut makes of the text it
// holds, when cut changes it; bytes stay bytes. Other bodies stay as they
// are.
func cutTextBody(body pcommon.Value, cut func(s string) (out string, changed bool)) {
	switch body.Type() {
	case pcommon.ValueTypeStr:
		if out, changed := cut(body.Str()); changed {
			body.SetStr(out)
		}
	case pcommon.ValueTypeBytes:
		if out, changed := cut(string(body.Bytes().AsRaw())); changed {
			body.Bytes().FromRaw([]byte(out))
		}
	}
}

// cutText is what applyBody makes of a text body s: a JSON object's output
// members go and its values are cut as data; other text is cut as text.
// changed reports whether the body is to become out.
func cutText(s string, r *redact.Redactor, cuts *redact.Counts) (out string, changed bool) {
	d, err := auditevent.ParseDataString(s)
	if err != nil {
		// An object that does not parse may be an event line cut short,
		// whose output cannot be told from the rest: it goes from its first
		// output member on.
		return cutUnparsed(s, r, cuts)
	}
	kept := d.Without("stdout").Without("stderr")
	removed := len(kept.Bytes()) != len(d.Bytes())
	if r != nil {
		// Set even when nothing is cut: of a key named twice the canonical
		// text keeps the last copy, and the earlier one may hold a secret.
		kept, _ = r.Data(kept, cuts)
	}
	if removed || r != nil && kept.String() != s {
		return kept.String(), true
	}
	return s, false
}
