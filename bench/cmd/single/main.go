// Command single runs the single-event benchmark: HttpProxySink-style load
// (one event per POST, each client its own sandbox session) against
// otelcol-sandboxaudit writing a file, with fsync batch and, as the
// ceiling, fsync never, or (-sink spool) spooling for an HTTP endpoint that
// is down, optionally also against a previous build, for several client
// counts, alternating the collectors in one run. It prints events/s and the
// ratios, and checks that the file or spool holds every acknowledged event.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sandboxaudit/sandboxaudit/bench/load"
	"github.com/sandboxaudit/sandboxaudit/bench/proc"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/loopback"
)

func main() {
	var (
		ours     = flag.String("ours", "bin/otelcol-sandboxaudit", "otelcol-sandboxaudit binary")
		previous = flag.String("previous", "", "an earlier otelcol-sandboxaudit binary to compare with")
		sink     = flag.String("sink", "file", `"file" (fsync batch and never) or "spool" (the HTTP sink's spool, endpoint down)`)
		clients  = flag.String("clients", "1,4,16,64", "comma-separated client counts")
		duration = flag.Duration("duration", 3*time.Second, "load time per client count")
		rounds   = flag.Int("rounds", 2, "alternations of the collectors")
		dir      = flag.String("dir", "", "scratch directory (default: a new temporary directory)")
	)
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	counts, err := parseCounts(*clients)
	if err == nil {
		err = run(ctx, config{ours: *ours, previous: *previous, sink: *sink, clients: counts, duration: *duration, rounds: *rounds, dir: *dir})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "single:", err)
		os.Exit(1)
	}
}

type config struct {
	ours, previous, sink, dir string
	clients                   []int
	duration                  time.Duration
	rounds                    int
}

// target is one collector setup under test; mode is "batch" or "never"
// (the file sink's fsync) or "spool".
type target struct {
	name, bin, mode string
}

// targetsFor lists the setups of a -sink choice, ours first.
func targetsFor(c config) ([]target, error) {
	var ts []target
	switch c.sink {
	case "file":
		ts = []target{{"ours/batch", c.ours, "batch"}, {"ours/never", c.ours, "never"}}
	case "spool":
		ts = []target{{"ours/spool", c.ours, "spool"}}
	default:
		return nil, fmt.Errorf(`sink: %q is not "file" or "spool"`, c.sink)
	}
	if c.previous != "" {
		ts = append(ts, target{"previous/" + ts[0].mode, c.previous, ts[0].mode})
	}
	return ts, nil
}

