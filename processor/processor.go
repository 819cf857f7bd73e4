package sandboxauditprocessor // import "github.com/sandboxaudit/sandboxaudit/processor"

import (
	"context"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/payloadpolicy"
	"github.com/sandboxaudit/sandboxaudit/internal/redact"
	"github.com/sandboxaudit/sandboxaudit/internal/spanmap"
	"github.com/sandboxaudit/sandboxaudit/processor/internal/metadata"
	"github.com/sandboxaudit/sandboxaudit/semconv"
)

// spanPolicy applies the resolved payload policy to sandbox spans and to
// audit event log records.
type spanPolicy struct {
	policies *payloadpolicy.Table
	tb       *metadata.TelemetryBuilder
	genAI    bool
}

func newSpanPolicy(cfg *Config, tb *metadata.TelemetryBuilder) (*spanPolicy, error) {
	t, err := payloadpolicy.NewTable(auditevent.PolicySet{Default: cfg.PayloadPolicy, ByOp: cfg.PayloadPolicyByOp})
	if err != nil {
		return nil, err
	}
	return &spanPolicy{policies: t, tb: tb, genAI: cfg.GenAIAttributes}, nil
}

func (p *spanPolicy) processTraces(ctx context.Context, td ptrace.Traces) (ptrace.Traces, error) {
	var cuts redact.Counts
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				p.apply(spans.At(k), &cuts)
			}
		}
	}
	p.count(ctx, &cuts)
	return td, nil
}

// count records the cuts by kind.
func (p *spanPolicy) count(ctx context.Context, cuts *redact.Counts) {
	cuts.Each(func(kind string, n int) {
		p.tb.SandboxauditProcessorSecretsRedacted.Add(ctx, int64(n),
			metric.WithAttributeSet(attribute.NewSet(attribute.String("kind", kind))))
	})
}

// output pairs a stream's raw and decoded attributes with its limit.
type output struct {
	raw, decoded string
	max          func(auditevent.Policy) int
}

var streams = [...]output{
	{semconv.AttrExecStdoutBytes, semconv.AttrExecStdout, func(p auditevent.Policy) int { return p.MaxStdoutChars }},
	{semconv.AttrExecStderrBytes, semconv.AttrExecStderr, func(p auditevent.Policy) int { return p.MaxStderrChars }},
}

// apply applies the payload policy, redaction included, to one span as it
// applies to the span's events (docs/format.md, "The payload policy"). A
// span that is not a sandbox span and carries no attribute the policy
// governs is left alone. An attribute named twice is first cut to its last
// copy, the one the exporter's mapping reads.
func (p *spanPolicy) apply(span ptrace.Span, cuts *redact.Counts) {
	attrs := span.Attributes()
	k := readKeys(attrs)
	if !k.governed {
		return
	}
	spanmap.KeepLastCopies(attrs)
	if p.genAI && k.sandboxOp && k.hasSession {
		// Only a sandbox operation names a tool: the exporter refuses any
		// other value, which may hold anything a producer put there.
		addGenAI(attrs, k.op)
	}
	pol := p.policies.Get(k.op)
	if !k.writable {
		// The exporter writes no line for the span, so its output reaches
		// no audit line; it does not reach the backend either.
		pol.IncludeExecOutput = false
	}
	applyAttrs(attrs, pol, cuts)
	if pol.Redactor != nil {
		redactSpan(span, pol.Redactor, cuts)
	}
}

// applyAttrs applies the policy to the attributes that carry an event's
// payload: exec output, operation data and the error message. A span and a
// log record carry them under the same names.
func applyAttrs(attrs pcommon.Map, pol payloadpolicy.Policy, cuts *redact.Counts) {
	for _, s := range streams {
		applyOutput(attrs, s, pol, cuts)
	}
	if !pol.IncludeWriteLen {
		removeDataBytes(attrs, semconv.AttrStartData)
		removeDataBytes(attrs, semconv.AttrFinishData)
	}
	if pol.Redactor != nil {
		redactAttrs(attrs, pol.Redactor, cuts)
	}
}

