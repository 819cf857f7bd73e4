package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/loopback"
)

// envVar switches the end-to-end tests on.
const envVar = "SANDBOXAUDIT_E2E"

// Bounds of every wait: generous, since CI machines are slow, but finite.
const (
	startTimeout    = 60 * time.Second
	deliveryTimeout = 60 * time.Second
	stopTimeout     = 60 * time.Second
	pollInterval    = 50 * time.Millisecond
)

// binaries are built once per test run by TestMain.
type binaries struct {
	collector, cli, example string
}

var bins binaries

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	if os.Getenv(envVar) != "1" {
		return m.Run() // every test skips itself with the reason
	}
	dir, err := os.MkdirTemp("", "sandboxaudit-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	bins = binaries{
		collector: filepath.Join(dir, "otelcol-sandboxaudit"),
		cli:       filepath.Join(dir, "sandboxaudit"),
		example:   filepath.Join(dir, "example"),
	}
	for out, pkg := range map[string]string{
		bins.collector: "./cmd/otelcol-sandboxaudit",
		bins.cli:       "./cmd/sandboxaudit",
		bins.example:   "./example",
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
		cmd.Dir = ".." // the repository root
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		err := cmd.Run()
		cancel()
		if err != nil {
			fmt.Fprintf(os.Stderr, "e2e: go build %s: %v\n", pkg, err)
			return 1
		}
	}
	return m.Run()
}

func requireE2E(t testing.TB) {
	t.Helper()
	if os.Getenv(envVar) != "1" {
		t.Skipf("end-to-end test skipped: set %s=1 to run it (make e2e); it builds the binaries and runs collectors on loopback ports", envVar)
	}
}

// freeAddr returns a loopback address with a port that was free a moment
// ago. Another process could take it before the collector binds it; the
// collector then fails to start and the test says so. A test that needs
// several addresses before it starts anything takes them with freeAddrs.
func freeAddr(t testing.TB) string {
	t.Helper()
	return freeAddrs(t, 1)[0]
}

// freeAddrs returns n distinct free loopback addresses (loopback.FreeAddrs).
func freeAddrs(t testing.TB, n int) []string {
	t.Helper()
	addrs, err := loopback.FreeAddrs(n)
	require.NoError(t, err)
	return addrs
}

// collector is a running otelcol-sandboxaudit child process.
type collector struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error // the Wait result, valid once done is closed
	// readyAt is when the ready line was seen; see signalGrace.
	readyAt time.Time
}

// startCollector writes config into dir, starts the collector there and
// waits until it listens on every one of addrs. Cleanup kills it if the test
// did not stop it, and shows its log when the test failed.
func startCollector(t *testing.T, name, dir, config string, addrs ...string) *collector {
	t.Helper()
	return startCollectorBinary(t, bins.collector, name, dir, config, addrs...)
}

// startCollectorBinary is startCollector running the collector binary bin.
func startCollectorBinary(t *testing.T, bin, name, dir, config string, addrs ...string) *collector {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o700))
	cfgPath := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(cfgPath, []byte(config), 0o600))
	return startCollectorArgs(t, bin, name, dir, []string{"--config", cfgPath}, addrs...)
}

// startCollectorArgs starts the collector binary bin in dir with the
// command-line arguments args, and waits as startCollector does.
func startCollectorArgs(t *testing.T, bin, name, dir string, args []string, addrs ...string) *collector {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o700))
	logPath := filepath.Join(dir, "collector.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	require.NoError(t, err)

	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	require.NoError(t, cmd.Start())
	c := &collector{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		_ = logFile.Close()
		close(c.done)
	}()
	t.Cleanup(func() {
		select {
		case <-c.done:
		default:
			_ = cmd.Process.Kill()
			select {
			case <-c.done:
			case <-time.After(stopTimeout):
				t.Errorf("%s: did not exit after SIGKILL", name)
			}
		}
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("%s log (%s):\n%s", name, logPath, tail(b, 8000))
		}
	})
	c.waitListening(t, addrs...)
	c.waitReady(t)
	return c
}

// readyLine is what the collector logs once every component has started. A
// listening port only says one receiver is up: a SIGTERM before this line
// (other components still starting, a sealer catching up) ends the process
// before its signal handling is in place, so tests wait for it.
const readyLine = "Everything is ready."

