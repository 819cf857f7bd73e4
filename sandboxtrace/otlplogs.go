package sandboxtrace

import (
	"go.opentelemetry.io/otel/attribute"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	common "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	respb "go.opentelemetry.io/proto/otlp/resource/v1"
)

// scopeKey tells instrumentation scopes apart: loggers that differ only
// in their attributes are two scopes.
type scopeKey struct {
	name, version, schemaURL string
	attrs                    attribute.Distinct
}

// logsRequest is records as one OTLP export request. Consecutive records
// of one resource and scope share their ResourceLogs and ScopeLogs: a
// session's records all do.
func logsRequest(records []sdklog.Record) *collogs.ExportLogsServiceRequest {
	req := &collogs.ExportLogsServiceRequest{}
	var (
		lastRes   *resource.Resource
		lastScope scopeKey
		rl        *logspb.ResourceLogs
		sl        *logspb.ScopeLogs
	)
	for i := range records {
		r := &records[i]
		if rl == nil || r.Resource() != lastRes {
			lastRes = r.Resource()
			rl = &logspb.ResourceLogs{Resource: resourceProto(lastRes)}
			if lastRes != nil {
				rl.SchemaUrl = lastRes.SchemaURL()
			}
			req.ResourceLogs = append(req.ResourceLogs, rl)
			sl = nil
		}
		scope := r.InstrumentationScope()
		key := scopeKey{scope.Name, scope.Version, scope.SchemaURL, scope.Attributes.Equivalent()}
		if sl == nil || key != lastScope {
			lastScope = key
			sl = &logspb.ScopeLogs{
				Scope:     &common.InstrumentationScope{Name: scope.Name, Version: scope.Version, Attributes: attrsProto(scope.Attributes.ToSlice())},
				SchemaUrl: scope.SchemaURL,
			}
			rl.ScopeLogs = append(rl.ScopeLogs, sl)
		}
		sl.LogRecords = append(sl.LogRecords, recordProto(r))
	}
	return req
}

func recordProto(r *sdklog.Record) *logspb.LogRecord {
	lr := &logspb.LogRecord{
		EventName:              r.EventName(),
		SeverityNumber:         logspb.SeverityNumber(r.Severity()),
		SeverityText:           r.SeverityText(),
		Body:                   attrValueProto(r.Body()),
		DroppedAttributesCount: uint32(max(r.DroppedAttributes(), 0)), //nolint:gosec // clamped to >= 0
		Flags:                  uint32(r.TraceFlags()),
	}
	if t := r.Timestamp(); !t.IsZero() {
		lr.TimeUnixNano = uint64(t.UnixNano()) //nolint:gosec // a time after 1970
	}
	if t := r.ObservedTimestamp(); !t.IsZero() {
		lr.ObservedTimeUnixNano = uint64(t.UnixNano()) //nolint:gosec // a time after 1970
	}
	if id := r.TraceID(); id.IsValid() {
		lr.TraceId = id[:]
	}
	if id := r.SpanID(); id.IsValid() {
		lr.SpanId = id[:]
	}
	lr.Attributes = make([]*common.KeyValue, 0, r.AttributesLen())
	r.WalkAttributes(func(kv attribute.KeyValue) bool {
		lr.Attributes = append(lr.Attributes, &common.KeyValue{Key: string(kv.Key), Value: attrValueProto(kv.Value)})
		return true
	})
	return lr
}

func resourceProto(res *resource.Resource) *respb.Resource {
	if res == nil {
		return &respb.Resource{}
	}
	return &respb.Resource{Attributes: attrsProto(res.Attributes())}
}

func attrsProto(kvs []attribute.KeyValue) []*common.KeyValue {
	if len(kvs) == 0 {
		return nil
	}
	out := make([]*common.KeyValue, len(kvs))
	for i, kv := range kvs {
		out[i] = &common.KeyValue{Key: string(kv.Key), Value: attrValueProto(kv.Value)}
	}
	return out
}

// attrValueProto is v as an OTLP AnyValue; nil for an empty value.
func attrValueProto(v attribute.Value) *common.AnyValue {
	str := func(s string) *common.AnyValue {
		return &common.AnyValue{Value: &common.AnyValue_StringValue{StringValue: s}}
	}
	arr := func(n int, at func(int) *common.AnyValue) *common.AnyValue {
		a := &common.ArrayValue{Values: make([]*common.AnyValue, n)}
		for i := range n {
			a.Values[i] = at(i)
		}
		return &common.AnyValue{Value: &common.AnyValue_ArrayValue{ArrayValue: a}}
	}
	switch v.Type() {
	case attribute.BOOL:
		return &common.AnyValue{Value: &common.AnyValue_BoolValue{BoolValue: v.AsBool()}}
	case attribute.INT64:
		return &common.AnyValue{Value: &common.AnyValue_IntValue{IntValue: v.AsInt64()}}
	case attribute.FLOAT64:
		return &common.AnyValue{Value: &common.AnyValue_DoubleValue{DoubleValue: v.AsFloat64()}}
	case attribute.STRING:
		return str(v.AsString())
	case attribute.STRINGSLICE:
		s := v.AsStringSlice()
		return arr(len(s), func(i int) *common.AnyValue { return str(s[i]) })
	case attribute.INT64SLICE:
		s := v.AsInt64Slice()
		return arr(len(s), func(i int) *common.AnyValue {
			return &common.AnyValue{Value: &common.AnyValue_IntValue{IntValue: s[i]}}
		})
	case attribute.FLOAT64SLICE:
		s := v.AsFloat64Slice()
		return arr(len(s), func(i int) *common.AnyValue {
			return &common.AnyValue{Value: &common.AnyValue_DoubleValue{DoubleValue: s[i]}}
		})
	case attribute.BOOLSLICE:
		s := v.AsBoolSlice()
		return arr(len(s), func(i int) *common.AnyValue {
			return &common.AnyValue{Value: &common.AnyValue_BoolValue{BoolValue: s[i]}}
		})
	case attribute.BYTESLICE:
		return &common.AnyValue{Value: &common.AnyValue_BytesValue{BytesValue: v.AsByteSlice()}}
	case attribute.SLICE:
		s := v.AsSlice()
		return arr(len(s), func(i int) *common.AnyValue { return attrValueProto(s[i]) })
	case attribute.MAP:
		m := v.AsMap()
		return &common.AnyValue{Value: &common.AnyValue_KvlistValue{KvlistValue: &common.KeyValueList{Values: attrsProto(m)}}}
	case attribute.EMPTY:
		return nil
	}
	return str(v.String())
}
