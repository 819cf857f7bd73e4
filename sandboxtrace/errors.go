package sandboxtrace

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// Error is a sandbox operation failure carrying the reference error fields,
// the Go counterpart of the Python SDK's SandboxError. Return it (or an error
// wrapping it) from an operation to record error_code, error_type and
// error_retryable.
//
// Any other error fails the operation with no error_code and an error_type
// that is its Go type name without package or pointer star, the way Python
// records type(exc).__name__: *fs.PathError is "PathError", errors.New's
// error "errorString". fmt.Errorf's %w wrapper is looked through.
type Error struct {
	// Code is a reference ErrorCode value (auditevent.IsErrorCode), or ""
	// for none.
	Code string
	// Type is the error_type; "" means the Python exception class name for
	// Code (see DefaultErrorType).
	Type string
	// Message is the error_message; "" means Err's message.
	Message string
	// Retryable is error_retryable; nil means unknown.
	Retryable *bool
	// Err is the underlying cause, if any.
	Err error
}

// Error returns Message, falling back to the cause's message and then the
// code. A nil *Error (a typed nil returned as an error) reads as &Error{}.
func (e *Error) Error() string {
	switch {
	case e == nil:
	case e.Message != "":
		return e.Message
	case e.Err != nil:
		return e.Err.Error()
	case e.Code != "":
		return e.Code
	}
	return "sandbox error"
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

// TypeName returns Type, or DefaultErrorType(Code) when Type is empty.
func (e *Error) TypeName() string {
	switch {
	case e == nil:
		return DefaultErrorType("")
	case e.Type != "":
		return e.Type
	}
	return DefaultErrorType(e.Code)
}

// pythonErrorTypes maps each reference ErrorCode to the class name the Python
// SDK raises it with, so error_type matches what Python would have written.
var pythonErrorTypes = map[string]string{
	"invalid_manifest_path":         "InvalidManifestPathError",
	"invalid_compression_scheme":    "InvalidCompressionSchemeError",
	"exposed_port_unavailable":      "ExposedPortUnavailableError",
	"exec_nonzero":                  "ExecNonZeroError",
	"exec_timeout":                  "ExecTimeoutError",
	"exec_transport_error":          "ExecTransportError",
	"pty_session_not_found":         "PtySessionNotFoundError",
	"apply_patch_invalid_path":      "ApplyPatchPathError",
	"apply_patch_invalid_diff":      "ApplyPatchDiffError",
	"apply_patch_file_not_found":    "ApplyPatchFileNotFoundError",
	"apply_patch_decode_error":      "ApplyPatchDecodeError",
	"workspace_read_not_found":      "WorkspaceReadNotFoundError",
	"workspace_archive_read_error":  "WorkspaceArchiveReadError",
	"workspace_archive_write_error": "WorkspaceArchiveWriteError",
	"workspace_write_type_error":    "WorkspaceWriteTypeError",
	"workspace_stop_error":          "WorkspaceStopError",
	"workspace_start_error":         "WorkspaceStartError",
	"workspace_root_not_found":      "WorkspaceRootNotFoundError",
	"local_file_read_error":         "LocalFileReadError",
	"local_dir_read_error":          "LocalDirReadError",
	"local_checksum_error":          "LocalChecksumError",
	"git_missing_in_image":          "GitMissingInImageError",
	"git_clone_error":               "GitCloneError",
	"git_subpath_error":             "GitSubpathError",
	"git_copy_error":                "GitCopyError",
	"mount_missing_tool":            "MountToolMissingError",
	"mount_failed":                  "MountCommandError",
	"mount_config_invalid":          "MountConfigError",
	"skills_config_invalid":         "SkillsConfigError",
	"snapshot_persist_error":        "SnapshotPersistError",
	"snapshot_restore_error":        "SnapshotRestoreError",
	"snapshot_not_restorable":       "SnapshotNotRestorableError",
}

// DefaultErrorType returns the Python SDK's exception class name for a
// reference ErrorCode, or "SandboxError" (the Python base class) for a code
// without a known class.
func DefaultErrorType(code string) string {
	if t, ok := pythonErrorTypes[code]; ok {
		return t
	}
	return "SandboxError"
}

// NewError returns an *Error with code and message; Type follows from code.
func NewError(code, message string, retryable *bool, cause error) *Error {
	return &Error{Code: code, Message: message, Retryable: retryable, Err: cause}
}

// ExecNonZero is the exec_nonzero error for a command that exited with
// exitCode. Unlike Python's ExecNonZeroError the message never quotes the
// command's output: output is recorded only when capture is enabled.
func ExecNonZero(exitCode int) *Error {
	return &Error{
		Code:      "exec_nonzero",
		Message:   "command exited with code " + strconv.Itoa(exitCode),
		Retryable: auditevent.Ptr(false),
	}
}

// ExecTimeout is the exec_timeout error (Python's ExecTimeoutError).
func ExecTimeout(cause error) *Error {
	return &Error{Code: "exec_timeout", Message: "command timed out", Retryable: auditevent.Ptr(false), Err: cause}
}

// ExecTransport is the exec_transport_error error: the command could not be
// run or its result not collected. The cause's text follows the message,
// because it is what tells an investigator why. Retryability is unknown.
func ExecTransport(cause error) *Error {
	msg := "exec transport error"
	if cause != nil {
		msg += ": " + cause.Error()
	}
	return &Error{Code: "exec_transport_error", Message: msg, Err: cause}
}

// WorkspaceReadNotFound is the workspace_read_not_found error for path,
// which its message quotes as Python quotes a pathlib.Path.
func WorkspaceReadNotFound(path string, cause error) *Error {
	return &Error{
		Code:      "workspace_read_not_found",
		Message:   "file not found: " + pythonPath(path),
		Retryable: auditevent.Ptr(false),
		Err:       cause,
	}
}

// errorFields are the finish error fields of a failed operation.
type errorFields struct {
	typ       string
	code      string // "" = null
	message   string
	retryable *bool
}

// fieldsOf maps err to the finish error fields. An *Error anywhere in err's
// chain supplies code, type and retryability (wrapping only adds context);
// the message is err's full text, which is what the caller saw. Any other
// error has no code and is typed by its Go type name, see goTypeName.
func fieldsOf(err error) errorFields {
	f := errorFields{message: validText(err.Error())}
	var se *Error
	if errors.As(err, &se) {
		if se == nil {
			se = &Error{} // a typed nil returned as an error: no fields
		}
		f.typ = validText(se.TypeName())
		f.code = se.Code
		f.retryable = retryableOf(se)
		return f
	}
	f.typ = goTypeName(err)
	return f
}

// safeFieldsOf is fieldsOf for any error: one whose Error method panics (a
// caller's type with a nil field) is recorded by its type alone, because
// the span must still end.
func safeFieldsOf(err error) (f errorFields) {
	defer func() {
		if r := recover(); r != nil {
			f = errorFields{typ: goTypeName(err)}
			otel.Handle(fmt.Errorf("sandboxtrace: recording an operation's %s error: it panicked: %v", f.typ, r))
		}
	}()
	return fieldsOf(err)
}

// retryableOf is se's retryability, else that of the nearest *Error in its
// cause chain that carries one, as the reference's SandboxError inherits it
// from its cause (ExecTransport(ExecTimeout(…)) is not retryable).
func retryableOf(se *Error) *bool {
	for se != nil {
		if se.Retryable != nil {
			return se.Retryable
		}
		var next *Error
		if !errors.As(se.Err, &next) {
			return nil
		}
		se = next
	}
	return nil
}

// goTypeName names err's dynamic type the way Python's type(exc).__name__
// names a class: the bare type name, without pointer star or package
// ("*fs.PathError" → "PathError"). fmt.Errorf's %w wrapper is looked
// through, since in Go it only adds context where Python would chain
// exceptions: fmt.Errorf("load: %w", pathErr) is still a "PathError".
// Unnamed types fall back to their reflect spelling.
func goTypeName(err error) string {
	for {
		t := reflect.TypeOf(err)
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if inner := errors.Unwrap(err); inner != nil && t.PkgPath() == "fmt" {
			err = inner
			continue
		}
		name := t.Name()
		if name == "" {
			return t.String()
		}
		// Generic instantiations spell their arguments; keep the bare name.
		if i := strings.IndexByte(name, '['); i > 0 {
			name = name[:i]
		}
		return name
	}
}

// checkCode rejects a code that is not a reference ErrorCode: such a code
// would make the mapped event fail the receiver's validation.
func checkCode(code string) error {
	if code == "" || auditevent.IsErrorCode(code) {
		return nil
	}
	return fmt.Errorf("sandboxtrace: error code %q is not a reference ErrorCode; recorded without a code", code)
}
