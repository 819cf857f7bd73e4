package sandboxtrace

import (
	"context"
	"time"

	"github.com/sandboxaudit/sandboxaudit/semconv"
)

// ExecRequest describes a command run in the sandbox; it becomes the exec
// start data exactly as the Python SDK writes it.
type ExecRequest struct {
	Command []string
	// Timeout is the command's timeout; 0 means none (timeout_s null).
	Timeout time.Duration
	// Shell reports whether the command runs through a shell.
	Shell bool
	// User is the user the command runs as; "" means the default (null).
	User string
}

// ExecResult is a finished command.
type ExecResult struct {
	ExitCode int
	Stdout   []byte
	Stderr   []byte
}

// data returns the Python SDK's exec start data:
// {"command", "timeout_s", "shell", "user"}.
func (r ExecRequest) data() map[string]any {
	command := make([]any, len(r.Command))
	for i, c := range r.Command {
		command[i] = c
	}
	var timeout, user any
	if r.Timeout > 0 {
		timeout = r.Timeout.Seconds()
	}
	if r.User != "" {
		user = r.User
	}
	return map[string]any{"command": command, "timeout_s": timeout, "shell": r.Shell, "user": user}
}

// Exec records run as an exec operation. On success the finish data adds
// exit_code and process.exit.code to the start data (as the Python SDK does)
// and the output is recorded when the session captures it. A non-zero exit
// code fails the operation with ExecNonZero, which Exec also returns,
// together with the result. An error from run fails the operation as is (use
// ExecTimeout or ExecTransport to give it a reference code).
//
// The Python SDK's own exec records a non-zero exit as ok=false with null
// error fields and leaves raising ExecNonZeroError to its caller; Exec
// records the exec_nonzero error fields so a Go caller's error and the audit
// trail agree.
func (s *Session) Exec(ctx context.Context, req ExecRequest, run func(ctx context.Context) (ExecResult, error)) (ExecResult, error) {
	var res ExecResult
	err := s.Do(ctx, "exec", req.data(), func(ctx context.Context, o *Op) error {
		var err error
		res, err = run(ctx)
		if err != nil {
			return err
		}
		fd := req.data()
		fd["exit_code"] = res.ExitCode
		fd[semconv.AttrProcessExitCode] = res.ExitCode
		o.SetFinishData(fd)
		// Non-nil even when empty: the command ran, its output is "", not
		// absent.
		o.SetOutput(nonNil(res.Stdout), nonNil(res.Stderr))
		if res.ExitCode != 0 {
			return ExecNonZero(res.ExitCode)
		}
		return nil
	})
	return res, err
}

// Read records fn as a read of path (data {"path", "user": null}).
func (s *Session) Read(ctx context.Context, path string, fn func(ctx context.Context) error) error {
	return s.Do(ctx, "read", map[string]any{"path": path, "user": nil}, func(ctx context.Context, _ *Op) error {
		return fn(ctx)
	})
}

// Write records fn as a write of size bytes to path (data {"path", "user":
// null, "bytes": size}); a negative size means unknown and leaves bytes out,
// as the Python SDK does when it cannot tell a stream's length.
func (s *Session) Write(ctx context.Context, path string, size int64, fn func(ctx context.Context) error) error {
	data := map[string]any{"path": path, "user": nil}
	if size >= 0 {
		data["bytes"] = size
	}
	return s.Do(ctx, "write", data, func(ctx context.Context, _ *Op) error {
		return fn(ctx)
	})
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