func (c *collector) waitReady(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(startTimeout)
	for {
		b, err := os.ReadFile(c.log)
		require.NoError(t, err)
		if bytes.Contains(b, []byte(readyLine)) {
			c.readyAt = time.Now()
			return
		}
		require.False(t, c.exited(), "%s exited before it was ready: %v", c.name, c.err)
		require.True(t, time.Now().Before(deadline), "%s: not ready after %s", c.name, startTimeout)
		time.Sleep(pollInterval)
	}
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

func (c *collector) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// waitListening waits until each of addrs accepts TCP connections.
func (c *collector) waitListening(t *testing.T, addrs ...string) {
	t.Helper()
	deadline := time.Now().Add(startTimeout)
	for _, addr := range addrs {
		for {
			conn, err := net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				_ = conn.Close()
				break
			}
			require.False(t, c.exited(), "%s exited before listening on %s: %v", c.name, addr, c.err)
			require.True(t, time.Now().Before(deadline), "%s: %s not listening after %s", c.name, addr, startTimeout)
			time.Sleep(pollInterval)
		}
	}
}

// signalGrace is how long after the ready line stop waits before its SIGTERM.
// The collector logs that line and only then asks for SIGTERM
// (otelcol.Collector.Run), so a signal sent at once can find the default
// action in place and end the process (seen in CI, under load).
const signalGrace = 250 * time.Millisecond

// stop sends SIGTERM and requires a clean exit (status 0).
func (c *collector) stop(t *testing.T) {
	t.Helper()
	time.Sleep(time.Until(c.readyAt.Add(signalGrace)))
	require.NoError(t, c.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-c.done:
	case <-time.After(stopTimeout):
		t.Fatalf("%s: still running %s after SIGTERM", c.name, stopTimeout)
	}
	require.NoError(t, c.err, "%s: exit status after SIGTERM", c.name)
}

// runExample runs the instrumented example against an OTLP/HTTP endpoint.
func runExample(t *testing.T, otlpAddr, session string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deliveryTimeout)
	defer cancel()
	args = append([]string{"-endpoint", otlpAddr, "-session", session}, args...)
	out, err := exec.CommandContext(ctx, bins.example, args...).CombinedOutput()
	require.NoError(t, err, "example %v:\n%s", args, out)
}

// runCLI runs the sandboxaudit tool and returns its exit status and output.
func runCLI(t *testing.T, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deliveryTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, bins.cli, args...).CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), string(out)
	}
	require.NoError(t, err)
	return 0, string(out)
}

// countLines returns the complete lines in path (0 when it does not exist).
func countLines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	require.NoError(t, err)
	return bytes.Count(b, []byte("\n"))
}

// waitLines waits until path holds at least n lines, then requires exactly n.
func waitLines(t *testing.T, path string, n int) {
	t.Helper()
	deadline := time.Now().Add(deliveryTimeout)
	for countLines(t, path) < n {
		require.True(t, time.Now().Before(deadline), "%s: %d of %d lines after %s", path, countLines(t, path), n, deliveryTimeout)
		time.Sleep(pollInterval)
	}
	require.Equal(t, n, countLines(t, path), "%s: line count", path)
}

// readEvents decodes every line of an audit file whose writers are done,
// requiring each line to be canonical and the file to end with a newline
// (nothing torn), and returns the events and the lines.
func readEvents(t *testing.T, path string) ([]auditevent.Event, []string) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, len(b) == 0 || b[len(b)-1] == '\n', "%s ends in a torn line: %q", path, b[bytes.LastIndexByte(b, '\n')+1:])
	return decodeLines(t, path, b)
}

// readWrittenEvents is readEvents for a file a collector may be appending
// to while the test polls: a reader can see a write(2) in progress page by
// page, so a last line without its newline is left for the next poll.
func readWrittenEvents(t *testing.T, path string) ([]auditevent.Event, []string) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return decodeLines(t, path, b[:bytes.LastIndexByte(b, '\n')+1])
}

