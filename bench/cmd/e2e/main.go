// Command e2e runs the end-to-end benchmark: the same OTLP/HTTP load of
// sandbox exec spans against otelcol-sandboxaudit (sandboxaudit exporter,
// file, fsync batch) and against a baseline collector with the contrib
// fileexporter, alternating the two in one run, and prints spans/s,
// CPU-seconds, peak RSS and bytes per span for each, and their ratios. It
// sends two span shapes in turn: spans as sandboxtrace exports an exec,
// and light spans (no parent, no event ids, a short command, a trace per
// span).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"github.com/sandboxaudit/sandboxaudit/bench/load"
	"github.com/sandboxaudit/sandboxaudit/bench/proc"
)

func main() {
	var (
		ours     = flag.String("ours", "bin/otelcol-sandboxaudit", "otelcol-sandboxaudit binary")
		baseline = flag.String("baseline", "bin/otelcol-fileexporter", "baseline collector binary (OTLP receiver + fileexporter)")
		spans    = flag.Int("spans", 300_000, "exec spans per run")
		perReq   = flag.Int("per-request", 1000, "spans per OTLP request")
		workers  = flag.Int("workers", 2, "concurrent senders")
		sessions = flag.Int("sessions", 100, "sandbox sessions the spans are spread over")
		rounds   = flag.Int("rounds", 3, "alternations of ours and the baseline")
		fsync    = flag.String("fsync", "batch", "fsync mode of the sandboxaudit file sink")
		dir      = flag.String("dir", "", "scratch directory for configs and output files (default: a new temporary directory)")
		shapes   = flag.String("shapes", "sandboxtrace,light", "span shapes to send, in order (sandboxtrace, light)")
	)
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	sh, err := parseShapes(*shapes, load.Shape{Spans: *spans, PerRequest: *perReq, Sessions: *sessions})
	if err == nil {
		err = run(ctx, config{
			ours: *ours, baseline: *baseline, fsync: *fsync, dir: *dir, rounds: *rounds, workers: *workers,
			shapes: sh,
		})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
}

// parseShapes turns the -shapes list into shapes that share base's sizes.
func parseShapes(list string, base load.Shape) ([]load.Shape, error) {
	var shapes []load.Shape
	for name := range strings.SplitSeq(list, ",") {
		name = strings.TrimSpace(name)
		sh := base
		switch name {
		case "sandboxtrace":
		case "light":
			sh.Light = true
		default:
			return nil, fmt.Errorf("-shapes: unknown shape %q (want sandboxtrace or light)", name)
		}
		shapes = append(shapes, sh)
	}
	return shapes, nil
}

type config struct {
	ours, baseline, fsync, dir string
	rounds, workers            int
	shapes                     []load.Shape
}

func run(ctx context.Context, c config) error {
	if c.rounds <= 0 {
		return fmt.Errorf("rounds must be > 0, got %d", c.rounds)
	}
	dir, cleanup, err := proc.Prepare(c.dir, "sandboxaudit-bench-", c.ours, c.baseline)
	if err != nil {
		return err
	}
	defer cleanup()
	c.dir = dir
	reqs := make([][][]byte, len(c.shapes))
	for i, sh := range c.shapes {
		if reqs[i], err = load.Requests(sh); err != nil {
			return err
		}
		fmt.Printf("load %s: %d sandbox exec spans, %d per request (%d requests), %d workers, %d sessions; %d CPUs\n",
			sh.Name(), sh.Spans, sh.PerRequest, len(reqs[i]), c.workers, sh.Sessions, runtime.NumCPU())
	}

	targets := []target{
		{name: "sandboxaudit", bin: c.ours, config: oursConfig(c.fsync), output: "audit.jsonl", linesPerSpan: 2},
		{name: "fileexporter", bin: c.baseline, config: baselineConfig, output: "traces.json"},
	}
	printHeader()
	var results []measurement
	for r := 1; r <= c.rounds; r++ {
		for i, sh := range c.shapes {
			for _, t := range roundOrder(targets, r) {
				m, err := measure(ctx, t, filepath.Join(c.dir, fmt.Sprintf("%s-%s-%d", t.name, sh.Name(), r)), sh, reqs[i], c)
				if err != nil {
					return fmt.Errorf("round %d, %s, %s: %w", r, sh.Name(), t.name, err)
				}
				m.round = r
				results = append(results, m)
				printRow(m)
			}
		}
	}
	for _, sh := range c.shapes {
		var of []measurement
		for _, m := range results {
			if m.shape == sh.Name() {
				of = append(of, m)
			}
		}
		printSummary(sh.Name(), of, targets[0].name, targets[1].name)
	}
	return nil
}

// roundOrder alternates which collector goes first (ABBA…): the machine
// drifts over minutes, and a collector that always ran second would always
// meet the state its peer left (page cache, disk writeback, a warm CPU).
func roundOrder(targets []target, round int) []target {
	if round%2 == 1 {
		return targets
	}
	return []target{targets[1], targets[0]}
}
