package sandboxtrace_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/sandboxtrace"
)

// TestOpsMatchThePythonSession checks, per op, the start and finish data,
// ok and error code the Python session writes (issue 10, "Parity").
func TestOpsMatchThePythonSession(t *testing.T) {
	boom := errors.New("boom")
	ctx := context.Background()
	failing := func(context.Context) error { return boom }
	tests := []struct {
		name          string
		run           func(s *sandboxtrace.Session) error
		op            string
		start, finish string
		ok            bool
		errType       string // "" = no error fields
	}{
		{
			name: "exec timeout 0, empty user, shell argv",
			run: func(s *sandboxtrace.Session) error {
				_, err := s.Exec(ctx, sandboxtrace.ExecRequest{Command: []string{"ls"}, Timeout: sandboxtrace.Timeout(0),
					User: sandboxtrace.User(""), ShellArgv: []string{"/bin/sh", "-c"}},
					runs(sandboxtrace.ExecResult{}, nil))
				return err
			},
			op:     "exec",
			start:  `{"command":["ls"],"shell":["/bin/sh","-c"],"timeout_s":0,"user":""}`,
			finish: `{"command":["ls"],"exit_code":0,"process.exit.code":0,"shell":["/bin/sh","-c"],"timeout_s":0,"user":""}`,
			ok:     true,
		},
		{
			name: "exec no timeout, default user",
			run: func(s *sandboxtrace.Session) error {
				_, err := s.Exec(ctx, sandboxtrace.ExecRequest{Command: []string{"ls"}, Timeout: sandboxtrace.Timeout(1500 * time.Millisecond)},
					runs(sandboxtrace.ExecResult{ExitCode: 1}, nil))
				return err
			},
			op:     "exec",
			start:  `{"command":["ls"],"shell":false,"timeout_s":1.5,"user":null}`,
			finish: `{"command":["ls"],"exit_code":1,"process.exit.code":1,"shell":false,"timeout_s":1.5,"user":null}`,
			ok:     false,
		},
		{
			name: "exec failure keeps the start data",
			run: func(s *sandboxtrace.Session) error {
				_, err := s.Exec(ctx, sandboxtrace.ExecRequest{Command: []string{"ls"}, Shell: true},
					runs(sandboxtrace.ExecResult{ExitCode: 0}, sandboxtrace.ExecTimeout(boom)))
				return err
			},
			op:      "exec",
			start:   `{"command":["ls"],"shell":true,"timeout_s":null,"user":null}`,
			finish:  `{"command":["ls"],"shell":true,"timeout_s":null,"user":null}`,
			errType: "ExecTimeoutError",
		},
		{
			name:   "read with a user",
			run:    func(s *sandboxtrace.Session) error { return s.Read(ctx, "/w/a", sandboxtrace.User("agent"), nothing) },
			op:     "read",
			start:  `{"path":"/w/a","user":"agent"}`,
			finish: `{"path":"/w/a","user":"agent"}`,
			ok:     true,
		},
		{
			name:   "read, default user",
			run:    func(s *sandboxtrace.Session) error { return s.Read(ctx, "/w/a", nil, nothing) },
			op:     "read",
			start:  `{"path":"/w/a","user":null}`,
			finish: `{"path":"/w/a","user":null}`,
			ok:     true,
		},
		{
			name: "write",
			run: func(s *sandboxtrace.Session) error {
				return s.Write(ctx, "/w/a", sandboxtrace.User("root"), 12, nothing)
			},
			op:     "write",
			start:  `{"bytes":12,"path":"/w/a","user":"root"}`,
			finish: `{"bytes":12,"path":"/w/a","user":"root"}`,
			ok:     true,
		},
		{
			name:   "write of unknown length",
			run:    func(s *sandboxtrace.Session) error { return s.Write(ctx, "/w/s", nil, -1, nothing) },
			op:     "write",
			start:  `{"path":"/w/s","user":null}`,
			finish: `{"path":"/w/s","user":null}`,
			ok:     true,
		},
		{
			name: "running",
			run: func(s *sandboxtrace.Session) error {
				_, err := s.Running(ctx, func(context.Context) (bool, error) { return true, nil })
				return err
			},
			op: "running", start: `{}`, finish: `{"alive":true}`, ok: true,
		},
		{
			name: "running fails",
			run: func(s *sandboxtrace.Session) error {
				_, err := s.Running(ctx, func(context.Context) (bool, error) { return false, boom })
				return err
			},
			op: "running", start: `{}`, finish: `{}`, errType: "errorString",
		},
		{
			name: "resolve_exposed_port on loopback",
			run: func(s *sandboxtrace.Session) error {
				_, err := s.ResolveExposedPort(ctx, 8080, func(context.Context) (sandboxtrace.Endpoint, error) {
					return sandboxtrace.Endpoint{Host: "127.0.0.1", Port: 32768}, nil
				})
				return err
			},
			op: "resolve_exposed_port", start: `{"port":8080}`,
			finish: `{"server.address":"127.0.0.1","server.port":32768}`, ok: true,
		},
		{
			name: "resolve_exposed_port elsewhere",
			run: func(s *sandboxtrace.Session) error {
				_, err := s.ResolveExposedPort(ctx, 8080, func(context.Context) (sandboxtrace.Endpoint, error) {
					return sandboxtrace.Endpoint{Host: "sandbox-7.internal", Port: 443}, nil
				})
				return err
			},
			op: "resolve_exposed_port", start: `{"port":8080}`, finish: `{"server.port":443}`, ok: true,
		},
		{
			name: "resolve_exposed_port fails",
			run: func(s *sandboxtrace.Session) error {
				_, err := s.ResolveExposedPort(ctx, 8080, func(context.Context) (sandboxtrace.Endpoint, error) {
					return sandboxtrace.Endpoint{Host: "127.0.0.1", Port: 1},
						sandboxtrace.NewError("exposed_port_unavailable", "no port", nil, nil)
				})
				return err
			},
			op: "resolve_exposed_port", start: `{"port":8080}`, finish: `{"port":8080}`, errType: "ExposedPortUnavailableError",
		},
		{
			name: "persist_workspace",
			run: func(s *sandboxtrace.Session) error {
				_, err := s.PersistWorkspace(ctx, "/workspace", "/tmp/ws.tar", func(context.Context) (int64, error) { return 4096, nil })
				return err
			},
			op:     "persist_workspace",
			start:  `{"tar_path":"/tmp/ws.tar","workspace_root":"/workspace"}`,
			finish: `{"bytes":4096,"tar_path":"/tmp/ws.tar","workspace_root":"/workspace"}`,
			ok:     true,
		},
		{
			name: "persist_workspace, archive path and size unknown",
			run: func(s *sandboxtrace.Session) error {
				_, err := s.PersistWorkspace(ctx, "/workspace", "", func(context.Context) (int64, error) { return -1, nil })
				return err
			},
			op:     "persist_workspace",
			start:  `{"workspace_root":"/workspace"}`,
			finish: `{"workspace_root":"/workspace"}`,
			ok:     true,
		},
		{
			name: "persist_workspace fails",
			run: func(s *sandboxtrace.Session) error {
				_, err := s.PersistWorkspace(ctx, "/workspace", "/tmp/ws.tar", func(context.Context) (int64, error) { return 10, boom })
				return err
			},
			op:      "persist_workspace",
			start:   `{"tar_path":"/tmp/ws.tar","workspace_root":"/workspace"}`,
			finish:  `{"tar_path":"/tmp/ws.tar","workspace_root":"/workspace"}`,
			errType: "errorString",
		},
		{
			name:   "hydrate_workspace, size known",
			run:    func(s *sandboxtrace.Session) error { return s.HydrateWorkspace(ctx, "/workspace", 4096, nothing) },
			op:     "hydrate_workspace",
			start:  `{"bytes":4096,"untar_dir":"/workspace"}`,
			finish: `{"bytes":4096,"untar_dir":"/workspace"}`,
			ok:     true,
		},
		{
			name:   "hydrate_workspace, size unknown",
			run:    func(s *sandboxtrace.Session) error { return s.HydrateWorkspace(ctx, "/workspace", -1, nothing) },
			op:     "hydrate_workspace",
			start:  `{"untar_dir":"/workspace"}`,
			finish: `{"untar_dir":"/workspace"}`,
			ok:     true,
		},
		{name: "start", run: func(s *sandboxtrace.Session) error { return s.StartSandbox(ctx, nothing) }, op: "start", start: `{}`, finish: `{}`, ok: true},
		{name: "stop", run: func(s *sandboxtrace.Session) error { return s.Stop(ctx, nothing) }, op: "stop", start: `{}`, finish: `{}`, ok: true},
		{name: "shutdown", run: func(s *sandboxtrace.Session) error { return s.ShutdownSandbox(ctx, failing) }, op: "shutdown", start: `{}`, finish: `{}`, errType: "errorString"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRecorder(t)
			s := r.session(t)
			err := tt.run(s)
			if tt.errType == "" {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
			}
			span := r.only(t)
			a := attrs(span)
			assert.Equal(t, "sandbox."+tt.op, span.Name)
			assert.Equal(t, tt.op, a["sandbox.operation"].AsString())
			assert.Equal(t, tt.start, a["sandbox.start_data"].AsString())
			assert.Equal(t, tt.finish, a["sandbox.finish_data"].AsString())
			assert.Equal(t, tt.ok, a["sandbox.ok"].AsBool())
			if tt.errType == "" {
				assert.NotContains(t, a, "error.type")
				assert.NotContains(t, a, "sandbox.error.message")
			} else {
				assert.Equal(t, tt.errType, a["error.type"].AsString())
				assert.Contains(t, a, "sandbox.error.message")
			}
		})
	}
}

