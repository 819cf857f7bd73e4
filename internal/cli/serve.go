package cli

import (
	"context"
	"errors"
	"fmt"
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
	fs := newFlagSet("serve", serveSynopsis, s.Stderr)
	listen := fs.String("listen", "127.0.0.1:8089", "address to listen on (loopback unless --allow-remote)")
	traceURL := fs.String("trace-url", "", "link to each operation's trace, e.g. http://127.0.0.1:16686/trace/{trace_id}?uiFind={span_id}")
	keyFile := fs.String("key", "", "verifier key (NAME.pub): check sealed files against their signed checkpoints")
	allowRemote := fs.Bool("allow-remote", false, "allow --listen on an address other than loopback (anyone who reaches it reads the trail)")
	var allowHosts []string
	fs.Func("allow-host", "with --allow-remote: a host name the view answers to besides its IP addresses and localhost (repeatable)", func(v string) error {
		if !hostName.MatchString(v) {
			return fmt.Errorf("%q is not a host name", displayText(v))
		}
		allowHosts = append(allowHosts, v)
		return nil
	})
	paths, status, ok := parseCommand(fs, args, func(r []string) bool { return len(r) > 0 })
	if !ok {
		return status
	}
	loopback, err := isLoopback(*listen)
	if err != nil {
		_, _ = fmt.Fprintf(s.Stderr, "serve: --listen: %s\n", errorText(err))
		return exitUsage
	}
	if len(allowHosts) > 0 && !*allowRemote {
		_, _ = fmt.Fprintf(s.Stderr, "serve: --allow-host needs --allow-remote: on loopback the view answers only to its own address\n")
		return exitUsage
	}
	if !loopback && !*allowRemote {
		_, _ = fmt.Fprintf(s.Stderr, "serve: --listen %s is not a loopback address: the view shows the whole trail to anyone who reaches it; add --allow-remote to mean it\n", *listen)
		return exitUsage
	}
	if err := webview.CheckTraceURL(*traceURL); err != nil {
		_, _ = fmt.Fprintf(s.Stderr, "serve: %s\n", errorText(err))
		return exitUsage
	}
	cfg := webview.Config{TraceURL: *traceURL, Options: trail.Options{Stdin: s.Stdin, Bad: badLineReporter("serve", s.Stderr), Incomplete: incompleteReporter("serve", s.Stderr)}}
	if *keyFile != "" {
		if cfg.Key, err = integrity.LoadVerifierKey(*keyFile); err != nil {
			_, _ = fmt.Fprintf(s.Stderr, "serve: --key: %s\n", errorText(err))
			return exitUsage
		}
	}
	if cfg.Sources, err = trail.Expand(paths); err != nil {
		_, _ = fmt.Fprintf(s.Stderr, "serve: %s\n", errorText(err))
		return exitProblems
	}
	srv, err := webview.New(ctx, cfg)
	if err != nil {
		_, _ = fmt.Fprintf(s.Stderr, "serve: %s\n", errorText(err))
		return exitProblems
	}
	defer func() { _ = srv.Close() }()
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		_, _ = fmt.Fprintf(s.Stderr, "serve: --listen: %s\n", errorText(err))
		return exitProblems
	}
	if loopback {
		srv.AllowHosts(ln.Addr())
	} else {
		srv.AllowRemoteHosts(allowHosts)
		_, _ = fmt.Fprintf(s.Stderr, "serve: WARNING: listening on %s, not loopback: anyone who reaches this address reads the whole trail, without authentication\n", ln.Addr())
	}
	st := srv.Stats()
	_, _ = fmt.Fprintf(s.Stdout, "serve: http://%s/ (read-only; %s, %s; interrupt to stop)\n", ln.Addr(),
		plural.Count(st.Ops, "operation"), plural.Count(st.Bad, "bad line"))
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 60 * time.Second, IdleTimeout: 60 * time.Second, MaxHeaderBytes: 64 << 10}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err = <-errc:
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = hs.Shutdown(shutdown)
		cancel()
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		_, _ = fmt.Fprintf(s.Stderr, "serve: %s\n", errorText(err))
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
	if host == "localhost" {
		return true, nil
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return false, fmt.Errorf("%q: want an IP address and port (a name other than localhost may resolve anywhere)", host)
	}
	return ip.IsLoopback(), nil
}
