package sandboxtrace_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/sandboxtrace"
)

// The expected values below are what the Python reference's
// sandbox_session.py writes for the same calls (Python 3.11).
func TestParityWithThePythonSession(t *testing.T) {
	ctx := context.Background()
	execWith := func(d time.Duration) func(*sandboxtrace.Session) error {
		return func(s *sandboxtrace.Session) error {
			_, err := s.Exec(ctx, sandboxtrace.ExecRequest{Command: []string{"ls"}, Timeout: sandboxtrace.Timeout(d)},
				runs(sandboxtrace.ExecResult{}, nil))
			return err
		}
	}
	resolve := func(host string) func(*sandboxtrace.Session) error {
		return func(s *sandboxtrace.Session) error {
			_, err := s.ResolveExposedPort(ctx, 80, func(context.Context) (sandboxtrace.Endpoint, error) {
				return sandboxtrace.Endpoint{Host: host, Port: 8080}, nil
			})
			return err
		}
	}
	cases := []struct {
		name   string
		run    func(*sandboxtrace.Session) error
		key    string
		python string
	}{
		{"exec timeout=30", execWith(30 * time.Second), "sandbox.start_data",
			`{"command":["ls"],"shell":false,"timeout_s":30,"user":null}`},
		{"exec timeout=0", execWith(0), "sandbox.start_data",
			`{"command":["ls"],"shell":false,"timeout_s":0,"user":null}`},
		{"exec timeout=5", execWith(5 * time.Second), "sandbox.start_data",
			`{"command":["ls"],"shell":false,"timeout_s":5,"user":null}`},
		{"exec timeout=2.5", execWith(2500 * time.Millisecond), "sandbox.start_data",
			`{"command":["ls"],"shell":false,"timeout_s":2.5,"user":null}`},
		// Duration.Seconds adds the fraction to the whole seconds in two
		// roundings: 1.14s would be 1.1400000000000001.
		{"exec timeout=1.14", execWith(1140 * time.Millisecond), "sandbox.start_data",
			`{"command":["ls"],"shell":false,"timeout_s":1.14,"user":null}`},
		{"exec timeout=-1.118", execWith(-1118 * time.Millisecond), "sandbox.start_data",
			`{"command":["ls"],"shell":false,"timeout_s":-1.118,"user":null}`},
		{"exec timeout=1e-09", execWith(time.Nanosecond), "sandbox.start_data",
			`{"command":["ls"],"shell":false,"timeout_s":1e-09,"user":null}`},
		{"resolve host ' 127.0.0.1 '", resolve(" 127.0.0.1 "), "sandbox.finish_data",
			`{"server.address":" 127.0.0.1 ","server.port":8080}`},
		{"resolve host ::ffff:127.0.0.1", resolve("::ffff:127.0.0.1"), "sandbox.finish_data",
			`{"server.port":8080}`},
		{"resolve host ' LOCALHOST'", resolve(" LOCALHOST"), "sandbox.finish_data",
			`{"server.address":" LOCALHOST","server.port":8080}`},
		// str.strip() takes \x1c-\x1f as whitespace; a second '%' makes the
		// scope id invalid, so ip_address raises.
		{"resolve host '\\x1c127.0.0.1\\x1f'", resolve("\x1c127.0.0.1\x1f"), "sandbox.finish_data",
			`{"server.address":"\u001c127.0.0.1\u001f","server.port":8080}`},
		{"resolve host ::1%a%b", resolve("::1%a%b"), "sandbox.finish_data",
			`{"server.port":8080}`},
		// The SDK passes paths as pathlib.Path and writes str(path).
		{"read Path('/workspace//./notes.txt/')", func(s *sandboxtrace.Session) error {
			return s.Read(ctx, "/workspace//./notes.txt/", nil, nothing)
		}, "sandbox.start_data", `{"path":"/workspace/notes.txt","user":null}`},
		{"read Path('//w/../a')", func(s *sandboxtrace.Session) error {
			return s.Read(ctx, "//w/../a", nil, nothing)
		}, "sandbox.start_data", `{"path":"//w/../a","user":null}`},
		{"write Path('')", func(s *sandboxtrace.Session) error {
			return s.Write(ctx, "", nil, 3, nothing)
		}, "sandbox.start_data", `{"bytes":3,"path":".","user":null}`},
		{"hydrate untar_dir Path('./w/')", func(s *sandboxtrace.Session) error {
			return s.HydrateWorkspace(ctx, "./w/", -1, nothing)
		}, "sandbox.start_data", `{"untar_dir":"w"}`},
		{"read not found, Path('/w//./a/')", func(s *sandboxtrace.Session) error {
			_ = s.Read(ctx, "/w//./a/", nil, func(context.Context) error { return sandboxtrace.WorkspaceReadNotFound("/w//./a/", nil) })
			return nil
		}, "sandbox.error.message", `file not found: /w/a`},
		{"persist root Path('///w'), tar Path('/s//id.tar')", func(s *sandboxtrace.Session) error {
			_, err := s.PersistWorkspace(ctx, "///w", "/s//id.tar", func(context.Context) (int64, error) { return 1, nil })
			return err
		}, "sandbox.finish_data", `{"bytes":1,"tar_path":"/s/id.tar","workspace_root":"/w"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRecorder(t)
			require.NoError(t, c.run(r.session(t)))
			assert.Equal(t, c.python, attrs(r.only(t))[c.key].AsString())
		})
	}
}

func nothing(context.Context) error { return nil }

func TestExecTransportKeepsTheCause(t *testing.T) {
	r := newRecorder(t)
	s := r.session(t)
	_, err := s.Exec(context.Background(), sandboxtrace.ExecRequest{Command: []string{"ls"}},
		runs(sandboxtrace.ExecResult{}, sandboxtrace.ExecTransport(errors.New("dial unix /run/docker.sock: connection refused"))))
	require.Error(t, err)
	assert.Equal(t, "exec transport error: dial unix /run/docker.sock: connection refused",
		attrs(r.only(t))["sandbox.error.message"].AsString())
}
