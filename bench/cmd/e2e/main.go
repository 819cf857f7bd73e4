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
	"slices"
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
		vs       = flag.String("vs", "fileexporter", "what ours is compared with: fileexporter (the baseline binary), or zstd (ours rotating with zstd, ours rotating plain, ours without rotation)")
		rotateMB = flag.Int("rotate-mb", 16, "with -vs zstd: the rotating collectors' max_megabytes")
	)
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	sh, err := parseShapes(*shapes, load.Shape{Spans: *spans, PerRequest: *perReq, Sessions: *sessions})
	if err == nil {
		err = run(ctx, config{
			ours: *ours, baseline: *baseline, fsync: *fsync, dir: *dir, rounds: *rounds, workers: *workers,
			shapes: sh, vs: *vs, rotateMB: *rotateMB,
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
	ours, baseline, fsync, dir, vs string
	rounds, workers, rotateMB      int
	shapes                         []load.Shape
}

// targetsFor returns the collectors a run compares: the last is the peer
// every other one is measured against.
func targetsFor(c config) ([]target, error) {
	ours := target{name: "sandboxaudit", bin: c.ours, config: oursConfig(c.fsync), output: "audit.jsonl", linesPerSpan: 2}
	switch c.vs {
	case "fileexporter":
		return []target{ours, {name: "fileexporter", bin: c.baseline, config: baselineConfig, output: "traces.json"}}, nil
	case "zstd":
		if c.rotateMB <= 0 {
			return nil, fmt.Errorf("-rotate-mb must be > 0, got %d", c.rotateMB)
		}
		zstd := ours
		zstd.name, zstd.config, zstd.segmented, zstd.compressed = "zstd", rotatingConfig(c.fsync, c.rotateMB, "zstd"), true, true
		plain := zstd
		plain.name, plain.config, plain.compressed = "rotate", rotatingConfig(c.fsync, c.rotateMB, "none"), false
		ours.name = "no-rotation"
		return []target{zstd, plain, ours}, nil
	default:
		return nil, fmt.Errorf("-vs: unknown peer %q (want fileexporter or zstd)", c.vs)
	}
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
	dir, cleanup, err := proc.Prepare(c.dir, "sandboxaudit-bench-", bins...)
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
		peer := targets[len(targets)-1].name
		for _, t := range targets[:len(targets)-1] {
			printSummary(sh.Name(), of, t.name, peer)
		}
	}
	return nil
}

// roundOrder alternates the collectors' order (ABBA…): the machine drifts
// over minutes, and a collector that always ran second would always meet
// the state its peer left (page cache, disk writeback, a warm CPU).
func roundOrder(targets []target, round int) []target {
	if round%2 == 1 {
		return targets
	}
	r := slices.Clone(targets)
	slices.Reverse(r)
	return r
}
