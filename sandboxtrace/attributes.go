package sandboxtrace

// ScopeName is the instrumentation scope of every span this package starts.
const ScopeName = "github.com/sandboxaudit/sandboxaudit/sandboxtrace"

// SessionSpanName is the name of a session's root span. It carries no
// AttrOperation, so the collector mapping skips it (SPEC §5): it only exists
// to give every operation of a session one trace id.
const SessionSpanName = "sandbox.session"

// Span attribute keys of SPEC §5. The collector mapping reads exactly these.
const (
	AttrOperation       = "sandbox.operation"
	AttrSessionID       = "sandbox.session.id"
	AttrBackend         = "sandbox.backend"
	AttrStartSeq        = "sandbox.event.start_seq"
	AttrFinishSeq       = "sandbox.event.finish_seq"
	AttrStartID         = "sandbox.event.start_id"
	AttrFinishID        = "sandbox.event.finish_id"
	AttrStartData       = "sandbox.start_data"
	AttrFinishData      = "sandbox.finish_data"
	AttrOK              = "sandbox.ok"
	AttrDurationMS      = "sandbox.duration_ms"
	AttrErrorType       = "error.type"
	AttrErrorCode       = "sandbox.error.code"
	AttrErrorMessage    = "sandbox.error.message"
	AttrErrorRetryable  = "sandbox.error.retryable"
	AttrExecStdoutBytes = "sandbox.exec.stdout_bytes"
	AttrExecStderrBytes = "sandbox.exec.stderr_bytes"
)

// Flat copies of finish data values, set for queries only (the mapping
// ignores them); the Python SDK copies the same keys onto its spans.
const (
	AttrProcessExitCode = "process.exit.code"
	AttrServerPort      = "server.port"
	AttrServerAddress   = "server.address"
)
