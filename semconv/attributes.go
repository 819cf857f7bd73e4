package semconv

// Span names.
const (
	// SpanNamePrefix precedes the op in an operation span's name
	// ("sandbox.exec").
	SpanNamePrefix = "sandbox."
	// SessionSpanName is the name of a session's root span. It carries no
	// AttrOperation, so the mapping skips it; it gives every operation of a
	// session one trace.
	SessionSpanName = "sandbox.session"
)

// Span attributes of the table in docs/format.md, "Inside the collector":
// the only ones the span-to-events mapping reads (besides the extension
// attributes below).
const (
	// AttrOperation is the op, string; required on an operation span.
	AttrOperation = "sandbox.operation"
	// AttrSessionID is the session UUID, string; required on an operation
	// span.
	AttrSessionID = "sandbox.session.id"
	// AttrBackend is the sandbox backend name, string, optional.
	AttrBackend = "sandbox.backend"
	// AttrStartSeq is the start event's seq, int.
	AttrStartSeq = "sandbox.event.start_seq"
	// AttrFinishSeq is the finish event's seq, int.
	AttrFinishSeq = "sandbox.event.finish_seq"
	// AttrStartID is the start event's UUID, string, optional.
	AttrStartID = "sandbox.event.start_id"
	// AttrFinishID is the finish event's UUID, string, optional.
	AttrFinishID = "sandbox.event.finish_id"
	// AttrStartData is the start event's data as JSON object text, string.
	AttrStartData = "sandbox.start_data"
	// AttrFinishData is the finish event's data as JSON object text,
	// string; absent means the same as the start data.
	AttrFinishData = "sandbox.finish_data"
	// AttrOK is the finish event's ok, bool; absent: the span status is not
	// Error.
	AttrOK = "sandbox.ok"
	// AttrDurationMS is the finish event's duration_ms, double; absent: end
	// minus start.
	AttrDurationMS = "sandbox.duration_ms"
	// AttrErrorType is the finish event's error_type, string.
	AttrErrorType = "error.type"
	// AttrErrorCode is the finish event's error_code, string.
	AttrErrorCode = "sandbox.error.code"
	// AttrErrorMessage is the finish event's error_message, string.
	AttrErrorMessage = "sandbox.error.message"
	// AttrErrorRetryable is the finish event's error_retryable, bool.
	AttrErrorRetryable = "sandbox.error.retryable"
	// AttrExecStdoutBytes is raw exec stdout, bytes or a standard base64
	// string; set only when the producer opts in.
	AttrExecStdoutBytes = "sandbox.exec.stdout_bytes"
	// AttrExecStderrBytes is raw exec stderr, like AttrExecStdoutBytes.
	AttrExecStderrBytes = "sandbox.exec.stderr_bytes"
)

// Flat copies of finish data values, set on spans for queries only; the
// mapping never reads them. The Python SDK sets the same keys.
const (
	// AttrProcessExitCode is an exec's exit code, int.
	AttrProcessExitCode = "process.exit.code"
	// AttrServerPort is a port, int.
	AttrServerPort = "server.port"
	// AttrServerAddress is a host name or address, string.
	AttrServerAddress = "server.address"
)

// Extension span attributes: what an event holds that the span's own fields
// cannot, so that events turned into a span (by the receiver) map back to
// the same events. Each is set only when needed.
const (
	// AttrEventTraceID is the event's trace_id when it is not the lowercase
	// hex of the span's trace id, string; an empty value means null.
	AttrEventTraceID = "sandbox.event.trace_id"
	// AttrEventSpanID is the event's span_id when it is not the lowercase
	// hex of the span's id, string.
	AttrEventSpanID = "sandbox.event.span_id"
	// AttrEventParentSpanID is the event's parent_span_id when it is not the
	// lowercase hex of the span's parent id, string; an empty value means
	// null.
	AttrEventParentSpanID = "sandbox.event.parent_span_id"
	// AttrEventVersion is the event format version when it is not 1, int.
	AttrEventVersion = "sandbox.event.version"
	// AttrStartTS is the start event's canonical ts when the span start
	// time cannot hold it exactly, string.
	AttrStartTS = "sandbox.event.start_ts"
	// AttrFinishTS is the finish event's canonical ts when the span end
	// time cannot hold it exactly, string.
	AttrFinishTS = "sandbox.event.finish_ts"
	// AttrExecStdout is already decoded exec stdout, string.
	AttrExecStdout = "sandbox.exec.stdout"
	// AttrExecStderr is already decoded exec stderr, string.
	AttrExecStderr = "sandbox.exec.stderr"
	// AttrIncomplete marks a span whose finish never came, bool true.
	AttrIncomplete = "sandbox.incomplete"
	// AttrStartMissing marks a span whose start was never seen, bool true.
	AttrStartMissing = "sandbox.event.start_missing"
)

// Log records of audit events (docs/format.md, "Inside the collector"), one
// per event. Besides these they carry AttrSessionID, AttrOperation and the
// raw exec output attributes.
const (
	// EventSessionStart is the log event name of a start event.
	EventSessionStart = "sandbox.session.start"
	// EventSessionFinish is the log event name of a finish event.
	EventSessionFinish = "sandbox.session.finish"
	// AttrEventPhase is the event's phase ("start" or "finish"), string.
	AttrEventPhase = "sandbox.event.phase"
	// AttrEventSeq is the event's seq, int.
	AttrEventSeq = "sandbox.event.seq"
)

// Attributes that agent tracing UIs key on to show an operation as a tool
// call: the OTel GenAI conventions' execute_tool span, and OpenInference's
// span kind (Phoenix). They name the tool only; its arguments and results
// stay under the payload policy.
const (
	// AttrGenAIOperationName is the GenAI operation, GenAIExecuteTool here.
	AttrGenAIOperationName = "gen_ai.operation.name"
	// AttrGenAIToolName is the tool's name: the span name, sandbox.<op>.
	AttrGenAIToolName = "gen_ai.tool.name"
	// AttrGenAIToolType is the tool's type, GenAIToolTypeFunction here.
	AttrGenAIToolType = "gen_ai.tool.type"
	// AttrOpenInferenceSpanKind is OpenInference's span kind.
	AttrOpenInferenceSpanKind = "openinference.span.kind"
)
