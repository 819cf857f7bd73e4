package e2e

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// startedExample is the example running in the background.
type startedExample struct {
	cmd     *exec.Cmd
	lines   chan string // its stdout, line by line; closed at EOF
	session string
}

// startExample starts the example and waits for its session_id line.
func startExample(t *testing.T, args ...string) *startedExample {
	t.Helper()
	cmd := exec.Command(bins.example, args...)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = io.Discard
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	ex := &startedExample{cmd: cmd, lines: make(chan string, 16)}
	go func() {
		defer close(ex.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			ex.lines <- sc.Text()
		}
	}()
	first := ex.next(t)
	require.True(t, strings.HasPrefix(first, "session_id="), "first line %q", first)
	ex.session = strings.TrimPrefix(first, "session_id=")
	return ex
}

// next returns the example's next stdout line ("" at EOF).
func (ex *startedExample) next(t *testing.T) string {
	t.Helper()
	select {
	case l := <-ex.lines:
		return l
	case <-time.After(deliveryTimeout):
		t.Fatalf("example printed nothing for %s", deliveryTimeout)
		return ""
	}
}

// runExampleOutput runs the example to its end and returns its exit
// status and combined output.
func runExampleOutput(t *testing.T, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deliveryTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, bins.example, args...).CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), string(out)
	}
	require.NoError(t, err, "example %v:\n%s", args, out)
	return 0, string(out)
}

// hasEvent reports whether path holds an event of session with op and phase.
func hasEvent(t *testing.T, path, session, op string, phase auditevent.Phase) bool {
	t.Helper()
	if countLines(t, path) == 0 {
		return false
	}
	evs, _ := readWrittenEvents(t, path) // polled while the collector writes
	for _, e := range evs {
		if e.SessionID.String() == session && e.Op == op && e.Phase == phase {
			return true
		}
	}
	return false
}

// killAfter is how long into its exec the example is killed: the time a
// best-effort start event has to leave the process (an export round trip).
const killAfter = 300 * time.Millisecond

// TestStartEventSurvivesKilledExample: the exec's start event leaves the
// instrumented process while the exec still runs, so a SIGKILL shortly
// into the exec leaves it in the audit file without a finish.
func TestStartEventSurvivesKilledExample(t *testing.T) {
	requireE2E(t)
	for _, delivery := range []string{"sync", "best_effort"} {
		t.Run(delivery, func(t *testing.T) {
			dir := t.TempDir()
			otlpAddr := freeAddr(t)
			auditPath := filepath.Join(dir, "audit", "events.jsonl")
			col := startCollector(t, "collector", dir, collectorYAML{
				otlpAddr: otlpAddr, batch: "timeout: 50ms", exporter: "file:\n  path: " + auditPath,
			}.String(), otlpAddr)

			ex := startExample(t, "-endpoint", otlpAddr, "-delivery", delivery, "-exec-sleep", "10m")
			require.Equal(t, "trace_id=", ex.next(t)[:len("trace_id=")])
			require.Equal(t, "exec running", ex.next(t))

			// Killed shortly into the ten-minute exec, before any look at
			// the file: sync has the start acknowledged before the exec
			// begins, where a batched export would still hold it for its
			// 1 s tick and a kill would lose it.
			time.Sleep(killAfter)
			require.NoError(t, ex.cmd.Process.Signal(os.Kill))
			_ = ex.cmd.Wait()
			deadline := time.Now().Add(deliveryTimeout)
			for !hasEvent(t, auditPath, ex.session, "exec", auditevent.PhaseStart) {
				require.True(t, time.Now().Before(deadline), "no exec start in the file %s after the kill", deliveryTimeout)
				time.Sleep(pollInterval)
			}
			// SIGTERM writes whatever the collector still holds.
			col.stop(t)

			evs, _ := readEvents(t, auditPath)
			var execStarts, execFinishes int
			for _, e := range evs {
				require.Equal(t, ex.session, e.SessionID.String())
				if e.Op != "exec" {
					continue
				}
				if e.Phase == auditevent.PhaseStart {
					execStarts++
					assert.Equal(t, int64(3), e.Seq)
				} else {
					execFinishes++
				}
			}
			assert.Equal(t, 1, execStarts, "the exec start, once")
			assert.Zero(t, execFinishes, "the exec never finished")
		})
	}
}

