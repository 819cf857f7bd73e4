package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/sandboxaudit/sandboxaudit/bench/proc"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/loopback"
)

// collector is one running collector: the OTLP/HTTP receiver (sandboxtrace
// sessions) and the sandboxaudit receiver (the Python stand-in), both into
// the sandboxaudit exporter writing out with the given fsync mode.
type collector struct {
	fsync     string
	col       *proc.Collector
	dir, out  string
	otlpAddr  string // host:port of the OTLP/HTTP receiver
	eventsURL string // the sandboxaudit receiver's events URL
}

func startCollector(ctx context.Context, bin, dir, fsync string) (*collector, error) {
	addrs, err := loopback.FreeAddrs(2)
	if err != nil {
		return nil, err
	}
	c := &collector{fsync: fsync, dir: dir, out: filepath.Join(dir, "events.jsonl"), otlpAddr: addrs[0],
		eventsURL: "http://" + addrs[1] + "/v1/sandbox/events"}
	if c.col, err = proc.Start(ctx, bin, dir, collectorConfig(c.otlpAddr, addrs[1], c.out, fsync), c.eventsURL); err != nil {
		return nil, fmt.Errorf("fsync %s: %w", fsync, err)
	}
	return c, nil
}

// collectorConfig has no batch processor: every request is one batch, as
// in the default configuration, and an acknowledgement means the line is
// written (and with fsync batch, synced).
func collectorConfig(otlpAddr, eventsAddr, out, fsync string) string {
	return fmt.Sprintf(`receivers:
  otlp:
    protocols:
      http:
        endpoint: %s
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
      receivers: [otlp, sandboxaudit]
      exporters: [sandboxaudit]
    traces:
      receivers: [otlp]
      exporters: [sandboxaudit]
`, otlpAddr, eventsAddr, out, fsync)
}

// stop stops the collector and checks that its file holds at least two
// lines (a start and a finish) per operation sent.
func (c *collector) stop(ops int) error {
	if err := c.col.Stop(); err != nil {
		return err
	}
	_, lines, err := proc.FileStats(c.out)
	if err != nil {
		return err
	}
	if lines < 2*ops {
		return fmt.Errorf("%s holds %d lines, want at least %d for %d operations", c.out, lines, 2*ops, ops)
	}
	return proc.Discard(c.dir)
}