// server.address is kept for a loopback host as the reference decides it:
// the host stripped and lowercased is "localhost" or parses as a loopback IP
// (a zone allowed, brackets not, IPv4-mapped addresses not loopback).
func TestResolveExposedPortLoopbackAsTheReference(t *testing.T) {
	for host, loopback := range map[string]bool{
		" LocalHost ": true, "[::1]": false, "::1%lo": true, "127.0.0.2": true, " 127.0.0.1": true, "::FFFF:127.0.0.1": false, "sandbox-7.internal": false,
	} {
		r := newRecorder(t)
		s := r.session(t)
		_, err := s.ResolveExposedPort(context.Background(), 8080, func(context.Context) (sandboxtrace.Endpoint, error) {
			return sandboxtrace.Endpoint{Host: host, Port: 1}, nil
		})
		require.NoError(t, err)
		want := `{"server.port":1}`
		if loopback {
			want = `{"server.address":"` + host + `","server.port":1}`
		}
		assert.Equal(t, want, attrs(r.only(t))["sandbox.finish_data"].AsString(), "host %q", host)
	}
}

func TestFinishDataSetBeforeAFailureIsDropped(t *testing.T) {
	r := newRecorder(t)
	s := r.session(t)
	err := s.Do(context.Background(), "read", map[string]any{"path": "/w"}, func(_ context.Context, o *sandboxtrace.Op) error {
		o.SetFinishData(map[string]any{"path": "/w", "secret_leftover": 1})
		return errors.New("late failure")
	})
	require.Error(t, err)
	assert.Equal(t, `{"path":"/w"}`, attrs(r.only(t))["sandbox.finish_data"].AsString())
}

func TestRetryableInheritedFromTheCause(t *testing.T) {
	cause := errors.New("deadline")
	tests := []struct {
		name string
		err  error
		want any // nil: absent
	}{
		{"transport caused by a timeout", sandboxtrace.ExecTransport(sandboxtrace.ExecTimeout(cause)), false},
		{"transport over a wrapped timeout", sandboxtrace.ExecTransport(errors.Join(errors.New("ctx"), sandboxtrace.ExecTimeout(cause))), false},
		{"transport, plain cause", sandboxtrace.ExecTransport(cause), nil},
		{"own value wins", &sandboxtrace.Error{Code: "exec_transport_error", Retryable: auditevent.Ptr(true), Err: sandboxtrace.ExecTimeout(cause)}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRecorder(t)
			s := r.session(t)
			_ = s.Do(context.Background(), "exec", nil, func(context.Context, *sandboxtrace.Op) error { return tt.err })
			a := attrs(r.only(t))
			if tt.want == nil {
				assert.NotContains(t, a, "sandbox.error.retryable")
				return
			}
			require.Contains(t, a, "sandbox.error.retryable")
			assert.Equal(t, tt.want, a["sandbox.error.retryable"].AsBool())
		})
	}
}
