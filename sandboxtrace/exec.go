package sandboxtrace

import (
	"context"
	"maps"
	"math/big"
	"time"

	"github.com/sandboxaudit/sandboxaudit/semconv"
)

// ExecRequest describes a command run in the sandbox; it becomes the exec
// start data exactly as the Python SDK writes it:
// {"command", "timeout_s", "shell", "user"}.
type ExecRequest struct {
	Command []string
	// Timeout is the command's timeout: nil is none (timeout_s null). Whole
	// seconds are written as an integer (30s is 30, 0 is 0), because Python
	// callers pass ints (timeout=30) and the reference writes them as given;
	// a fraction is written as a float (1.5s is 1.5).
	Timeout *time.Duration
	// Shell reports whether the command runs through a shell; ShellArgv,
	// when not nil, is the shell's argv instead (shell is then that list,
	// as the reference allows).
	Shell     bool
	ShellArgv []string
	// User is the user the command runs as; nil is the default (null). An
	// empty name is recorded as "".
	User *string
}

// ExecResult is a finished command.
type ExecResult struct {
	ExitCode int
	Stdout   []byte
	Stderr   []byte
}

// Timeout returns a pointer to d, for ExecRequest.Timeout.
func Timeout(d time.Duration) *time.Duration { return &d }

// User returns a pointer to name, for the user of Exec, Read and Write.
func User(name string) *string { return &name }

func (r ExecRequest) data() map[string]any {
	var timeout, user, shell any
	if r.Timeout != nil {
		timeout = timeoutSeconds(*r.Timeout)
	}
	if r.User != nil {
		user = *r.User
	}
	shell = r.Shell
	if r.ShellArgv != nil {
		shell = stringsAny(r.ShellArgv)
	}
	return map[string]any{"command": stringsAny(r.Command), "timeout_s": timeout, "shell": shell, "user": user}
}

// timeoutSeconds is d in seconds: an int64 when d is whole seconds, else the
// float64 nearest to d's exact decimal value, which is the float a Python
// caller's literal gives (1.14s is 1.14). Duration.Seconds rounds twice and
// can be one step off (1.1400000000000001).
func timeoutSeconds(d time.Duration) any {
	if d%time.Second == 0 {
		return int64(d / time.Second)
	}
	f, _ := new(big.Rat).SetFrac64(int64(d), int64(time.Second)).Float64()
	return f
}

func stringsAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// Exec records run as an exec operation, as the Python SDK's session does:
// the finish data adds exit_code and process.exit.code to the start data,
// and the output is recorded when the session captures it. A non-zero exit
// code is recorded as ok=false with all four error fields null, and Exec
// returns no error for it; a caller who wants one returns
// ExecNonZero(res.ExitCode) itself. An error from run fails the operation
// as is (use ExecTimeout or ExecTransport to give it a reference code); the
// finish data is then the start data.
func (s *Session) Exec(ctx context.Context, req ExecRequest, run func(ctx context.Context) (ExecResult, error)) (ExecResult, error) {
	var res ExecResult
	// One snapshot for both events, as the reference adds the exit code to
	// its start dict: run may change the command slice in place.
	start := req.data()
	err := s.Do(ctx, "exec", start, func(ctx context.Context, o *Op) error {
		var err error
		res, err = run(ctx)
		if err != nil {
			return err
		}
		fd := maps.Clone(start)
		fd["exit_code"] = res.ExitCode
		fd[semconv.AttrProcessExitCode] = res.ExitCode
		o.SetFinishData(fd)
		// Non-nil even when empty: the command ran, its output is "", not
		// absent.
		o.SetOutput(nonNil(res.Stdout), nonNil(res.Stderr))
		if res.ExitCode != 0 {
			o.SetNotOK()
		}
		return nil
	})
	return res, err
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
