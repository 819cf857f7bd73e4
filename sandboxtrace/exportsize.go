package sandboxtrace

import (
	"errors"

	"go.opentelemetry.io/otel/attribute"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// ExportBytes bounds what the processors of this package send in one
// export (SyncLogProcessor, LogProcessor, NewSpanProcessor), by the
// records' bodies and attribute values or the spans' attributes, events and
// links: records or spans carrying captured output or large data must not
// make a request past the collector's limit (20 MiB by default), refused
// whole, where each alone would pass. A record or span over the bound is
// sent alone.
const ExportBytes = 4 << 20

// The sizes below are estimates of what a record or span adds to an OTLP
// request, close enough to keep a request under the collector's limit.

// recordSize is about what r adds to an export: its body and attribute
// values, and a little for each key and field.
func recordSize(r *sdklog.Record) int {
	n := 64 + valueSize(r.Body())
	r.WalkAttributes(func(kv attribute.KeyValue) bool {
		n += 16 + len(kv.Key) + valueSize(kv.Value)
		return true
	})
	return n
}

func valueSize(v attribute.Value) int {
	n := 8
	switch v.Type() {
	case attribute.STRING:
		n += len(v.AsString())
	case attribute.BYTESLICE:
		n += len(v.AsByteSlice())
	case attribute.STRINGSLICE:
		for _, e := range v.AsStringSlice() {
			n += 8 + len(e)
		}
	case attribute.SLICE:
		for _, e := range v.AsSlice() {
			n += valueSize(e)
		}
	case attribute.MAP:
		for _, kv := range v.AsMap() {
			n += 8 + len(kv.Key) + valueSize(kv.Value)
		}
	}
	return n
}

// partLen is how many of the first n items, at least one, fit in limit
// bytes, item i taking size(i).
func partLen(n, limit int, size func(i int) int) int {
	total := 0
	for i := range n {
		if total += size(i); i > 0 && total > limit {
			return i
		}
	}
	return n
}

// exportInParts calls export with consecutive parts of items of at most
// ExportBytes each (or one item), item i taking size(i), and joins the
// errors: a failed part does not stop the parts after it.
func exportInParts[T any](items []T, size func(i int) int, export func(part []T) error) error {
	var errs []error
	for start := 0; start < len(items); {
		n := partLen(len(items)-start, ExportBytes, func(i int) int { return size(start + i) })
		if err := export(items[start : start+n]); err != nil {
			errs = append(errs, err)
		}
		start += n
	}
	return errors.Join(errs...)
}

// spanSize is about what s adds to an export: its name, status, attribute
// values, events and links, and a little for each key and field.
func spanSize(s sdktrace.ReadOnlySpan) int {
	n := 128 + len(s.Name()) + len(s.Status().Description)
	n += attrsSize(s.Attributes())
	for _, e := range s.Events() {
		n += 32 + len(e.Name) + attrsSize(e.Attributes)
	}
	for _, l := range s.Links() {
		n += 48 + attrsSize(l.Attributes)
	}
	return n
}

func attrsSize(kvs []attribute.KeyValue) int {
	n := 0
	for _, kv := range kvs {
		n += 8 + len(kv.Key) + valueSize(kv.Value)
	}
	return n
}
