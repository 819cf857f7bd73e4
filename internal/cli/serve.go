package cli

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"time"

	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
	"github.com/sandboxaudit/sandboxaudit/internal/plural"
	"github.com/sandboxaudit/sandboxaudit/internal/trail"
	"github.com/sandboxaudit/sandboxaudit/internal/webview"
)

const serveSynopsis = "serve [--listen 127.0.0.1:8089] [--trace-url TEMPLATE] [--key NAME.pub] [--allow-remote [--allow-host NAME]...] PATH..."

// hostName is a DNS name as --allow-host takes it: labels of letters,
// digits and inner hyphens, without a port.
var hostName = regexp.MustCompile(`^(?i)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*\.?$`)

// runServe serves a read-only web view of a trail until interrupted.
func runServe(ctx context.Context, args []string, s Streams) int {
	fs, f := newServeFlags(s.Stderr)
	paths, status, ok := parseCommand(fs, args, func(r []string) bool { return len(r) > 0 })
	if !ok {
		return status
	}
	loopback, code := f.check(s.Stderr)
	if code != exitOK {
		return code
	}
	cfg, code := f.viewConfig(paths, s)
	if code != exitOK {
		return code
	}
	srv, err := webview.New(ctx, cfg)
	if err != nil {
		_, _ = fmt.Fprintf(s.Stderr, "serve: %s\n", errorText(err))
		return exitProblems
	}
	defer func() { _ = srv.Close() }()
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		_, _ = fmt.Fprintf(s.Stderr, "serve: --listen: %s\n", errorText(err))
		return exitProblems
	}
	if loopback {
		srv.AllowHosts(ln.Addr())
	} else {
		srv.AllowRemoteHosts(f.allowHosts)
		_, _ = fmt.Fprintf(s.Stderr, "serve: WARNING: listening on %s, not loopback: the view is plain HTTP, so its token crosses the network readable, and anyone who reads it reads the whole trail\n", ln.Addr())
	}
	// The token is for the investigator's browser: printed in the address
	// on stdout, never in an error message.
	token := rand.Text()
	srv.RequireToken(token, ln.Addr())
	st := srv.Stats()
	_, _ = fmt.Fprintf(s.Stdout, "serve: http://%s/?token=%s (read-only; %s, %s; interrupt to stop)\n", ln.Addr(), token,
		plural.Count(st.Ops, "operation"), plural.Count(st.Bad, "bad line"))
	return serveView(ctx, srv.Handler(), ln, s.Stderr)
}

// serveFlags are serve's command-line flags, as parsed.
type serveFlags struct {
	listen, traceURL, keyFile string
	allowRemote               bool
	allowHosts                []string
}

// newServeFlags registers serve's flags on a new flag set.
func newServeFlags(stderr io.Writer) (*flag.FlagSet, *serveFlags) {
	f := &serveFlags{}
	fs := newFlagSet("serve", serveSynopsis, stderr)
	fs.StringVar(&f.listen, "listen", "127.0.0.1:8089", "address to listen on (loopback unless --allow-remote)")
	fs.StringVar(&f.traceURL, "trace-url", "", "link to each operation's trace, e.g. http://127.0.0.1:16686/trace/{trace_id}?uiFind={span_id}")
	fs.StringVar(&f.keyFile, "key", "", "verifier key (NAME.pub): check sealed files against their signed checkpoints")
	fs.BoolVar(&f.allowRemote, "allow-remote", false, "allow --listen on an address other than loopback (plain HTTP: anyone who reads its traffic reads the token and the trail)")
	fs.Func("allow-host", "with --allow-remote: a host name the view answers to besides its IP addresses and localhost (repeatable)", func(v string) error {
		if !hostName.MatchString(v) {
			return fmt.Errorf("%q is not a host name", displayText(v))
		}
		f.allowHosts = append(f.allowHosts, v)
		return nil
	})
	return fs, f
}

// check refuses a listen address off loopback without --allow-remote,
// and a trace URL template that does not parse. A status other than
// exitOK ends the run, its reason on stderr.
func (f *serveFlags) check(stderr io.Writer) (loopback bool, status int) {
	loopback, err := isLoopback(f.listen)
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "serve: --listen: %s\n", errorText(err))
		return false, exitUsage
	}
	if len(f.allowHosts) > 0 && !f.allowRemote {
		_, _ = fmt.Fprintf(stderr, "serve: --allow-host needs --allow-remote: on loopback the view answers only to its own address\n")
		return false, exitUsage
	}
	if !loopback && !f.allowRemote {
		_, _ = fmt.Fprintf(stderr, "serve: --listen %s is not a loopback address: the view is plain HTTP, so its token and the whole trail cross the network readable; add --allow-remote to mean it\n", f.listen)
		return false, exitUsage
	}
	if err := webview.CheckTraceURL(f.traceURL); err != nil {
		_, _ = fmt.Fprintf(stderr, "serve: %s\n", errorText(err))
		return false, exitUsage
	}
	return loopback, exitOK
}

// viewConfig loads the key and lists the trail's files for the view. A
// status other than exitOK ends the run, its reason on stderr.
func (f *serveFlags) viewConfig(paths []string, s Streams) (webview.Config, int) {
	cfg := webview.Config{TraceURL: f.traceURL, Options: readerOptions("serve", s)}
	var err error
	if f.keyFile != "" {
		if cfg.Key, err = integrity.LoadVerifierKey(f.keyFile); err != nil {
			_, _ = fmt.Fprintf(s.Stderr, "serve: --key: %s\n", errorText(err))
			return cfg, exitUsage
		}
	}
	if cfg.Sources, err = trail.Expand(paths); err != nil {
		_, _ = fmt.Fprintf(s.Stderr, "serve: %s\n", errorText(err))
		return cfg, exitProblems
	}
	return cfg, exitOK
}

// serveView serves h on ln until the server fails or ctx ends, then
// gives requests in flight a few seconds to finish.
func serveView(ctx context.Context, h http.Handler, ln net.Listener, stderr io.Writer) int {
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 60 * time.Second, IdleTimeout: 60 * time.Second, MaxHeaderBytes: 64 << 10}
	unused := &unusedConns{conns: map[net.Conn]struct{}{}}
	hs.ConnState = unused.track
	hs.RegisterOnShutdown(unused.closeAll) // after the listener is closed
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	var err error
	select {
	case err = <-errc:
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = hs.Shutdown(shutdown)
		cancel()
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		_, _ = fmt.Fprintf(stderr, "serve: %s\n", errorText(err))
		return exitProblems
	}
	return exitOK
}

// isLoopback reports whether a listen address stays on this host.
func isLoopback(addr string) (bool, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return false, err
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return false, err
	}
	switch host {
	case "localhost":
		return true, nil
	case "":
		return false, fmt.Errorf("%q names no host; write 127.0.0.1:%s, or 0.0.0.0:%s for every interface", addr, port, port)
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return false, fmt.Errorf("%q: want an IP address and port (a name other than localhost may resolve anywhere)", host)
	}
	return ip.IsLoopback(), nil
}
