package sandboxtrace

import (
	"context"
	"errors"

	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// errNilExporter fails every export of a processor built on a nil
// exporter, so each loss is counted and reported like any failed export.
var errNilExporter = errors.New("sandboxtrace: the processor was built with a nil exporter")

// missingExporter stands in for a nil exporter (an exporter variable whose
// constructor's error was ignored): calling the nil one would panic on the
// processor's goroutine and end the caller's process.
type missingExporter struct{}

func (missingExporter) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error {
	return errNilExporter
}

func (missingExporter) Export(context.Context, []sdklog.Record) error { return errNilExporter }
func (missingExporter) Shutdown(context.Context) error                { return nil }
func (missingExporter) ForceFlush(context.Context) error              { return nil }

func spanExporterOrMissing(exp sdktrace.SpanExporter) sdktrace.SpanExporter {
	if isNil(exp) {
		return missingExporter{}
	}
	return exp
}

func logExporterOrMissing(exp sdklog.Exporter) sdklog.Exporter {
	if isNil(exp) {
		return missingExporter{}
	}
	return exp
}
