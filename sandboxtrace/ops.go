package sandboxtrace

import (
	"context"
	"net/netip"
	"strings"
	"unicode"
)

// The helpers below record the other operations the Python session emits,
// with its data keys. Paths are written as Python writes the pathlib.Path
// it is given (see pythonPath): /w//./a/ is /w/a.

// Read records fn as a read of path by user (nil: null); data {"path",
// "user"}.
func (s *Session) Read(ctx context.Context, path string, user *string, fn func(ctx context.Context) error) error {
	return s.Do(ctx, "read", map[string]any{"path": pythonPath(path), "user": strOrNil(user)}, plain(fn))
}

// Write records fn as a write of size bytes to path by user (nil: null);
// data {"path", "user", "bytes"}. A negative size means unknown and leaves
// bytes out, as the Python SDK does when it cannot tell a stream's length.
func (s *Session) Write(ctx context.Context, path string, user *string, size int64, fn func(ctx context.Context) error) error {
	data := map[string]any{"path": pythonPath(path), "user": strOrNil(user)}
	if size >= 0 {
		data["bytes"] = size
	}
	return s.Do(ctx, "write", data, plain(fn))
}

// StartSandbox records fn as the session's start operation (data {}).
func (s *Session) StartSandbox(ctx context.Context, fn func(ctx context.Context) error) error {
	return s.Do(ctx, "start", nil, plain(fn))
}

// Stop records fn as a stop operation (data {}).
func (s *Session) Stop(ctx context.Context, fn func(ctx context.Context) error) error {
	return s.Do(ctx, "stop", nil, plain(fn))
}

// ShutdownSandbox records fn as a shutdown operation (data {}). (Shutdown
// is the Session's own shutdown.)
func (s *Session) ShutdownSandbox(ctx context.Context, fn func(ctx context.Context) error) error {
	return s.Do(ctx, "shutdown", nil, plain(fn))
}

// Running records fn, which reports whether the sandbox is alive, as a
// running operation: start data {}, finish data {"alive": bool}.
func (s *Session) Running(ctx context.Context, fn func(ctx context.Context) (bool, error)) (bool, error) {
	var alive bool
	err := s.Do(ctx, "running", nil, func(ctx context.Context, o *Op) error {
		var err error
		if alive, err = fn(ctx); err != nil {
			return err
		}
		o.SetFinishData(map[string]any{"alive": alive})
		return nil
	})
	return alive, err
}

// Endpoint is where an exposed sandbox port is reachable.
type Endpoint struct {
	Host string
	Port int
}

// ResolveExposedPort records fn, which finds where the sandbox's port is
// exposed, as a resolve_exposed_port operation: start data {"port"}; the
// finish data replaces it with {"server.port"} plus "server.address" when
// the host is loopback (an address beyond the machine is left out of the
// audit line, as the reference does).
func (s *Session) ResolveExposedPort(ctx context.Context, port int, fn func(ctx context.Context) (Endpoint, error)) (Endpoint, error) {
	var ep Endpoint
	err := s.Do(ctx, "resolve_exposed_port", map[string]any{"port": port}, func(ctx context.Context, o *Op) error {
		var err error
		if ep, err = fn(ctx); err != nil {
			return err
		}
		fd := map[string]any{"server.port": ep.Port}
		if isLoopback(ep.Host) {
			fd["server.address"] = ep.Host
		}
		o.SetFinishData(fd)
		return nil
	})
	return ep, err
}

// PersistWorkspace records fn, which archives workspaceRoot to tarPath and
// returns the archive's size, as a persist_workspace operation: start data
// {"workspace_root"} plus "tar_path" when known (not empty); the finish
// adds "bytes" when the size is known (not negative), as the reference.
func (s *Session) PersistWorkspace(ctx context.Context, workspaceRoot, tarPath string, fn func(ctx context.Context) (int64, error)) (int64, error) {
	start := func() map[string]any {
		d := map[string]any{"workspace_root": pythonPath(workspaceRoot)}
		if tarPath != "" {
			d["tar_path"] = pythonPath(tarPath)
		}
		return d
	}
	var n int64
	err := s.Do(ctx, "persist_workspace", start(), func(ctx context.Context, o *Op) error {
		var err error
		if n, err = fn(ctx); err != nil {
			return err
		}
		fd := start()
		if n >= 0 {
			fd["bytes"] = n
		}
		o.SetFinishData(fd)
		return nil
	})
	return n, err
}

// HydrateWorkspace records fn, which unpacks an archive of size bytes
// (negative: unknown) into untarDir, as a hydrate_workspace operation: data
// {"untar_dir"} plus "bytes" when the size is known.
func (s *Session) HydrateWorkspace(ctx context.Context, untarDir string, size int64, fn func(ctx context.Context) error) error {
	data := map[string]any{"untar_dir": pythonPath(untarDir)}
	if size >= 0 {
		data["bytes"] = size
	}
	return s.Do(ctx, "hydrate_workspace", data, plain(fn))
}

func plain(fn func(ctx context.Context) error) func(context.Context, *Op) error {
	return func(ctx context.Context, _ *Op) error { return fn(ctx) }
}

func strOrNil(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}

// isLoopback decides as the reference does on Python 3.11: the stripped,
// lowercased host is "localhost", or it parses as a loopback IP address (a
// zone without a second '%' is allowed, brackets are not). An IPv4-mapped
// IPv6 address is not loopback there, although Go's IsLoopback unmaps it.
func isLoopback(host string) bool {
	h := strings.ToLower(strings.TrimFunc(host, pythonSpace))
	if h == "localhost" {
		return true
	}
	if _, zone, ok := strings.Cut(h, "%"); ok && strings.Contains(zone, "%") {
		return false
	}
	ip, err := netip.ParseAddr(h)
	return err == nil && !ip.Is4In6() && ip.IsLoopback()
}

// pythonSpace is str.isspace: Go's white space and the separators
// U+001C-U+001F, which Python's str.strip() removes as well.
func pythonSpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}
