package sandboxtrace_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"

	"github.com/sandboxaudit/sandboxaudit/sandboxtrace"
)

func runs(res sandboxtrace.ExecResult, err error) func(context.Context) (sandboxtrace.ExecResult, error) {
	return func(context.Context) (sandboxtrace.ExecResult, error) { return res, err }
}

func TestExecSuccess(t *testing.T) {
	r := newRecorder(t)
	s := r.session(t)
	req := sandboxtrace.ExecRequest{Command: []string{"sh", "-c", "echo hi"}, Timeout: sandboxtrace.Timeout(30 * time.Second), Shell: true, User: sandboxtrace.User("agent")}
	res, err := s.Exec(context.Background(), req, runs(sandboxtrace.ExecResult{Stdout: []byte("hi\n")}, nil))
	require.NoError(t, err)
	assert.Equal(t, []byte("hi\n"), res.Stdout)

	a := attrs(r.only(t))
	assert.Equal(t, `{"command":["sh","-c","echo hi"],"shell":true,"timeout_s":30,"user":"agent"}`, a["sandbox.start_data"].AsString())
	assert.Equal(t, `{"command":["sh","-c","echo hi"],"exit_code":0,"process.exit.code":0,"shell":true,"timeout_s":30,"user":"agent"}`,
		a["sandbox.finish_data"].AsString())
	assert.True(t, a["sandbox.ok"].AsBool())
	assert.Equal(t, int64(0), a["process.exit.code"].AsInt64())
	assert.NotContains(t, a, "sandbox.exec.stdout_bytes", "output capture is off by default")
	assert.NotContains(t, a, "sandbox.exec.stderr_bytes")
}

func TestExecNonZero(t *testing.T) {
	r := newRecorder(t)
	s := r.session(t, sandboxtrace.WithOutputCapture(0))
	res, err := s.Exec(context.Background(), sandboxtrace.ExecRequest{Command: []string{"false"}},
		runs(sandboxtrace.ExecResult{ExitCode: 2, Stderr: []byte("nope")}, nil))
	require.NoError(t, err, "as the reference: a non-zero exit raises nothing")
	assert.Equal(t, 2, res.ExitCode)

	span := r.only(t)
	a := attrs(span)
	assert.False(t, a["sandbox.ok"].AsBool())
	for _, k := range []string{"sandbox.error.code", "error.type", "sandbox.error.message", "sandbox.error.retryable"} {
		assert.NotContains(t, a, k, "all four error fields are null")
	}
	assert.Equal(t, codes.Error, span.Status.Code)
	assert.Empty(t, span.Status.Description, "a status message would become error_message")
	assert.Equal(t, int64(2), a["process.exit.code"].AsInt64())
	assert.Equal(t, `{"command":["false"],"exit_code":2,"process.exit.code":2,"shell":false,"timeout_s":null,"user":null}`,
		a["sandbox.finish_data"].AsString())
	// The command ran: empty stdout is recorded as empty, not absent.
	assert.Equal(t, "", a["sandbox.exec.stdout_bytes"].AsString())
	assert.Contains(t, a, "sandbox.exec.stdout_bytes")
	assert.Equal(t, "bm9wZQ==", a["sandbox.exec.stderr_bytes"].AsString()) // base64("nope")

	// ExecNonZero stays for a caller who wants the error recorded.
	_, err = s.Exec(context.Background(), sandboxtrace.ExecRequest{Command: []string{"false"}},
		func(context.Context) (sandboxtrace.ExecResult, error) {
			return sandboxtrace.ExecResult{ExitCode: 3}, sandboxtrace.ExecNonZero(3)
		})
	var se *sandboxtrace.Error
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "exec_nonzero", se.Code)
}

func TestExecRunError(t *testing.T) {
	r := newRecorder(t)
	s := r.session(t, sandboxtrace.WithOutputCapture(0))
	cause := errors.New("container gone")
	_, err := s.Exec(context.Background(), sandboxtrace.ExecRequest{Command: []string{"ls"}},
		runs(sandboxtrace.ExecResult{}, sandboxtrace.ExecTransport(cause)))
	require.ErrorIs(t, err, cause)

	a := attrs(r.only(t))
	assert.Equal(t, "exec_transport_error", a["sandbox.error.code"].AsString())
	assert.Equal(t, a["sandbox.start_data"].AsString(), a["sandbox.finish_data"].AsString(), "no exit code without a result")
	assert.NotContains(t, a, "process.exit.code")
	assert.NotContains(t, a, "sandbox.exec.stdout_bytes", "no output without a result")
}

func TestOutputCaptureBounded(t *testing.T) {
	r := newRecorder(t)
	s := r.session(t, sandboxtrace.WithOutputCapture(8))
	_, err := s.Exec(context.Background(), sandboxtrace.ExecRequest{Command: []string{"x"}},
		runs(sandboxtrace.ExecResult{Stdout: []byte("0123 567 9abcdef"), Stderr: []byte("short")}, nil))
	require.NoError(t, err)
	a := attrs(r.only(t))
	out, err := base64.StdEncoding.DecodeString(a["sandbox.exec.stdout_bytes"].AsString())
	require.NoError(t, err)
	assert.Equal(t, "0123 567…", string(out), "a cut is marked as SafeDecode marks one")
	errOut, err := base64.StdEncoding.DecodeString(a["sandbox.exec.stderr_bytes"].AsString())
	require.NoError(t, err)
	assert.Equal(t, "short", string(errOut))
}

