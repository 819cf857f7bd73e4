package sandboxtrace_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/sandboxtrace"
)

type customErr struct{}

func (customErr) Error() string { return "custom failure" }

func TestErrorMapping(t *testing.T) {
	yes := true
	tests := []struct {
		name      string
		err       error
		typ       string
		code      string // "" = absent
		message   string
		retryable *bool // nil = absent
	}{
		{
			name: "exec nonzero", err: sandboxtrace.ExecNonZero(2),
			typ: "ExecNonZeroError", code: "exec_nonzero", message: "command exited with code 2", retryable: auditevent.Ptr(false),
		},
		{
			name: "exec timeout", err: sandboxtrace.ExecTimeout(context.DeadlineExceeded),
			typ: "ExecTimeoutError", code: "exec_timeout", message: "command timed out", retryable: auditevent.Ptr(false),
		},
		{
			name: "exec transport", err: sandboxtrace.ExecTransport(errors.New("docker: EOF")),
			typ: "ExecTransportError", code: "exec_transport_error", message: "exec transport error: docker: EOF",
		},
		{
			name: "read not found wrapped", err: fmt.Errorf("load config: %w", sandboxtrace.WorkspaceReadNotFound("/w/c.json", fs.ErrNotExist)),
			typ: "WorkspaceReadNotFoundError", code: "workspace_read_not_found", message: "load config: file not found: /w/c.json", retryable: auditevent.Ptr(false),
		},
		{
			name: "explicit type and retryable", err: &sandboxtrace.Error{Code: "mount_failed", Type: "MyMountError", Message: "mount: busy", Retryable: &yes},
			typ: "MyMountError", code: "mount_failed", message: "mount: busy", retryable: &yes,
		},
		{
			name: "code without a known class", err: sandboxtrace.NewError("sandbox_config_invalid", "bad config", nil, nil),
			typ: "SandboxError", code: "sandbox_config_invalid", message: "bad config",
		},
		{
			name: "message falls back to cause", err: &sandboxtrace.Error{Code: "mount_failed", Err: errors.New("fusermount: not found")},
			typ: "MountCommandError", code: "mount_failed", message: "fusermount: not found",
		},
		{name: "plain errors.New", err: errors.New("boom"), typ: "errorString", message: "boom"},
		{
			name: "pointer type", err: &fs.PathError{Op: "open", Path: "/x", Err: fs.ErrNotExist},
			typ: "PathError", message: "open /x: file does not exist",
		},
		{
			name: "fmt wrapper is looked through", err: fmt.Errorf("load config: %w", &fs.PathError{Op: "open", Path: "/x", Err: fs.ErrNotExist}),
			typ: "PathError", message: "load config: open /x: file does not exist",
		},
		{name: "fmt without %w", err: fmt.Errorf("plain %d", 1), typ: "errorString", message: "plain 1"},
		{name: "joined", err: errors.Join(errors.New("a"), errors.New("b")), typ: "joinError", message: "a\nb"},
		{name: "value type", err: customErr{}, typ: "customErr", message: "custom failure"},
		{name: "context deadline", err: context.DeadlineExceeded, typ: "deadlineExceededError", message: "context deadline exceeded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRecorder(t)
			s := r.session(t)
			err := s.Do(context.Background(), "exec", nil, func(context.Context, *sandboxtrace.Op) error { return tt.err })
			require.ErrorIs(t, err, tt.err, "Do returns fn's error")

			span := r.only(t)
			a := attrs(span)
			assert.False(t, a["sandbox.ok"].AsBool())
			assert.Equal(t, tt.typ, a["error.type"].AsString())
			assert.Equal(t, tt.message, a["sandbox.error.message"].AsString())
			assert.Equal(t, codes.Error, span.Status.Code)
			assert.Equal(t, tt.message, span.Status.Description)
			if tt.code == "" {
				assert.NotContains(t, a, "sandbox.error.code")
			} else {
				assert.Equal(t, tt.code, a["sandbox.error.code"].AsString())
			}
			if tt.retryable == nil {
				assert.NotContains(t, a, "sandbox.error.retryable")
			} else {
				assert.Equal(t, *tt.retryable, a["sandbox.error.retryable"].AsBool())
			}
			// A failed op's finish data is its start data.
			assert.Equal(t, "{}", a["sandbox.finish_data"].AsString())
		})
	}
}

func TestInvalidErrorCodeIsRecordedWithoutCode(t *testing.T) {
	r := newRecorder(t)
	s := r.session(t)
	bad := &sandboxtrace.Error{Code: "not_a_code", Message: "whatever"}
	err := s.Do(context.Background(), "exec", nil, func(context.Context, *sandboxtrace.Op) error { return bad })
	require.ErrorIs(t, err, bad)
	assert.Contains(t, err.Error(), `"not_a_code" is not a reference ErrorCode`)

	a := attrs(r.only(t))
	assert.NotContains(t, a, "sandbox.error.code")
	assert.Equal(t, "SandboxError", a["error.type"].AsString())
	assert.Equal(t, "whatever", a["sandbox.error.message"].AsString())
}

func TestDefaultErrorTypesAreForReferenceCodes(t *testing.T) {
	// Every code the core knows has a type; the named ones match Python.
	for _, code := range auditevent.ErrorCodes() {
		assert.NotEmpty(t, sandboxtrace.DefaultErrorType(code), code)
	}
	assert.Equal(t, "ExecNonZeroError", sandboxtrace.DefaultErrorType("exec_nonzero"))
	assert.Equal(t, "ExecTimeoutError", sandboxtrace.DefaultErrorType("exec_timeout"))
	assert.Equal(t, "WorkspaceReadNotFoundError", sandboxtrace.DefaultErrorType("workspace_read_not_found"))
	assert.Equal(t, "SandboxError", sandboxtrace.DefaultErrorType(""))
}

func TestErrorUnwrap(t *testing.T) {
	err := sandboxtrace.WorkspaceReadNotFound("/a", fs.ErrNotExist)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.Equal(t, "file not found: /a", err.Error())
	assert.Equal(t, "exec_timeout", (&sandboxtrace.Error{Code: "exec_timeout"}).Error())
}
