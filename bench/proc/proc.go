// Package proc runs a collector binary for the end-to-end benchmarks: it
// writes the configuration, starts the process, waits until its endpoint
// answers, reads its CPU time and peak RSS from /proc, and stops it.
package proc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Collector is one running collector process.
type Collector struct {
	cmd     *exec.Cmd
	stderr  bytes.Buffer
	exited  chan struct{}
	waitErr error
}

// Start writes config to dir/config.yaml, starts bin with it and returns
// once readyURL answers (any status).
func Start(ctx context.Context, bin, dir, config, readyURL string) (*Collector, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	cfgPath := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfgPath, []byte(config), 0o600); err != nil {
		return nil, err
	}
	c := &Collector{cmd: exec.Command(bin, "--config", cfgPath), exited: make(chan struct{})}
	c.cmd.Stderr = &c.stderr
	if err := c.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { c.waitErr = c.cmd.Wait(); close(c.exited) }()
	if err := c.waitReady(ctx, readyURL); err != nil {
		c.Kill()
		return nil, fmt.Errorf("%w\n%s", err, c.Stderr())
	}
	return c, nil
}

// waitReady polls until url answers (any status).
func (c *Collector) waitReady(ctx context.Context, url string) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-c.exited:
			return errors.New("collector exited during start")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			return nil
		}
	}
	return errors.New("collector not ready within 30s")
}

// Stderr is the end of what the collector logged.
func (c *Collector) Stderr() string {
	s := c.stderr.String()
	if len(s) > 2000 {
		s = "…" + s[len(s)-2000:]
	}
	return s
}

// Stop ends the collector with SIGTERM (a clean stop flushes buffered
// writers) and waits up to a minute for it.
func (c *Collector) Stop() error {
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
		if c.waitErr != nil {
			return fmt.Errorf("collector exit: %w\n%s", c.waitErr, c.Stderr())
		}
		return nil
	case <-time.After(time.Minute):
		c.Kill()
		return errors.New("collector did not stop within a minute")
	}
}

// Kill ends the collector at once and waits for it; a no-op once it has
// exited.
func (c *Collector) Kill() {
	_ = c.cmd.Process.Kill()
	<-c.exited
}

// CPU is the collector's user+system time so far, from /proc/<pid>/stat
// (fields 14 and 15, in clock ticks of 1/100 s on Linux).
func (c *Collector) CPU() (time.Duration, error) {
	pid := c.cmd.Process.Pid
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

// PeakRSS is the collector's VmHWM from /proc/<pid>/status, in bytes.
func (c *Collector) PeakRSS() (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", c.cmd.Process.Pid))
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

// FileStats is the file's size and line count, read in chunks: reading a
// 400 MB output whole would leave the harness, which shares the CPUs with
// the next run, a heap of that size to collect and return to the OS.
func FileStats(path string) (size int64, lines int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	return readStats(f)
}

// readStats counts the bytes and the lines r gives up to its end.
func readStats(r io.Reader) (size int64, lines int, err error) {
	buf := make([]byte, 1<<20)
	for {
		n, err := r.Read(buf)
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

// Discard removes a run's directory and then syncs, so that the next run,
// whichever collector it is, starts on a settled disk: the baseline's
// output is dropped from the page cache unwritten rather than written back
// in the next run's window, and the removal's own journal commit (with the
// discard of the freed blocks on a disk mounted with -o discard) is done
// before the next run, not in its first fdatasync.
func Discard(dir string) error {
	err := os.RemoveAll(dir)
	syscall.Sync()
	return err
}