// spanKeys is what apply reads of a span's attributes before editing them.
type spanKeys struct {
	// governed: the policy applies to the span, a sandbox span (operation
	// and session) or any span carrying exec output, operation data or an
	// error message under their sandbox names, so that output reaches the
	// backend only where a policy lets it through.
	governed bool
	op       string // the operation as text, "" when absent
	// sandboxOp: the operation is a string naming a version 1 operation.
	sandboxOp  bool
	hasSession bool
	// writable: the exporter can write the span's events, its op being a
	// version 1 operation and its session id a UUID.
	writable bool
}

// readKeys reads, in one pass, whether the policy governs the span and the
// last copy of its operation and session id (the copies KeepLastCopies
// keeps); the rest is left zero for a span the policy does not govern.
func readKeys(attrs pcommon.Map) spanKeys {
	var k spanKeys
	var opVal, session pcommon.Value
	var hasOp bool
	for key, v := range attrs.All() {
		switch key {
		case semconv.AttrExecStdoutBytes, semconv.AttrExecStderrBytes,
			semconv.AttrExecStdout, semconv.AttrExecStderr,
			semconv.AttrStartData, semconv.AttrFinishData, semconv.AttrErrorMessage:
			k.governed = true
		case semconv.AttrOperation:
			opVal, hasOp = v, true
		case semconv.AttrSessionID:
			session, k.hasSession = v, true
		}
	}
	k.governed = k.governed || hasOp && k.hasSession
	if !k.governed {
		return k
	}
	if hasOp {
		k.op = opVal.AsString()
		k.sandboxOp = opVal.Type() == pcommon.ValueTypeStr && auditevent.IsOp(k.op)
	}
	k.writable = k.sandboxOp && k.hasSession && session.Type() == pcommon.ValueTypeStr &&
		validUUID(session.Str())
	return k
}

func validUUID(s string) bool {
	_, err := auditevent.ParseUUID(s)
	return err == nil
}

// applyOutput: output excluded removes the raw and decoded attributes;
// included replaces raw bytes by their decoded, redacted, cut text, or
// redacts the text there is without them. Raw bytes that do not decode (a
// bad base64 string) are removed with the decoded text, which they may have
// been meant to replace.
func applyOutput(attrs pcommon.Map, s output, pol payloadpolicy.Policy, cuts *redact.Counts) {
	if !pol.IncludeExecOutput {
		attrs.Remove(s.raw)
		attrs.Remove(s.decoded)
		return
	}
	v, ok := attrs.Get(s.raw)
	if ok {
		b, err := spanmap.DecodeExecOutput(v)
		attrs.Remove(s.raw)
		switch {
		case err != nil:
			attrs.Remove(s.decoded)
			return
		case b != nil:
			putDecoded(attrs, s, b, pol, cuts)
			return
		}
		// An empty value is no output, as the exporter reads it.
	}
	// Text without raw bytes stays (docs/format.md, "The payload policy"),
	// redacted as the exporter redacts it.
	if pol.Redactor != nil {
		redactStr(attrs, s.decoded, pol.Redactor, cuts)
	}
}

// putDecoded replaces the stream's text by the raw bytes b decoded, redacted
// and cut. The cut text is not scanned again: it may end inside a marker or
// a header name, which a second pass would cut differently from the
// exporter.
func putDecoded(attrs pcommon.Map, s output, b []byte, pol payloadpolicy.Policy, cuts *redact.Counts) {
	if pol.Redactor != nil {
		attrs.PutStr(s.decoded, pol.Redactor.Output(b, s.max(pol.Policy), cuts))
		return
	}
	attrs.PutStr(s.decoded, auditevent.SafeDecode(b, s.max(pol.Policy)))
}

// removeDataBytes drops the top-level "bytes" key of a data attribute. A
// value that is not a JSON object is left for the exporter to report.
func removeDataBytes(attrs pcommon.Map, key string) {
	v, ok := attrs.Get(key)
	if !ok || v.Type() != pcommon.ValueTypeStr {
		return
	}
	d, err := auditevent.ParseData([]byte(v.Str()))
	if err != nil {
		return
	}
	if _, has := d.Lookup("bytes"); has {
		attrs.PutStr(key, d.Without("bytes").String())
	}
}
