// Command single runs the single-event benchmark: HttpProxySink-style load
// (one event per POST, each client its own sandbox session) against
// otelcol-sandboxaudit writing a file, with fsync batch and, as the
// ceiling, fsync never, optionally also against a previous build, for
// several client counts, alternating the collectors in one run. It prints
// events/s and the ratios, and checks that the file holds every
// acknowledged event.
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
)

func main() {
	var (
		ours     = flag.String("ours", "bin/otelcol-sandboxaudit", "otelcol-sandboxaudit binary")
		previous = flag.String("previous", "", "an earlier otelcol-sandboxaudit binary to compare with (fsync batch)")
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
		err = run(ctx, config{ours: *ours, previous: *previous, clients: counts, duration: *duration, rounds: *rounds, dir: *dir})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "single:", err)
		os.Exit(1)
	}
}

type config struct {
	ours, previous, dir string
	clients             []int
	duration            time.Duration
	rounds              int
}

// target is one collector setup under test.
type target struct {
	name, bin, fsync string
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
	targets := []target{{"ours/batch", c.ours, "batch"}, {"ours/never", c.ours, "never"}}
	if c.previous != "" {
		targets = append(targets, target{"previous/batch", c.previous, "batch"})
	}
	for _, t := range targets {
		if _, err := os.Stat(t.bin); err != nil {
			return fmt.Errorf("collector binary: %w", err)
		}
	}
	if c.dir == "" {
		d, err := os.MkdirTemp("", "sandboxaudit-single-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		c.dir = d
	}
	fmt.Printf("load: one event per POST, %s per client count, clients %v\n", c.duration, c.clients)
	fmt.Printf("%-5s %-15s %8s %10s\n", "round", "collector", "clients", "events/s")
	res := results{}
	for r := 1; r <= c.rounds; r++ {
		for _, t := range targets {
			rates, err := measure(ctx, t, filepath.Join(c.dir, fmt.Sprintf("%s-%d", strings.ReplaceAll(t.name, "/", "-"), r)), c)
			if err != nil {
				return fmt.Errorf("round %d, %s: %w", r, t.name, err)
			}
			for i, n := range c.clients {
				fmt.Printf("%-5d %-15s %8d %10.0f\n", r, t.name, n, rates[i])
				res.add(t.name, n, rates[i])
			}
		}
	}
	res.print(targets, c.clients)
	return nil
}

// measure runs every client count against one collector process and
// returns events/s per count, after checking the file holds every
// acknowledged event.
func measure(ctx context.Context, t target, dir string, c config) ([]float64, error) {
	addr, err := proc.FreeAddr()
	if err != nil {
		return nil, err
	}
	out := filepath.Join(dir, "events.jsonl")
	url := "http://" + addr + "/v1/sandbox/events"
	col, err := proc.Start(ctx, t.bin, dir, collectorConfig(addr, out, t.fsync), url)
	if err != nil {
		return nil, err
	}
	defer col.Kill() // a no-op once it has stopped
	var rates []float64
	acked := 0
	for _, n := range c.clients {
		r, err := load.ProxyEvents{URL: url, Clients: n, For: c.duration}.Send(ctx)
		if err != nil {
			return nil, fmt.Errorf("%w\n%s", err, col.Stderr())
		}
		acked += r.Requests
		rates = append(rates, float64(r.Requests)/r.Elapsed.Seconds())
	}
	if err := col.Stop(); err != nil {
		return nil, err
	}
	// A request cut off by the end of a load step may have been written
	// without being counted, so the file may hold a few more lines.
	if _, lines, err := proc.FileStats(out); err != nil {
		return nil, err
	} else if lines < acked || lines > acked+len(c.clients)*maxClients(c.clients) {
		return nil, fmt.Errorf("%s holds %d lines, %d events were acknowledged", out, lines, acked)
	}
	proc.Settle()
	return rates, os.RemoveAll(dir)
}

func maxClients(counts []int) int {
	m := 0
	for _, n := range counts {
		m = max(m, n)
	}
	return m
}

// collectorConfig is the sandboxaudit receiver straight into the exporter's
// file sink: no batch processor, so every request is one batch, as in the
// default configuration.
func collectorConfig(addr, out, fsync string) string {
	return fmt.Sprintf(`receivers:
  sandboxaudit:
    endpoint: %s
exporters:
  sandboxaudit:
    file:
      path: %s
      fsync: %s
service:
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
  pipelines:
    logs:
      receivers: [sandboxaudit]
      exporters: [sandboxaudit]
`, addr, out, fsync)
}