func TestOutputCaptureDoesNotSplitUTF8(t *testing.T) {
	r := newRecorder(t)
	s := r.session(t, sandboxtrace.WithOutputCapture(8))
	// "abcdefg" is 7 bytes, U+FFFD 3 more: a cut at 8 would split it (a real
	// U+FFFD in the output, not a decoding error).
	// Invalid bytes stay raw bytes: the cut does not look for rune starts
	// in data that is not UTF-8.
	_, err := s.Exec(context.Background(), sandboxtrace.ExecRequest{Command: []string{"x"}},
		runs(sandboxtrace.ExecResult{Stdout: []byte("abcdefg\ufffd"), Stderr: []byte{0xff, 0xfe, 0xfd, 0xfc, 0xfb, 0xfa, 0xf9, 0xf8, 0xf7}}, nil))
	require.NoError(t, err)
	a := attrs(r.only(t))
	out, err := base64.StdEncoding.DecodeString(a["sandbox.exec.stdout_bytes"].AsString())
	require.NoError(t, err)
	assert.Equal(t, "abcdefg…", string(out))
	errOut, err := base64.StdEncoding.DecodeString(a["sandbox.exec.stderr_bytes"].AsString())
	require.NoError(t, err)
	assert.Equal(t, []byte{0xff, 0xfe, 0xfd, 0xfc, 0xfb, 0xfa, 0xf9, 0xf8, 0xe2, 0x80, 0xa6}, errOut)
}

func TestOutputCaptureDefaultBound(t *testing.T) {
	r := newRecorder(t)
	s := r.session(t, sandboxtrace.WithOutputCapture(0))
	big := bytes.Repeat([]byte("x"), 100_000)
	_, err := s.Exec(context.Background(), sandboxtrace.ExecRequest{Command: []string{"x"}},
		runs(sandboxtrace.ExecResult{Stdout: big}, nil))
	require.NoError(t, err)
	out, err := base64.StdEncoding.DecodeString(attrs(r.only(t))["sandbox.exec.stdout_bytes"].AsString())
	require.NoError(t, err)
	assert.Len(t, out, 64*1024+len("…"))
}

// A bound over MaxOutputBytes is MaxOutputBytes: a span holding more would
// be refused whole by the collector, its finish event with it.
func TestOutputCaptureBoundHasACeiling(t *testing.T) {
	r := newRecorder(t)
	s := r.session(t, sandboxtrace.WithOutputCapture(4*sandboxtrace.MaxOutputBytes))
	big := bytes.Repeat([]byte("x"), sandboxtrace.MaxOutputBytes+1)
	_, err := s.Exec(context.Background(), sandboxtrace.ExecRequest{Command: []string{"x"}},
		runs(sandboxtrace.ExecResult{Stdout: big, Stderr: big}, nil))
	require.NoError(t, err)
	a := attrs(r.only(t))
	for _, k := range []string{"sandbox.exec.stdout_bytes", "sandbox.exec.stderr_bytes"} {
		out, err := base64.StdEncoding.DecodeString(a[k].AsString())
		require.NoError(t, err)
		assert.Equal(t, sandboxtrace.MaxOutputBytes+len("…"), len(out), k)
	}
}

func TestOutputIgnoredWithoutCapture(t *testing.T) {
	r := newRecorder(t)
	s := r.session(t)
	_, o, err := s.Start(context.Background(), "exec", nil)
	require.NoError(t, err)
	require.NoError(t, o.Finish(sandboxtrace.FinishOptions{Stdout: []byte("secret"), Stderr: []byte("secret")}))
	a := attrs(r.only(t))
	assert.NotContains(t, a, "sandbox.exec.stdout_bytes")
	assert.NotContains(t, a, "sandbox.exec.stderr_bytes")
}

// The finish data is the start data plus the exit code, as the reference
// builds it from its start dict: a command slice the run function changes
// in place (resolving argv[0], say) does not change what the finish says
// was started.
func TestExecFinishDataIsTheStartsSnapshot(t *testing.T) {
	r := newRecorder(t)
	s := r.session(t)
	cmd := []string{"ls", "-la"}
	user := "agent"
	req := sandboxtrace.ExecRequest{Command: cmd, User: &user}
	_, err := s.Exec(context.Background(), req, func(context.Context) (sandboxtrace.ExecResult, error) {
		cmd[0] = "/bin/ls"
		user = "root"
		return sandboxtrace.ExecResult{}, nil
	})
	require.NoError(t, err)
	a := attrs(r.only(t))
	assert.Equal(t, `{"command":["ls","-la"],"shell":false,"timeout_s":null,"user":"agent"}`, a["sandbox.start_data"].AsString())
	assert.Equal(t, `{"command":["ls","-la"],"exit_code":0,"process.exit.code":0,"shell":false,"timeout_s":null,"user":"agent"}`,
		a["sandbox.finish_data"].AsString())
}
