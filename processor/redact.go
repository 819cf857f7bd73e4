package sandboxauditprocessor // import "github.com/sandboxaudit/sandboxaudit/processor"

import (
	"math"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/redact"
	"github.com/sandboxaudit/sandboxaudit/semconv"
)

// redactSpan cuts secrets from the span fields its events are made of:
// both data attributes, the error message and the status message it falls
// back to, the exception events that repeat it, and decoded output the
// producer sent as text. Raw output was decoded and redacted by applyOutput.
func redactSpan(span ptrace.Span, r *redact.Redactor, cuts *redact.Counts) {
	attrs := span.Attributes()
	redactData(attrs, semconv.AttrStartData, r, cuts)
	redactData(attrs, semconv.AttrFinishData, r, cuts)
	for _, key := range [...]string{semconv.AttrErrorMessage, semconv.AttrExecStdout, semconv.AttrExecStderr} {
		redactStr(attrs, key, r, cuts)
	}
	if msg := span.Status().Message(); msg != "" {
		if s, changed := r.String(msg, cuts); changed {
			span.Status().SetMessage(s)
		}
	}
	redactExceptions(span.Events(), r, cuts)
}

// The OTel exception event and the attributes that repeat the error text.
const (
	exceptionEvent      = "exception"
	exceptionMessage    = "exception.message"
	exceptionStacktrace = "exception.stacktrace"
)

// redactExceptions cuts secrets from the exception events an OTel SDK adds
// when it records an error: their message is the status message's, which
// the exporter's error_message may come from.
func redactExceptions(events ptrace.SpanEventSlice, r *redact.Redactor, cuts *redact.Counts) {
	for i := range events.Len() {
		ev := events.At(i)
		if ev.Name() != exceptionEvent {
			continue
		}
		redactStr(ev.Attributes(), exceptionMessage, r, cuts)
		redactStr(ev.Attributes(), exceptionStacktrace, r, cuts)
	}
}

// redactData redacts a data attribute as the exporter redacts an event's
// data. Text that is not a JSON object, and a value of another type, make
// the exporter refuse the span; they are redacted too, so a tracing backend
// does not get them in clear.
func redactData(attrs pcommon.Map, key string, r *redact.Redactor, cuts *redact.Counts) {
	v, ok := attrs.Get(key)
	if !ok {
		return
	}
	if v.Type() != pcommon.ValueTypeStr {
		redactValue(v, r, cuts)
		return
	}
	d, err := auditevent.ParseDataString(v.Str())
	if err != nil {
		redactValue(v, r, cuts)
		return
	}
	if red, changed := r.Data(d, cuts); changed {
		v.SetStr(red.String())
	}
}

// redactStr redacts a text attribute; a value of another type (the exporter
// refuses or drops it) is redacted by redactValue.
func redactStr(attrs pcommon.Map, key string, r *redact.Redactor, cuts *redact.Counts) {
	if v, ok := attrs.Get(key); ok {
		redactValue(v, r, cuts)
	}
}

// redactValue cuts secrets from v in place: text as text, bytes as their
// UTF-8 text, a map as a data object (so its keys count, as in data), each
// element of a list on its own. A value that had a cut becomes text.
func redactValue(v pcommon.Value, r *redact.Redactor, cuts *redact.Counts) {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		if s, changed := r.String(v.Str(), cuts); changed {
			v.SetStr(s)
		}
	case pcommon.ValueTypeBytes:
		if s, changed := r.String(auditevent.SafeDecode(v.Bytes().AsRaw(), math.MaxInt), cuts); changed {
			v.SetStr(s)
		}
	case pcommon.ValueTypeMap:
		text := v.AsString()
		d, err := auditevent.ParseDataString(text)
		if err != nil {
			if s, changed := r.String(text, cuts); changed {
				v.SetStr(s)
			}
			return
		}
		if red, changed := r.Data(d, cuts); changed {
			v.SetStr(red.String())
		}
	case pcommon.ValueTypeSlice:
		for i := range v.Slice().Len() {
			redactValue(v.Slice().At(i), r, cuts)
		}
	}
}
