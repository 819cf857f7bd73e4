package cli

import (
	"context"
	"fmt"
	"time"
)

// replayOptions is the parsed replay command line.
type replayOptions struct {
	spool              string
	endpoint           string
	format             string
	headers            headerFlag
	timeout            time.Duration
	retryFor           time.Duration
	caFile             string
	insecureSkipVerify bool
	adopt              bool
}

func runReplay(ctx context.Context, args []string, s Streams) int {
	var o replayOptions
	fs := newFlagSet("replay", "replay SPOOL --endpoint URL [--format ndjson|event] [--header K=V]... [--timeout 10s] [--retry-for 30s] [--ca-file PEM] [--insecure-skip-verify] [--adopt]", s.Stderr)
	fs.StringVar(&o.endpoint, "endpoint", "", "absolute http(s) URL to POST to (required)")
	fs.StringVar(&o.format, "format", "ndjson", "request shape: ndjson (one batch per request) or event (one event per request)")
	fs.Var(&o.headers, "header", "request header KEY=VALUE, repeatable (values are never printed)")
	durationVar(fs, &o.timeout, "timeout", 10*time.Second, "the `duration` each request may take")
	durationVar(fs, &o.retryFor, "retry-for", 30*time.Second, "keep retrying a failed request (429, 5xx, network) for this `duration`; 0 sends each request once")
	fs.StringVar(&o.caFile, "ca-file", "", "PEM file of the CA(s) to verify the server's TLS certificate with, instead of the system roots")
	fs.BoolVar(&o.insecureSkipVerify, "insecure-skip-verify", false, "do not verify the server's TLS certificate")
	fs.BoolVar(&o.adopt, "adopt", false, "replay a file with lines but no .offset sidecar (another program's spool), from its start; without it such a file is refused, since it may be an audit file")
	rest, err := parseInterspersed(fs, args)
	if err != nil {
		return flagStatus(err)
	}
	s = s.shown() // the messages name the spool and what its lines hold
	if err := o.headers.check(); err != nil {
		_, _ = fmt.Fprintf(s.Stderr, "replay: %v\n", err)
		return exitUsage
	}
	if o.retryFor < 0 {
		_, _ = fmt.Fprintf(s.Stderr, "replay: --retry-for must be >= 0, got %s\n", o.retryFor)
		return exitUsage
	}
	if len(rest) != 1 || o.endpoint == "" {
		fs.Usage()
		return exitUsage
	}
	o.spool = rest[0]
	return replay(ctx, o, s)
}