// TestWriteAheadRunWritesEachEventOnce: with sync delivery every start
// event reaches the collector twice (early record, then the span); the file
// still holds each event exactly once, and verify passes without
// --allow-duplicates. The second run reports exit code 3 from its exec:
// ok=false, null error fields, exit_code 3.
func TestWriteAheadRunWritesEachEventOnce(t *testing.T) {
	requireE2E(t)
	dir := t.TempDir()
	otlpAddr := freeAddr(t)
	auditPath := filepath.Join(dir, "audit", "events.jsonl")
	col := startCollector(t, "collector", dir, collectorYAML{
		otlpAddr: otlpAddr, batch: "timeout: 50ms", exporter: "file:\n  path: " + auditPath,
	}.String(), otlpAddr)

	const session1 = "6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b"
	runExample(t, otlpAddr, session1, "-delivery", "sync")
	const session2 = "22222222-3333-4444-8555-666666666666"
	runExample(t, otlpAddr, session2, "-exit-code", "3")
	col.stop(t)

	require.Equal(t, 24, countLines(t, auditPath), "two runs of 12 events, each once")
	evs, _ := readEvents(t, auditPath)
	sessions := bySession(evs)
	checkExampleSession(t, session1, sessions[session1])
	code, out := runCLI(t, "verify", auditPath)
	require.Equal(t, 0, code, "verify without --allow-duplicates:\n%s", indent(out))
	assert.Contains(t, out, "problems=0")

	var exec3 *auditevent.Event
	for i, e := range sessions[session2] {
		if e.Op == "exec" && e.Phase == auditevent.PhaseFinish && e.Seq == 4 {
			exec3 = &sessions[session2][i]
		}
	}
	require.NotNil(t, exec3, "the first exec's finish")
	assert.False(t, exec3.OK)
	assert.Nil(t, exec3.ErrorCode)
	assert.Nil(t, exec3.ErrorType)
	assert.Nil(t, exec3.ErrorMessage)
	assert.Nil(t, exec3.ErrorRetryable)
	for _, key := range []string{"exit_code", "process.exit.code"} {
		v, ok := exec3.Data.Lookup(key)
		require.True(t, ok, key)
		assert.Equal(t, "3", string(v), key)
	}
}

// TestSyncDeliveryWithoutCollectorRunsNothing: sync fails closed, best
// effort runs.
func TestSyncDeliveryWithoutCollectorRunsNothing(t *testing.T) {
	requireE2E(t)
	nobody := freeAddr(t)
	args := []string{"-endpoint", nobody, "-exec-sleep", "1ms", "-timeout", "1s", "-sync-timeout", "1s"}

	code, out := runExampleOutput(t, append(args, "-delivery", "sync")...)
	assert.NotEqual(t, 0, code, "sync without a collector must fail:\n%s", out)
	assert.NotContains(t, out, "exec running")
	assert.Contains(t, out, "start event not acknowledged")

	code, out = runExampleOutput(t, append(args, "-delivery", "best_effort")...)
	assert.NotEqual(t, 0, code, "the spans could not be exported either:\n%s", out)
	assert.Contains(t, out, "exec running", "best effort runs the operation")
}

// TestProcessorRedactsSpansForATracingBackend: the sandboxaudit processor
// in a traces pipeline to the debug exporter keeps the raw exec output the
// example captured away from it.
func TestProcessorRedactsSpansForATracingBackend(t *testing.T) {
	requireE2E(t)
	dir := t.TempDir()
	otlpAddr := freeAddr(t)
	col := startCollector(t, "collector", dir, debugBackendYAML(otlpAddr), otlpAddr)
	runExample(t, otlpAddr, "6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b", "-capture-output")
	col.stop(t)

	log := string(mustRead(t, col.log))
	// The debug exporter printed the sandbox spans' attributes...
	require.Contains(t, log, "sandbox.start_data")
	require.Contains(t, log, "sandbox.exec")
	// ...but none of the raw output the example captured on them.
	assert.NotContains(t, log, "sandbox.exec.stdout_bytes")
	assert.NotContains(t, log, "sandbox.exec.stderr_bytes")
	assert.NotContains(t, log, "aGVsbG8K", "base64 of the exec's stdout")
}

// TestSyncDeliveryRunsWhileTheEndpointIsDown: with the exporter's defaults
// (retry_on_failure, a 30 s push timeout) and an HTTP endpoint that is down,
// an acknowledgement means "in the spool" (docs/guarantees.md), and it must
// come within the example's 5 s sync timeout, not after the live retries.
func TestSyncDeliveryRunsWhileTheEndpointIsDown(t *testing.T) {
	requireE2E(t)
	dir := t.TempDir()
	addrs := freeAddrs(t, 2)
	otlpAddr, nobody := addrs[0], addrs[1]
	spoolPath := filepath.Join(dir, "spool", "audit-spool.jsonl")
	col := startCollector(t, "collector", dir, collectorYAML{
		otlpAddr: otlpAddr,
		exporter: "http:\n  endpoint: http://" + nobody + "/v1/sandbox/events\n  spool:\n    path: " + spoolPath,
	}.String(), otlpAddr)

	const session = "6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b"
	runExample(t, otlpAddr, session, "-delivery", "sync")
	col.stop(t)

	evs, _ := readEvents(t, spoolPath)
	checkExampleSession(t, session, bySession(evs)[session])
}

// debugBackendYAML is a collector that stands in for a tracing backend:
// OTLP/HTTP in, the sandboxaudit processor on traces, the debug exporter
// printing every attribute.
func debugBackendYAML(otlpAddr string) string {
	return `
receivers:
  otlp:
    protocols:
      http:
        endpoint: ` + otlpAddr + `
processors:
  sandboxaudit: {}
exporters:
  debug:
    verbosity: detailed
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      processors: [sandboxaudit]
      exporters: [debug]
    logs:
      receivers: [otlp]
      exporters: [debug]
`
}
