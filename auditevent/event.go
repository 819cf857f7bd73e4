// Package auditevent is the sandbox audit event core: the version-1 event
// model of the openai-agents-python sandbox session, its canonical JSONL
// encoding, the intake decoder/validator and the payload policy.
//
// Everything here is byte-for-byte compatible with the Python reference's
// event_to_json_line, as docs/format.md describes it.
package auditevent

import (
	"github.com/google/uuid"
)

// Phase discriminates start and finish events.
type Phase uint8

const (
	// PhaseStart is an operation's start event.
	PhaseStart Phase = iota + 1
	// PhaseFinish is an operation's finish event.
	PhaseFinish
)

// String returns the wire spelling of the phase.
func (p Phase) String() string {
	switch p {
	case PhaseStart:
		return "start"
	case PhaseFinish:
		return "finish"
	}
	return ""
}

// Event is one sandbox session event (format version 1). A start event uses
// the common fields only; a finish event also uses the finish fields.
//
// Optional string fields are pointers: nil serializes as JSON null.
type Event struct {
	Version      int64
	EventID      uuid.UUID
	TS           Timestamp
	SessionID    uuid.UUID
	Seq          int64
	Op           string
	Phase        Phase
	SpanID       string
	ParentSpanID *string
	TraceID      *string
	// Data is the event's data object, held as canonical JSON text: see Data.
	Data Data

	// Finish fields.
	OK             bool
	DurationMS     float64
	ErrorCode      *string
	ErrorType      *string
	ErrorMessage   *string
	ErrorRetryable *bool
	Stdout         *string
	Stderr         *string

	// StdoutBytes and StderrBytes are raw exec output. They travel with the
	// event inside the pipeline but are never serialized: only the payload
	// policy turns them into Stdout/Stderr. Nil means "no raw bytes".
	StdoutBytes []byte
	StderrBytes []byte
}

// IsFinish reports whether e is a finish event.
func (e *Event) IsFinish() bool { return e.Phase == PhaseFinish }

// opNames lists the operations of format version 1, in the reference's order.
var opNames = [...]string{
	"start", "stop", "exec", "read", "write", "shutdown", "running",
	"persist_workspace", "hydrate_workspace", "resolve_exposed_port",
	"materialize", "snapshot_persist", "snapshot_restore", "apply_patch",
}

// Ops returns the operation names of format version 1.
func Ops() []string { return append([]string(nil), opNames[:]...) }

// IsOp reports whether op is an operation of format version 1. A switch
// rather than a loop over opNames (TestIsOpIsOpNames keeps them one list):
// every span's op is checked, and the loop compared it with each name.
func IsOp(op string) bool {
	switch op {
	case "start", "stop", "exec", "read", "write", "shutdown", "running",
		"persist_workspace", "hydrate_workspace", "resolve_exposed_port",
		"materialize", "snapshot_persist", "snapshot_restore", "apply_patch":
		return true
	}
	return false
}

// errorCodes lists the reference ErrorCode values.
var errorCodes = [...]string{
	"invalid_manifest_path", "invalid_compression_scheme", "exposed_port_unavailable",
	"exec_nonzero", "exec_timeout", "exec_transport_error", "pty_session_not_found",
	"apply_patch_invalid_path", "apply_patch_invalid_diff", "apply_patch_file_not_found",
	"apply_patch_decode_error", "workspace_read_not_found", "workspace_archive_read_error",
	"workspace_archive_write_error", "workspace_write_type_error", "workspace_stop_error",
	"workspace_start_error", "workspace_root_not_found", "local_file_read_error",
	"local_dir_read_error", "local_checksum_error", "git_missing_in_image", "git_clone_error",
	"git_subpath_error", "git_copy_error", "mount_missing_tool", "mount_failed",
	"mount_config_invalid", "skills_config_invalid", "sandbox_config_invalid",
	"snapshot_persist_error", "snapshot_restore_error", "snapshot_not_restorable",
}

// ErrorCodes returns the reference ErrorCode values.
func ErrorCodes() []string { return append([]string(nil), errorCodes[:]...) }

// IsErrorCode reports whether code is a reference ErrorCode value.
func IsErrorCode(code string) bool {
	for _, c := range errorCodes {
		if c == code {
			return true
		}
	}
	return false
}

// Clone returns a deep copy of e; the payload policy works on copies so the
// same event can be written to several sinks under different policies.
func (e *Event) Clone() Event {
	c := *e
	c.ParentSpanID = clonePtr(e.ParentSpanID)
	c.TraceID = clonePtr(e.TraceID)
	c.Data = newData(append([]byte(nil), e.Data.canon...))
	c.ErrorCode = clonePtr(e.ErrorCode)
	c.ErrorType = clonePtr(e.ErrorType)
	c.ErrorMessage = clonePtr(e.ErrorMessage)
	c.ErrorRetryable = clonePtr(e.ErrorRetryable)
	c.Stdout = clonePtr(e.Stdout)
	c.Stderr = clonePtr(e.Stderr)
	if e.StdoutBytes != nil {
		c.StdoutBytes = append([]byte{}, e.StdoutBytes...)
	}
	if e.StderrBytes != nil {
		c.StderrBytes = append([]byte{}, e.StderrBytes...)
	}
	return c
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// Ptr returns a pointer to v; handy for the optional fields.
func Ptr[T any](v T) *T { return &v }

// internOp returns the constant for an op name, so decoding does not
// allocate a string per event.
func internOp(b []byte) (string, bool) { return intern(opNames[:], b) }

func internErrorCode(b []byte) (string, bool) { return intern(errorCodes[:], b) }

// intern is the name in names spelled b. Length and first byte, compared
// first, rule out all but one name in either list without a call.
func intern(names []string, b []byte) (string, bool) {
	if len(b) == 0 {
		return "", false
	}
	for _, n := range names {
		if len(n) == len(b) && n[0] == b[0] && n == string(b) {
			return n, true
		}
	}
	return "", false
}
