package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/sandboxaudit/sandboxaudit/bench/load"
	"github.com/sandboxaudit/sandboxaudit/bench/proc"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/loopback"
)

// The sync probe before each run: 20 fdatasyncs of about one 1,000-span
// batch of ours (1 MB of lines, not page-aligned), ≈ 20–60 ms.
const (
	probeWrites = 20
	probeBytes  = 1<<20 + 17
)

// target is one collector under test.
type target struct {
	name string
	bin  string
	// config is the collector configuration; %[1]s is the OTLP/HTTP
	// endpoint, %[2]s the output file.
	config string
	output string
	// linesPerSpan, when set, is checked against the output file.
	linesPerSpan int
	// segmented is a rotating file sink: its lines are counted in every
	// segment. compressed: its run ends when its closed segments are
	// compressed.
	segmented, compressed bool
}

// Every configuration uses defaults apart from the service section (see
// proc.Service): no batch processor, no sending queue, synchronous exports.
func oursConfig(fsync string) string {
	return `receivers:
  otlp:
    protocols:
      http:
        endpoint: %[1]s
exporters:
  sandboxaudit:
    file:
      path: %[2]s
      fsync: ` + fsync + `
` + proc.Service("traces", "otlp", "sandboxaudit")
}

// rotatingConfig is oursConfig with rotation every mb MiB, compression
// zstd or none; no retention, so every line stays to be counted.
func rotatingConfig(fsync string, mb int, compression string) string {
	return fmt.Sprintf(`receivers:
  otlp:
    protocols:
      http:
        endpoint: %%[1]s
exporters:
  sandboxaudit:
    file:
      path: %%[2]s
      fsync: %s
      rotation:
        max_megabytes: %d
        max_backups: 0
        compression: %s
`, fsync, mb, compression) + proc.Service("traces", "otlp", "sandboxaudit")
}

var baselineConfig = `receivers:
  otlp:
    protocols:
      http:
        endpoint: %[1]s
exporters:
  file:
    path: %[2]s
` + proc.Service("traces", "otlp", "file")

// measurement is one collector's run.
type measurement struct {
	name      string
	shape     string // the load's span shape
	round     int
	spans     int
	elapsed   time.Duration
	cpu       time.Duration // the collector's user+system time during the load
	peakRSS   int64         // bytes, VmHWM
	fileBytes int64
	lines     int
	// idle and steal are the machine's shares during the load: idle
	// (with iowait) is capacity nobody used, steal what the hypervisor
	// took for other guests.
	idle, steal float64
	// sync is the median fdatasync of a 1 MB batch of lines in the scratch
	// directory just before the run: ours waits for one per request.
	sync time.Duration
	// tail is how long a compressing collector took after the load to
	// compress its last segments (a segment waits a second's grace
	// first), and tailCPU the processor time it spent meanwhile. elapsed
	// is the load's time plus tailCPU: the work left after the load is
	// charged as if no core had been spare for it, its grace not at all.
	tail, tailCPU time.Duration
}

// waitCompressed waits until the collector has compressed every closed
// segment of out, records the wait in m and returns the collector's
// processor time at its end (cpu is the time at its start).
func waitCompressed(ctx context.Context, col *proc.Collector, out string, cpu time.Duration, m *measurement) (time.Duration, error) {
	wctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	var err error
	if m.tail, err = proc.WaitCompressed(wctx, out); err != nil {
		return cpu, err
	}
	after, err := col.CPU()
	m.tailCPU = after - cpu
	return after, err
}

func (m measurement) spansPerSec() float64 { return float64(m.spans) / m.elapsed.Seconds() }
func (m measurement) cpuPer100k() float64  { return m.cpu.Seconds() * 100_000 / float64(m.spans) }
func (m measurement) bytesPerSpan() float64 {
	return float64(m.fileBytes) / float64(m.spans)
}

// measure starts the collector in dir, sends the load, stops it and reads
// what it used.
func measure(ctx context.Context, t target, dir string, shape load.Shape, reqs [][]byte, c config) (measurement, error) {
	m := measurement{name: t.name, shape: shape.Name(), spans: shape.Spans}
	var err error
	if m.sync, err = proc.SyncProbe(c.dir, probeWrites, probeBytes); err != nil {
		return m, err
	}
	addrs, err := loopback.FreeAddrs(1)
	if err != nil {
		return m, err
	}
	addr := addrs[0]
	out := filepath.Join(dir, t.output)
	col, err := proc.Start(ctx, t.bin, dir, fmt.Sprintf(t.config, addr, out), "http://"+addr+"/v1/traces")
	if err != nil {
		return m, err
	}
	defer col.Kill() // a no-op once it has stopped
	cpu0, err := col.CPU()
	if err != nil {
		return m, err
	}
	host0, err := proc.ReadHostTimes()
	if err != nil {
		return m, err
	}
	res, err := load.Send(ctx, "http://"+addr+"/v1/traces", reqs, c.workers)
	if err != nil {
		return m, fmt.Errorf("%w\n%s", err, col.Stderr())
	}
	host1, err := proc.ReadHostTimes()
	if err != nil {
		return m, err
	}
	m.idle, m.steal = host1.Since(host0)
	cpu1, err := col.CPU()
	if err != nil {
		return m, err
	}
	if t.compressed {
		if cpu1, err = waitCompressed(ctx, col, out, cpu1, &m); err != nil {
			return m, err
		}
	}
	if m.peakRSS, err = col.PeakRSS(); err != nil {
		return m, err
	}
	m.elapsed, m.cpu = res.Elapsed+m.tailCPU, cpu1-cpu0
	if err := col.Stop(); err != nil { // a clean stop flushes the baseline's buffered writer
		return m, err
	}
	stats := proc.FileStats
	if t.segmented {
		stats = proc.TrailStats
	}
	if m.fileBytes, m.lines, err = stats(out); err != nil {
		return m, err
	}
	if t.linesPerSpan > 0 && m.lines != t.linesPerSpan*m.spans {
		return m, fmt.Errorf("%s holds %d lines, want %d", out, m.lines, t.linesPerSpan*m.spans)
	}
	return m, proc.Discard(dir)
}
