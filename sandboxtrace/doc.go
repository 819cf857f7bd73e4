// Package sandboxtrace records sandbox operations (exec, read, write, …) as
// OpenTelemetry spans, one span per operation, with the attributes
// docs/format.md lists. The collector maps each span back to the start and
// finish events the openai-agents-python sandbox session would have emitted
// for the same operation: same ops, seq numbering, data, error fields and
// event ids.
//
// A Session numbers its events: every start and every finish takes the next
// seq, so concurrent operations interleave as they do in Python. All spans of
// a session share one trace (see Session). Use it with any
// trace.TracerProvider; for an audit trail configure the provider to sample
// every span, since a dropped span is a missing audit event.
//
// Record an operation with Session.Do, or with Session.Start and Op.Finish
// when start and finish happen in different places; Exec, Read, Write,
// Running, ResolveExposedPort, PersistWorkspace, HydrateWorkspace,
// StartSandbox, Stop and ShutdownSandbox build the data the Python session
// writes for those operations. Return an *Error to record a reference error
// code.
//
// With WithLogExporter or WithLoggerProvider, every operation first emits
// its start event as a log record (write-ahead) so that an
// operation that never ends — its process killed — is still on record; with
// DeliverySync the operation runs only once the collector acknowledged it,
// and with DeliverySyncFinish it also returns only once the collector
// acknowledged its finish event.
// NewSpanProcessor and NewLogProcessor block instead of dropping, and report
// every loss they cannot prevent to the OTel error handler. NewSpanProcessor
// and NewLogProcessor send an export that got no reply (a collector
// restarting) again until its timeout; SyncLogProcessor does so while the
// operation waits, within its sync timeout. NewSpanProcessor, NewLogProcessor and SyncLogProcessor send a
// request the collector refused whole again in halves, so only the span or
// record it cannot take is lost. Their errors give a reply body or a gRPC
// status message as its length only: a collector or a proxy may echo the
// request there. README.md, "Failed exports", has the rules per exporter.
//
// Exec output is not recorded unless the session is created with
// WithOutputCapture; it then travels base64-encoded on the span, each stream
// cut to at most MaxOutputBytes, and the collector's payload policy decides
// whether it reaches an audit line.
//
// The span and attribute names are those of package semconv, which the
// collector reads and users query.
//
// Data and output travel as attribute strings: do not configure an attribute
// value length limit on the TracerProvider (the SDK default has none), or
// [semconv.AttrStartData] would be cut to invalid JSON; nor an attribute
// count limit, which drops the finish attributes. A session reports either
// once.
package sandboxtrace
