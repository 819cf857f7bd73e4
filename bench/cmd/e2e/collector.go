package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sandboxaudit/sandboxaudit/bench/load"
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
}

// Both configurations turn the collector's own metrics off (the same for
// both, and no fixed :8888 port to collide on) and otherwise use defaults:
// no batch processor, no sending queue, synchronous exports.
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
service:
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [sandboxaudit]
`
}

const baselineConfig = `receivers:
  otlp:
    protocols:
      http:
        endpoint: %[1]s
exporters:
  file:
    path: %[2]s
service:
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [file]
`

// measurement is one collector's run.
type measurement struct {
	name      string
	round     int
	spans     int
	elapsed   time.Duration
	cpu       time.Duration // the collector's user+system time during the load
	peakRSS   int64         // bytes, VmHWM
	fileBytes int64
	lines     int
}

func (m measurement) spansPerSec() float64 { return float64(m.spans) / m.elapsed.Seconds() }
func (m measurement) cpuPer100k() float64  { return m.cpu.Seconds() * 100_000 / float64(m.spans) }
func (m measurement) bytesPerSpan() float64 {
	return float64(m.fileBytes) / float64(m.spans)
}

// measure starts the collector in dir, sends the load, stops it and reads
// what it used.
func measure(ctx context.Context, t target, dir string, reqs [][]byte, c config) (measurement, error) {
	m := measurement{name: t.name, spans: c.shape.Spans}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return m, err
	}
	addr, err := freeAddr()
	if err != nil {
		return m, err
	}
	out := filepath.Join(dir, t.output)
	cfgPath := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfgPath, fmt.Appendf(nil, t.config, addr, out), 0o600); err != nil {
		return m, err
	}
	var stderr bytes.Buffer
	cmd := exec.Command(t.bin, "--config", cfgPath)
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return m, err
	}
	var waitErr error
	exited := make(chan struct{})
	go func() { waitErr = cmd.Wait(); close(exited) }()
	defer func() {
		_ = cmd.Process.Kill() // no-op once it has exited
		<-exited
	}()
	if err := waitReady(ctx, addr, exited); err != nil {
		return m, fmt.Errorf("%w\n%s", err, tail(stderr.String()))
	}

	cpu0, err := processCPU(cmd.Process.Pid)
	if err != nil {
		return m, err
	}
	res, err := load.Send(ctx, "http://"+addr+"/v1/traces", reqs, c.workers)
	if err != nil {
		return m, fmt.Errorf("%w\n%s", err, tail(stderr.String()))
	}
	cpu1, err := processCPU(cmd.Process.Pid)
	if err != nil {
		return m, err
	}
	if m.peakRSS, err = peakRSS(cmd.Process.Pid); err != nil {
		return m, err
	}
	m.elapsed, m.cpu = res.Elapsed, cpu1-cpu0

	// A clean stop flushes the baseline's buffered writer.
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
		if waitErr != nil {
			return m, fmt.Errorf("collector exit: %w\n%s", waitErr, tail(stderr.String()))
		}
	case <-time.After(time.Minute):
		return m, errors.New("collector did not stop within a minute")
	}
	if m.fileBytes, m.lines, err = fileStats(out); err != nil {
		return m, err
	}
	if t.linesPerSpan > 0 && m.lines != t.linesPerSpan*m.spans {
		return m, fmt.Errorf("%s holds %d lines, want %d", out, m.lines, t.linesPerSpan*m.spans)
	}
	// Settle the disk before the next run: the baseline leaves its whole
	// output dirty in the page cache (no fsync), and its writeback would
	// otherwise land in the next run's window, whichever collector that is.
	syscall.Sync()
	return m, os.RemoveAll(dir)
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// waitReady polls until the OTLP/HTTP endpoint answers (any status).
func waitReady(ctx context.Context, addr string, exited <-chan struct{}) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return errors.New("collector exited during start")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		resp, err := http.Get("http://" + addr + "/v1/traces")
		if err == nil {
			resp.Body.Close()
			return nil
		}
	}
	return errors.New("collector not ready within 30s")
}

// processCPU is user+system time from /proc/<pid>/stat (fields 14 and 15,
// in clock ticks of 1/100 s on Linux).
func processCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; count from its ')'.
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(fields) < 13 {
		return 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	var ticks int64
	for _, f := range fields[11:13] { // utime, stime
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, err
		}
		ticks += v
	}
	return time.Duration(ticks) * 10 * time.Millisecond, nil
}

// peakRSS is VmHWM from /proc/<pid>/status.
func peakRSS(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no VmHWM in /proc status")
}

// fileStats is the file's size and line count, read in chunks: reading a
// 400 MB output whole would leave the harness, which shares the CPUs with
// the next run, a heap of that size to collect and return to the OS.
func fileStats(path string) (size int64, lines int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	for {
		n, err := f.Read(buf)
		size += int64(n)
		lines += bytes.Count(buf[:n], []byte{'\n'})
		if errors.Is(err, io.EOF) {
			return size, lines, nil
		}
		if err != nil {
			return size, lines, err
		}
	}
}

func tail(s string) string {
	if len(s) > 2000 {
		s = "…" + s[len(s)-2000:]
	}
	return s
}