// decodeLines decodes b, whole lines of path, requiring each to be canonical.
func decodeLines(t *testing.T, path string, b []byte) ([]auditevent.Event, []string) {
	t.Helper()
	var evs []auditevent.Event
	var lines []string
	for line := range bytes.Lines(b) {
		line = line[:len(line)-1]
		ev, err := auditevent.Decode(line)
		require.NoError(t, err, "%s: line %q", path, line)
		require.Equal(t, string(line)+"\n", string(auditevent.Line(&ev)), "%s: line is not canonical", path)
		evs = append(evs, ev)
		lines = append(lines, string(line))
	}
	return evs, lines
}

// requireMode checks the file permissions the audit trail promises.
func requireMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, want, fi.Mode().Perm(), "%s permissions", path)
}

// bySession groups events by session id.
func bySession(evs []auditevent.Event) map[string][]auditevent.Event {
	m := map[string][]auditevent.Event{}
	for _, e := range evs {
		m[e.SessionID.String()] = append(m[e.SessionID.String()], e)
	}
	return m
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ")
}

func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// collectorYAML builds the configurations the tests run: each receiver that
// has an address feeds its pipelines (otlp → traces and logs, sandboxaudit →
// logs)
// through the same processors into the sandboxaudit exporter, and the
// collector's own metrics are off so that no test needs a metrics port.
type collectorYAML struct {
	otlpAddr    string // OTLP/HTTP receiver and a traces pipeline, when set
	sandboxAddr string // sandboxaudit receiver and a logs pipeline, when set
	// memoryLimiter puts a memory_limiter in front of the batch processor.
	memoryLimiter bool
	// batch and exporter are the YAML bodies of the batch processor and of
	// the sandboxaudit exporter, written without their own indentation. An
	// empty batch means no batch processor.
	batch, exporter string
}

func (c collectorYAML) String() string {
	var b strings.Builder
	b.WriteString("receivers:\n")
	if c.otlpAddr != "" {
		fmt.Fprintf(&b, "  otlp:\n    protocols:\n      http:\n        endpoint: %s\n", c.otlpAddr)
	}
	if c.sandboxAddr != "" {
		fmt.Fprintf(&b, "  sandboxaudit:\n    endpoint: %s\n", c.sandboxAddr)
	}
	var processors []string
	if c.memoryLimiter || c.batch != "" {
		b.WriteString("processors:\n")
	}
	if c.memoryLimiter {
		b.WriteString("  memory_limiter:\n    check_interval: 1s\n    limit_percentage: 80\n    spike_limit_percentage: 20\n")
		processors = append(processors, "memory_limiter")
	}
	if c.batch != "" {
		b.WriteString("  batch:\n" + indentBy(c.batch, "    "))
		processors = append(processors, "batch")
	}
	b.WriteString("exporters:\n  sandboxaudit:\n" + indentBy(c.exporter, "    "))
	b.WriteString("service:\n  telemetry:\n    metrics:\n      level: none\n  pipelines:\n")
	pipeline := func(signal, receiver string) {
		fmt.Fprintf(&b, "    %s:\n      receivers: [%s]\n      processors: [%s]\n      exporters: [sandboxaudit]\n",
			signal, receiver, strings.Join(processors, ", "))
	}
	if c.otlpAddr != "" {
		pipeline("traces", "otlp")
	}
	// OTLP logs carry the example's write-ahead start events.
	var logs []string
	if c.sandboxAddr != "" {
		logs = append(logs, "sandboxaudit")
	}
	if c.otlpAddr != "" {
		logs = append(logs, "otlp")
	}
	if len(logs) > 0 {
		pipeline("logs", strings.Join(logs, ", "))
	}
	return b.String()
}

// indentBy prefixes every non-empty line of s, dropping blank lines at its
// ends, and ends it with a newline.
func indentBy(s, prefix string) string {
	var b strings.Builder
	for line := range strings.Lines(strings.Trim(s, "\n")) {
		if strings.TrimSpace(line) != "" {
			b.WriteString(prefix)
		}
		b.WriteString(line)
	}
	b.WriteString("\n")
	return b.String()
}

// requireVerifies runs `sandboxaudit verify` on path, requires exit status
// 0 and returns its output.
func requireVerifies(t *testing.T, path string) string {
	t.Helper()
	code, out := runCLI(t, "verify", path)
	require.Equal(t, 0, code, "verify:\n%s", indent(out))
	return out
}