func parseCounts(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("clients: %q is not a positive count", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func run(ctx context.Context, c config) error {
	if c.rounds <= 0 {
		return fmt.Errorf("rounds must be > 0, got %d", c.rounds)
	}
	targets, err := targetsFor(c)
	if err != nil {
		return err
	}
	var bins []string
	for _, t := range targets {
		bins = append(bins, t.bin)
	}
	dir, cleanup, err := proc.Prepare(c.dir, "sandboxaudit-single-", bins...)
	if err != nil {
		return err
	}
	defer cleanup()
	c.dir = dir
	fmt.Printf("load: one event per POST, %s per client count, clients %v\n", c.duration, c.clients)
	fmt.Printf("%-5s %-15s %8s %10s\n", "round", "collector", "clients", "events/s")
	res := results{}
	for r := 1; r <= c.rounds; r++ {
		if err := round(ctx, c, r, targets, res); err != nil {
			return fmt.Errorf("round %d: %w", r, err)
		}
	}
	res.print(targets, c.clients)
	return nil
}

// running is one target's collector during a round.
type running struct {
	target
	col      *proc.Collector
	dir, out string
	url      string
	acked    int
	cutOff   int // at most this many requests were cut off at the ends of load steps
}

// round starts every target's collector, then runs each client count
// against each collector in turn (the disk's speed drifts over minutes, so
// the targets are interleaved step by step, in an order that rotates with
// the round), and checks that each file holds the acknowledged events.
func round(ctx context.Context, c config, r int, targets []target, res results) error {
	var cols []*running
	defer func() {
		for _, rc := range cols {
			rc.col.Kill() // a no-op once it has stopped
		}
	}()
	for _, t := range targets {
		rc, err := start(ctx, t, filepath.Join(c.dir, fmt.Sprintf("%s-%d", strings.ReplaceAll(t.name, "/", "-"), r)))
		if err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
		cols = append(cols, rc)
	}
	for _, n := range c.clients {
		for i := range cols {
			rc := cols[(i+r)%len(cols)]
			lr, err := load.ProxyEvents{URL: rc.url, Clients: n, For: c.duration}.Send(ctx)
			if err != nil {
				return fmt.Errorf("%s: %w\n%s", rc.name, err, rc.col.Stderr())
			}
			rc.acked += lr.Requests
			rc.cutOff += n
			rate := float64(lr.Requests) / lr.Elapsed.Seconds()
			fmt.Printf("%-5d %-15s %8d %10.0f\n", r, rc.name, n, rate)
			res.add(rc.name, n, rate)
		}
	}
	for _, rc := range cols {
		if err := rc.finish(); err != nil {
			return fmt.Errorf("%s: %w", rc.name, err)
		}
	}
	return nil
}

func start(ctx context.Context, t target, dir string) (*running, error) {
	// addrs[1] is the endpoint a spooling collector cannot reach.
	addrs, err := loopback.FreeAddrs(2)
	if err != nil {
		return nil, err
	}
	addr, down := addrs[0], addrs[1]
	rc := &running{target: t, dir: dir, out: filepath.Join(dir, "events.jsonl"), url: "http://" + addr + "/v1/sandbox/events"}
	if rc.col, err = proc.Start(ctx, t.bin, dir, collectorConfig(addr, rc.out, t.mode, down), rc.url); err != nil {
		return nil, err
	}
	if t.mode == "spool" {
		// A build from before spool-first delivery held the outage's first
		// request through its live retries; a warm-up takes that request
		// out of the measurement for every build alike.
		lr, err := load.ProxyEvents{URL: rc.url, Clients: 1, For: 3 * time.Second}.Send(ctx)
		if err != nil {
			rc.col.Kill()
			return nil, fmt.Errorf("warm-up: %w", err)
		}
		rc.acked, rc.cutOff = lr.Requests, 1
	}
	return rc, nil
}

// finish stops the collector and checks its file: it holds every
// acknowledged event, and besides them at most the requests cut off at the
// end of a load step (they may have been written without being counted).
func (rc *running) finish() error {
	if err := rc.col.Stop(); err != nil {
		return err
	}
	_, lines, err := proc.FileStats(rc.out)
	if err != nil {
		return err
	}
	if lines < rc.acked || lines > rc.acked+rc.cutOff {
		return fmt.Errorf("%s holds %d lines, %d events were acknowledged", rc.out, lines, rc.acked)
	}
	return proc.Discard(rc.dir)
}

// collectorConfig is the sandboxaudit receiver straight into the exporter:
// no batch processor, so every request is one batch, as in the default
// configuration. The sink is a file with fsync mode, or for "spool" the
// HTTP sink to an endpoint nothing listens on (down), spooling to out.
// retry_on_failure is cut for builds that still retried live before
// spooling: their first request of the outage then waits a second, not 30.
func collectorConfig(addr, out, mode, down string) string {
	exporter := fmt.Sprintf(`    file:
      path: %s
      fsync: %s
`, out, mode)
	if mode == "spool" {
		exporter = fmt.Sprintf(`    retry_on_failure:
      initial_interval: 100ms
      max_interval: 500ms
      max_elapsed_time: 1s
    http:
      endpoint: http://%s/v1/sandbox/events
      spool:
        path: %s
`, down, out)
	}
	return fmt.Sprintf(`receivers:
  sandboxaudit:
    endpoint: %s
exporters:
  sandboxaudit:
`, addr) + exporter + proc.Service("logs", "sandboxaudit", "sandboxaudit")
}
