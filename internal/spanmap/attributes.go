package spanmap

// Span attribute keys of SPEC section 5.
const (
	AttrOperation      = "sandbox.operation"
	AttrSessionID      = "sandbox.session.id"
	AttrBackend        = "sandbox.backend"
	AttrStartSeq       = "sandbox.event.start_seq"
	AttrFinishSeq      = "sandbox.event.finish_seq"
	AttrStartID        = "sandbox.event.start_id"
	AttrFinishID       = "sandbox.event.finish_id"
	AttrStartData      = "sandbox.start_data"
	AttrFinishData     = "sandbox.finish_data"
	AttrOK             = "sandbox.ok"
	AttrDurationMS     = "sandbox.duration_ms"
	AttrErrorType      = "error.type"
	AttrErrorCode      = "sandbox.error.code"
	AttrErrorMessage   = "sandbox.error.message"
	AttrErrorRetryable = "sandbox.error.retryable"
	AttrStdoutBytes    = "sandbox.exec.stdout_bytes"
	AttrStderrBytes    = "sandbox.exec.stderr_bytes"
)

// Extension attributes: what an event carries that span fields cannot (see
// the package documentation).
const (
	AttrEventTraceID      = "sandbox.event.trace_id"
	AttrEventSpanID       = "sandbox.event.span_id"
	AttrEventParentSpanID = "sandbox.event.parent_span_id"
	AttrEventVersion      = "sandbox.event.version"
	AttrStartTS           = "sandbox.event.start_ts"
	AttrFinishTS          = "sandbox.event.finish_ts"
	AttrStdout            = "sandbox.exec.stdout"
	AttrStderr            = "sandbox.exec.stderr"
	AttrIncomplete        = "sandbox.incomplete"
	AttrStartMissing      = "sandbox.event.start_missing"
)

// SpanNamePrefix precedes the op in a sandbox span's name.
const SpanNamePrefix = "sandbox."
